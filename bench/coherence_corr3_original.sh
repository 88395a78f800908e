#!/bin/bash
# issue 27, corr3 on one H200, the second device call: the harness as it was when the issue was
# filed (the device's repository root is the main tree at 55df353, before the fix; this script and
# the hand-written kernel travel in .dev-oracle/), and the hand-written kernel at larger delays.
#   1. corr3 and its atom form through the pre-fix `fuzzgpu run --json` at 1e9 each under
#      --barrier --spin 3000, --no-barrier, --stride 32, --test-ctas 64
#   2. bench/corr3_hand.py at per-warp delays 3000, 30000, 300000 cycles, 1e9 per kernel and delay
# Run from the repository root as: bash .dev-oracle/bench/coherence_corr3_original.sh (PyCUDA in
# /tmp/site); the caller tars $OUT/orig.
set -u
export PYTHONUNBUFFERED=1
x=$OUT/orig
mkdir -p "$x"
D=.dev-oracle
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; git log -1 --format='%H %s' 2>/dev/null; echo "cmd: bash $D/bench/coherence_corr3_original.sh"; } > "$x/machine.txt" 2>&1
cat "$x/machine.txt"
echo "== 1. the pre-fix harness, 1e9 each"
for t in $D/tests/litmus/gpu/corr3-volatile-relaxed.litmus $D/tests/litmus/gpu/corr3-volatile-relaxed-atom.litmus; do
  for knobs in "--barrier --spin 3000" "--no-barrier" "--stride 32" "--test-ctas 64"; do
    tag=$(basename $t .litmus)_$(echo $knobs | tr -c 'a-z0-9' '_')
    echo "=== $t $knobs"
    PYTHONPATH=/tmp/site timeout 90 python3 -m fuzzgpu run --instances 1e9 $knobs --json $t > "$x/run_$tag.json" 2> "$x/run_$tag.err"
    echo "exit $?"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['instances'], [(o['outcome'], o['count'], o['verdict'], o['count'] % 32) for o in d['outcomes']], 'forbidden', d['forbidden'])" "$x/run_$tag.json" 2>&1
  done
done 2>&1 | tee "$x/original.txt"
echo "== 2. by hand"
(cd $D && timeout 200 python3 bench/corr3_hand.py --instances 1e9 --spins 3000,30000,300000 --out "$x/hand.json") 2>&1 | tee "$x/hand.txt"
echo "== done"
