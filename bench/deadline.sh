#!/usr/bin/env bash
# --time is a deadline (issue 27, item 3): a `--time 60` sim race campaign of the default profile
# must end within 75 s of wall time, whatever its last finding's shrink and fix search cost.
# Usage: bench/deadline.sh [SECONDS] [SEED...]   (default: 60 s; seeds 1 2 3)
# Prints, per seed: the wall time, the CPU time, the exit status and what the deadline cut short.
set -u
T=${1:-60}
shift || true
SEEDS=${*:-1 2 3}
out=$(mktemp -d)
for s in $SEEDS; do
  d="$out/c$s"
  start=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$out/time$s" python3 -m fuzzgpu campaign --property race --backend sim --time "$T" \
      --corpus "$d" --seed "$s" --no-live > "$out/log$s" 2>&1
  rc=$?
  end=$(date +%s.%N)
  cpu=$(tail -1 "$out/time$s" | awk '{print $1 + $2}')
  cut=$(grep -c "^CUT SHORT" "$out/log$s")
  printf 'seed %s: --time %s: wall %.1f s, cpu %.1f s, exit %s, %s step(s) cut short by the deadline; load %s\n' \
      "$s" "$T" "$(echo "$end - $start" | bc)" "$cpu" "$rc" "$cut" "$(cut -d' ' -f1-3 /proc/loadavg)"
  grep "^CUT SHORT" "$out/log$s" | sed 's/^/    /' | cut -c1-200
done
echo "logs and corpora: $out"
