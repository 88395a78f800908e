#!/bin/bash
# The GPU runs of session 4 (nvidia-h200: one H200, 16 cores), in three device calls:
#
#   bench/h200_session4.sh start    a smoke test of the new harness parts (the stress knobs through
#                                   `fuzzgpu tune`, the wgmma mapping self-check), then issue 15's two
#                                   600 s campaigns from empty corpora at once in the background,
#                                   sharing the GPU, 3 workers each: profile all with property race
#                                   (tuning on: issue 16's TMA store without fence.proxy.async) and
#                                   with property model; waits ~9 minutes                ~10 minutes
#   bench/h200_session4.sh finish   waits for both to end; explain of every race finding, replay
#                                   --fixed of the race corpus on the GPU; issue 16's weak-behaviour
#                                   score (bench/exposure.py: default against tuned stress, one run),
#                                   the wgmma operands (bench/wgmma_h200.py), harness throughput   ~10 minutes
#   bench/h200_session4.sh extra    programs/hour of profile all next to the templated profiles; the
#                                   GPU tests of the new parts; issue 17's Ray against local workers
#                                   (bench/ray_h200.sh)                                   ~6 minutes
#   bench/h200_session4.sh final    the weak-behaviour score with its deep pass; Ray against local
#                                   workers over 100 s runs                                ~8 minutes
#
# Run from the repository root on the GPU machine with wheelhouse/ (PyCUDA and jsonschema wheels for
# cp312) and, for `extra`, raybundle/ray-site-cp312.tar.xz carried, and $OUT set; everything comes
# back in $OUT/<part>.tar.gz and on stdout.
set -u
export PYTHONUNBUFFERED=1
part=${1:?usage: bench/h200_session4.sh start|finish|extra|final}
R=/tmp/fuzzgpu-session4
mkdir -p "$R" "$OUT"

if [ ! -d /tmp/site/pycuda ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site wheelhouse/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}
F="python3 -m fuzzgpu"

case "$part" in
start)
  d=$R/start; mkdir -p "$d"
  { date -u; nvidia-smi; nproc; nvcc --version | tail -2; git log -1 --format='%H %s' 2>/dev/null; } > "$d/machine.txt" 2>&1
  echo "== smoke: fuzzgpu tune (the new stress knobs on the hardware)"
  timeout 60 $F tune tests/litmus/async-proxy/TMA-store-no-fence.litmus --budget 12 --out "$d/tma-store-tuned.toml" \
    > "$d/tune-tma-store.txt" 2>&1; echo "exit $?"; tail -12 "$d/tune-tma-store.txt"
  echo "== smoke: the wgmma mapping self-check"
  timeout 60 python3 -c "
from fuzzgpu.backends.cuda import CudaBackend
from fuzzgpu.backends.wgmma_selftest import run_selftest
ok, n = run_selftest(CudaBackend()); print(f'wgmma self-check: {ok}/{n} slots returned their own word')" 2>&1 | tail -3
  rm -rf "$R/race" "$R/model"
  # (the campaigns' own stdout/stderr are detached: the first run of this part kept the device
  # call's output pipe open through them and ran into the call's time limit)
  date -u > "$d/campaigns-started.txt"
  setsid bash -c "$F campaign --profile all --backend cuda --property race --time 600 --corpus $R/race --seed 41 \
      --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/race.txt 2>&1; echo \$? > $d/race.done" < /dev/null > /dev/null 2>&1 &
  setsid bash -c "$F campaign --profile all --backend cuda --property model --time 600 --corpus $R/model --seed 42 \
      --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/model.txt 2>&1; echo \$? > $d/model.done" < /dev/null > /dev/null 2>&1 &
  while [ $SECONDS -lt 575 ]; do sleep 5; done
  tail -3 "$d/race.txt" "$d/model.txt"
  tar -C "$R" -czf "$OUT/start.tar.gz" start
  ;;
