#!/bin/bash
# issue 27, corr3 on one H200 (nvidia-h200), one device call: everything under $OUT, tarred.
#   1. the harness as it was (every repeated load through address + k*fz_zero), corr3 at 1e9 with
#      the provenance log (bench/corr3_before.py)
#   2. the fixed harness: corr3 and its atom form through `fuzzgpu run --json` at 1e9 each under
#      --barrier --spin 3000, --no-barrier, --stride 32, --test-ctas 64
#   3. the hand-written kernel outside the harness (bench/corr3_hand.cu + .py, CuPy), 1e9 per form
#   4. tests/codegen/test_repeated_loads.py (its gpu test too) and every catalogue test with a repeated load
#      (bench/repeated_loads.py --list) at 1e8 under --barrier --spin 3000
# Run from the repository root (PyCUDA wheels in wheelhouse/ installed to /tmp/site by the caller); the
# caller tars $OUT/corr3 (the device returns at most 8 files).
set -u
export PYTHONUNBUFFERED=1
x=$OUT/corr3
mkdir -p "$x"
F="python3 -m fuzzgpu"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; git log -1 --format='%H %s' 2>/dev/null; echo "cmd: bash bench/coherence_corr3.sh"; } > "$x/machine.txt" 2>&1
cat "$x/machine.txt"
C=tests/litmus/gpu/corr3-volatile-relaxed.litmus
A=tests/litmus/gpu/corr3-volatile-relaxed-atom.litmus
echo "== 1. before the fix, with provenance"
timeout 120 python3 bench/corr3_before.py $C --instances 1e9 --barrier --spin 3000 --out "$x/before-corr3.json" 2>&1 | tee "$x/before.txt"
timeout 60 python3 bench/corr3_before.py $A --instances 1e9 --barrier --spin 3000 --out "$x/before-atom.json" 2>&1 | tee -a "$x/before.txt"
echo "== 2. the fixed harness, 1e9 each"
for t in $C $A; do
  for knobs in "--barrier --spin 3000" "--no-barrier" "--stride 32" "--test-ctas 64"; do
    tag=$(basename $t .litmus)_$(echo $knobs | tr -c 'a-z0-9' '_')
    echo "=== $t $knobs"
    timeout 90 $F run --instances 1e9 $knobs --json $t > "$x/run_$tag.json" 2> "$x/run_$tag.err"
    echo "exit $?"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['instances'], [(o['outcome'], o['count'], o['verdict']) for o in d['outcomes']], 'forbidden', d['forbidden'], 'prov', d['meta'].get('provenance', {}).get('seen'))" "$x/run_$tag.json" 2>&1
  done
done 2>&1 | tee "$x/fixed.txt"
echo "== 3. by hand"
timeout 150 python3 bench/corr3_hand.py --instances 1e9 --spin 3000 --out "$x/hand.json" 2>&1 | tee "$x/hand.txt"
echo "== 4. tests"
FUZZGPU_REQUIRE_GPU=1 timeout 120 python3 -m pytest -p fuzzgpu.pytest_plugin -q -p no:cacheprovider -rA tests/codegen/test_repeated_loads.py > "$x/pytest.txt" 2>&1
echo "exit $?"; tail -4 "$x/pytest.txt"
for t in $(python3 bench/repeated_loads.py --list); do
  echo "=== $t"; timeout 60 $F run --instances 1e8 --barrier --spin 3000 $t 2>&1 | grep -v "^Stress\|^Instances"; echo "exit ${PIPESTATUS[0]}"
done > "$x/catalogue.txt" 2>&1
grep -E "^(===|exit)|FORBIDDEN|forbidden" "$x/catalogue.txt" | grep -B1 -A0 "FORBIDDEN\|exit [^0]" | head -30
echo "== done"
