#!/bin/bash
# Logging shims for nvcc and nvdisasm (issue 29: where a campaign's compiler CPU goes): each call appends
# one line to LOG -- the tool, the kind of module (harness: fuzzgpu's GPU harness, with fz_stress;
# static: the static SASS check's kernels), the kernels in it (nvdisasm: the cubin's bytes), wall, user
# and system seconds (the tool and its children: cicc, ptxas, gcc), then the programs in it (a harness:
# its distinct fzh_<i>_ kernel prefixes, one per program, a kernel per grid; else 0), the calling
# process's id and the call's start (Unix seconds) -- and runs the real tool unchanged (its exit status
# is the shim's; a failed call is logged like any other).
#
#   bash bench/tool_shims.sh DIR LOG && export PATH=DIR:$PATH      # then run the campaign (PYTHON=: the
#                                                                  # interpreter with fuzzgpu, default python3)
#   python3 bench/tool_log.py LOG                                  # the summary
set -u
dir=$1 log=$2
mkdir -p "$dir"
for tool in nvcc nvdisasm; do
  # where fuzzgpu finds it (PATH, the nvidia wheels, the toolkit), before DIR is on PATH
  real=$("${PYTHON:-python3}" -c "from fuzzgpu.sass.toolchain import find_tool; print(find_tool('$tool') or '')")
  [ -n "$real" ] || { echo "no $tool" >&2; exit 3; }
  {
    echo '#!/bin/bash'
    echo 'src="${@: -1}"; kind=other; n=0; progs=0; t0=$(date +%s.%N)'
    if [ "$tool" = nvcc ]; then
      echo 'if [ -f "$src" ]; then n=$(grep -c "__global__" "$src"); if grep -q fz_stress "$src"; then kind=harness'
      echo '  progs=$(grep "__global__" "$src" | grep -o "fzh_[0-9]*_" | sort -u | wc -l); else kind=static; fi; fi'
    else
      echo 'kind=static; n=$(stat -c %s "$src" 2>/dev/null || echo 0)'
    fi
    echo 'exec 3>&2'
    echo "TIMEFORMAT=\"$tool \$kind \$n %R %U %S \$progs \$PPID \$t0\""
    # the tool's and the log's paths quoted for the shell (%q): a path with a quote or a $ stays a path
    printf '{ time %q "$@" 2>&3 ; } 2>> %q\n' "$real" "$log"
  } > "$dir/$tool"
  chmod +x "$dir/$tool"
done