finish)
  d=$R/start; f=$R/finish; mkdir -p "$f"
  for i in $(seq 1 60); do
    [ -f "$d/race.done" ] && [ -f "$d/model.done" ] && break
    sleep 2
  done
  echo "exit status: race $(cat $d/race.done 2>/dev/null) model $(cat $d/model.done 2>/dev/null) after $SECONDS s"
  grep -A40 "^classes" "$d/race.txt" | head -50; grep -A20 "^classes" "$d/model.txt" | head -24
  grep -hE "^(totals|findings|programs|workers|ended|exit status)" "$d/race.txt" "$d/model.txt"
  echo "== explain of every race finding"
  for e in "$R"/race/*.json; do
    [ -f "$e" ] || continue
    case "$(basename "$e")" in known.json) continue;; esac
    echo "=== $(basename "$e")"; timeout 20 $F explain "$e" 2>&1 | tail -30
  done > "$f/explain-race.txt"; grep -c "^===" "$f/explain-race.txt"
  echo "== replay --fixed of the race findings on the GPU"
  timeout 100 $F replay "$R/race" --backend cuda --fixed > "$f/replay-fixed-race.txt" 2>&1
  echo "exit $?"; tail -25 "$f/replay-fixed-race.txt"
  echo "== weak-behaviour score (bench/exposure.py)"
  timeout 215 python3 bench/exposure.py --budget-s 180 --out "$f/exposure" > "$f/exposure.txt" 2>&1
  echo "exit $?"; tail -30 "$f/exposure.txt"
  echo "== wgmma operands written by generic stores (bench/wgmma_h200.py)"
  timeout 75 python3 bench/wgmma_h200.py --out "$f/wgmma" --seconds 40 > "$f/wgmma.txt" 2>&1
  echo "exit $?"; tail -20 "$f/wgmma.txt"
  echo "== harness throughput"
  timeout 70 python3 bench/harness.py --out "$f" --name harness-tput-h200.json --sections tput > "$f/harness.txt" 2>&1
  echo "exit $?"; tail -8 "$f/harness.txt"
  tar -C "$R" -czf "$OUT/finish.tar.gz" start finish race model
  ;;
extra)
  x=$R/extra; mkdir -p "$x"
  echo "== programs/hour per profile (25 s each, 3 workers, property model, alone on the GPU)"
  for p in all classic pdl proxy mbarrier; do
    rm -rf "$R/pph-$p"
    timeout 60 $F campaign --profile $p --backend cuda --property model --time 25 --corpus "$R/pph-$p" --seed 5 \
      --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > "$x/pph-$p.txt" 2>&1
    echo "$p exit $?: $(grep -E '^\[' "$x/pph-$p.txt" | tail -1)"
  done
  echo "== GPU tests of the new parts"
  timeout 130 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -q -p no:xdist -p no:cacheprovider -rA \
    tests/test_gpu_wgmma.py tests/test_tune_cli.py tests/test_exposure_gpu.py tests/test_gpu.py \
    $(ls tests/test_gpu_generator*.py tests/test_producer_consumer_gpu*.py 2>/dev/null) > "$x/pytest-gpu.txt" 2>&1
  grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$x/pytest-gpu.txt" | tail -30
  echo "== Ray: 3 actors on the GPU against --gpus 1 --workers-per-gpu 3"
  SECONDS_PER_RUN=70 OUT="$x/ray" timeout 220 bash bench/ray_h200.sh > "$x/ray.txt" 2>&1
  echo "exit $?"; tail -12 "$x/ray.txt"
  tar -C "$R" -czf "$OUT/extra.tar.gz" extra
  ;;
final)
  # the last device minutes: the weak-behaviour score again with its deep pass (each program with a
  # mutant neither pass saw: up to 2 GPU-s of tuned stress), and Ray against local workers over
  # longer runs (the 70 s pair of `extra` was 0.91 over campaign time, 0.83 over wall time)
  x=$R/final; mkdir -p "$x"
  echo "== weak-behaviour score with the deep pass"
  timeout 190 python3 bench/exposure.py --budget-s 165 --deep-gpu-s 2 --out "$x/exposure" > "$x/exposure.txt" 2>&1
  echo "exit $?"; tail -3 "$x/exposure.txt"
  echo "== GPU test of the generator's cluster and PDL draws"
  timeout 70 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -q -p no:xdist -p no:cacheprovider -rA \
    tests/test_producer_consumer_cluster.py > "$x/pytest-gpu-generator.txt" 2>&1
  grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$x/pytest-gpu-generator.txt" | tail -8
  echo "== Ray: 3 actors on the GPU against --gpus 1 --workers-per-gpu 3, 100 s each"
  SECONDS_PER_RUN=100 OUT="$x/ray" timeout 280 bash bench/ray_h200.sh > "$x/ray.txt" 2>&1
  echo "exit $?"; tail -14 "$x/ray.txt"
  tar -C "$R" -czf "$OUT/final.tar.gz" final
  ;;
*)
  echo "unknown part $part" >&2; exit 2 ;;
esac
