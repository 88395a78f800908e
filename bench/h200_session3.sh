#!/bin/bash
# The GPU runs of session 3 (nvidia-h200: one H200, 16 cores), in three device calls:
#
#   bench/h200_session3.sh tests   the GPU tests (harness value encoding under RMW arithmetic,
#                                  GPU faults, the rest of tests/test_gpu*.py) and the harness
#                                  throughput section                                   ~5 minutes
#   bench/h200_session3.sh start   issue 12's two 10-minute campaigns at once in the background,
#                                  sharing the GPU, 3 workers each: random/model and pdl/sc; waits
#                                  ~9.5 minutes, then snapshots their logs
#   bench/h200_session3.sh finish  waits for both campaigns to end, collects reports and corpora
#   bench/h200_session3.sh cluster the cluster GPU tests and runs of issue 18 (DSM, cluster barriers,
#                                  remote mbarrier arrives)                             ~4 minutes
#
# Run from the repository root on the GPU machine, with wheelhouse/ carried (PyCUDA and jsonschema
# wheels for cp312) and $OUT set; everything comes back in $OUT/<part>.tar.gz and on stdout.
set -u
export PYTHONUNBUFFERED=1
part=${1:?usage: bench/h200_session3.sh tests|start|finish}
R=/tmp/fuzzgpu-session3
mkdir -p "$R" "$OUT"

if [ ! -d /tmp/site/pycuda ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site wheelhouse/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}

case "$part" in
tests)
  d=$R/tests; mkdir -p "$d"
  { date -u; nvidia-smi; nproc; nvcc --version | tail -2; } > "$d/machine.txt" 2>&1
  echo "== pytest -m gpu"
  timeout 300 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -n 4 --fuzzgpu-backend cuda -rA -q -p no:cacheprovider \
    tests/ > "$d/pytest-gpu.txt" 2>&1
  grep -E "^(PASSED|FAILED|ERROR|XFAIL|SKIPPED)|passed|failed" "$d/pytest-gpu.txt" | tail -40
  echo "== harness throughput"
  timeout 150 python3 bench/harness.py --out "$d" --name harness-tput-h200.json --sections tput > "$d/harness.txt" 2>&1
  tail -12 "$d/harness.txt"
  tar -C "$R" -czf "$OUT/tests.tar.gz" tests
  ;;
start)
  d=$R/campaigns; mkdir -p "$d"
  rm -rf "$R/random" "$R/pdl"
  date -u > "$d/started.txt"
  # issue 12: the random profile with property model: no finding that a decoding error explains
  setsid bash -c "python3 -m fuzzgpu campaign --profile random --backend cuda --property model --time 600 \
      --corpus $R/random --seed 12 --no-live --gpus 1 --workers-per-gpu 3 > $d/random.txt 2>&1; echo \$? > $d/random.done" &
  # issue 12: pdl with property sc and 3 workers ran into the out-of-range rate and died after 177 s
  setsid bash -c "python3 -m fuzzgpu campaign --profile pdl --backend cuda --property sc --time 600 \
      --corpus $R/pdl --seed 13 --no-live --gpus 1 --workers-per-gpu 3 > $d/pdl.txt 2>&1; echo \$? > $d/pdl.done" &
  sleep 570
  tail -5 "$d/random.txt" "$d/pdl.txt"
  tar -C "$R" -czf "$OUT/start.tar.gz" campaigns
  ;;
finish)
  d=$R/campaigns
  for i in $(seq 1 150); do
    [ -f "$d/random.done" ] && [ -f "$d/pdl.done" ] && break
    sleep 2
  done
  echo "exit status: random $(cat $d/random.done 2>/dev/null) pdl $(cat $d/pdl.done 2>/dev/null)"
  tail -40 "$d/random.txt"; tail -40 "$d/pdl.txt"
  tar -C "$R" -czf "$OUT/finish.tar.gz" campaigns random pdl
  ;;
short15)
  # issue 15 again after the Unrunnable pickling fix, as long as the device time left allows
  d=$R/short; mkdir -p "$d"; rm -rf "$R/race2" "$R/model2"
  python3 -m fuzzgpu campaign --profile all --backend cuda --property race --time 150 \
      --corpus $R/race2 --seed 17 --no-live --gpus 1 --workers-per-gpu 3 > $d/race.txt 2>&1 &
  python3 -m fuzzgpu campaign --profile all --backend cuda --property model --time 150 \
      --corpus $R/model2 --seed 18 --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/model.txt 2>&1 &
  wait
  grep -B2 -A30 "^classes" "$d/race.txt" | head -50; grep -A12 "^classes" "$d/model.txt" | head -20
  grep -E "^(totals|findings|workers|ended)" "$d/race.txt" "$d/model.txt"
  timeout 40 python3 -m fuzzgpu replay "$R/race2" --backend cuda --fixed > "$d/replay-fixed.txt" 2>&1
  echo "replay exit $?"; tail -14 "$d/replay-fixed.txt"
  tar -C "$R" -czf "$OUT/short15.tar.gz" short race2 model2
  ;;
start15)
  # issue 15: the general generator from an empty corpus, property race and property model, at once
  d=$R/disc; mkdir -p "$d"; rm -rf "$R/race" "$R/model"
  date -u > "$d/started.txt"
  setsid bash -c "python3 -m fuzzgpu campaign --profile all --backend cuda --property race --time 600 \
      --corpus $R/race --seed 15 --no-live --gpus 1 --workers-per-gpu 3 > $d/race.txt 2>&1; echo \$? > $d/race.done" &
  setsid bash -c "python3 -m fuzzgpu campaign --profile all --backend cuda --property model --time 600 \
      --corpus $R/model --seed 16 --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/model.txt 2>&1; echo \$? > $d/model.done" &
  sleep 575
  tar -C "$R" -czf "$OUT/start15.tar.gz" disc
  ;;
finish15)
  d=$R/disc
  for i in $(seq 1 150); do
    [ -f "$d/race.done" ] && [ -f "$d/model.done" ] && break
    sleep 2
  done
  echo "exit status: race $(cat $d/race.done 2>/dev/null) model $(cat $d/model.done 2>/dev/null)"
  grep -A40 "^classes" "$d/race.txt" | head -60; grep -A20 "^classes" "$d/model.txt" | head -30
  echo "== replay --fixed of the race findings on the GPU"
  timeout 200 python3 -m fuzzgpu replay "$R/race" --backend cuda --fixed > "$d/replay-fixed.txt" 2>&1
  echo "exit $?"; tail -40 "$d/replay-fixed.txt"
  tar -C "$R" -czf "$OUT/finish15.tar.gz" disc race model
  ;;
cluster)
  # issue 18: distributed shared memory and cluster barriers on the H200
  d=$R/cluster; mkdir -p "$d"
  timeout 200 python3 -m pytest -p fuzzgpu.pytest_plugin -q -s -p no:xdist -p no:cacheprovider -rA \
    tests/test_gpu_cluster.py > "$d/pytest-gpu-cluster.txt" 2>&1
  grep -E "^(PASSED|FAILED|ERROR)|passed|failed|rate|stale" "$d/pytest-gpu-cluster.txt" | tail -30
  for t in dsm/DSM-MP-relacq-cluster dsm/DSM-MP-relacq-cta dsm/DSM-MP-fence-acqrel-cluster dsm/DSM-MP-fence-acqrel-cta \
           cluster-barrier/CB-MP-release cluster-barrier/CB-MP-relaxed-both mbarrier-cluster/RMB-MP-release-cluster-acquire-cluster; do
    n=$([ "${t#dsm/DSM-MP-relacq-cluster}" = "" ] && echo 1e9 || echo 2e8)
    echo "== fuzzgpu run $t --instances $n --barrier --spin 1000"
    timeout 120 python3 -m fuzzgpu run "tests/litmus/$t.litmus" --instances $n --barrier --spin 1000 > "$d/$(basename $t).txt" 2>&1
    echo "exit $?"; grep -vE "^\s*$" "$d/$(basename $t).txt" | tail -8
  done
  tar -C "$R" -czf "$OUT/cluster.tar.gz" cluster
  ;;
*)
  echo "unknown part $part" >&2; exit 2 ;;
esac
