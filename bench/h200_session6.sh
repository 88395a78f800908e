#!/bin/bash
# The GPU runs of session 6 (nvidia-h200: one H200, 16 cores), in device calls:
#
#   bench/h200_session6.sh start    issue 16's 10-minute `proxy` campaign from an empty corpus with
#                                   property race and tuning on (the TMA store without
#                                   fence.proxy.async on the hardware), and issue 15's `all` campaign
#                                   with property model re-run after session 4's two fixes, both 600 s
#                                   in the background, 3 workers each; meanwhile every GPU test
#                                   (`pytest -m gpu`) and the mbarrier.complete_tx litmus tests on
#                                   the GPU; waits ~9.5 minutes                            ~10 minutes
#   bench/h200_session6.sh finish   waits for both campaigns; explain and replay --fixed of the
#                                   proxy corpus, replay of the model corpus; TMA store with and
#                                   without the fence under the tuned stress; harness throughput;
#                                   then issue 17's Ray against local workers (bench/ray_h200.sh,
#                                   SECONDS_PER_RUN=240) in the background                 ~10 minutes
#   bench/h200_session6.sh collect  waits for the Ray comparison and collects it          ~1 minute
#   bench/h200_session6.sh tensor   (a second sitting) bench/tensor_map_probe.py (which forms of the
#                                   1-D tensor map the driver accepts), the GPU tests of cp.async.bulk.tensor and of
#                                   run's stress options; the tensor litmus tests; the campaign's TMA
#                                   store under the stress that found it, fenced 1e9      ~5 minutes
#   bench/h200_session6.sh replay   (the same sitting) replay --fixed of session 6's proxy corpus and
#                                   session 4's race corpus with the corrected fix search, 1e8
#                                   instances each                                        ~5 minutes
#
# Run from the repository root on the GPU machine with wheelhouse/ (PyCUDA and jsonschema wheels for
# cp312) and raybundle/ray-site-cp312.tar.xz carried, and $OUT set; everything comes back in
# $OUT/<part>.tar.gz and on stdout.
set -u
export PYTHONUNBUFFERED=1
part=${1:?usage: bench/h200_session6.sh start|finish|collect|tensor|replay}
R=/tmp/fuzzgpu-session6
mkdir -p "$R" "$OUT"

if [ ! -d /tmp/site/pycuda ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site wheelhouse/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}
F="python3 -m fuzzgpu"
TUNED="--stride 32 --stress 256"   # session 4's `fuzzgpu tune` of TMA-store-no-fence (no barrier, no spin)

case "$part" in
start)
  d=$R/start; mkdir -p "$d"
  { date -u; nvidia-smi; nproc; nvcc --version | tail -2; git log -1 --format='%H %s' 2>/dev/null; } > "$d/machine.txt" 2>&1
  rm -rf "$R/proxy" "$R/model"
  date -u > "$d/campaigns-started.txt"
  setsid bash -c "$F campaign --profile proxy --backend cuda --property race --time 600 --corpus $R/proxy --seed 61 \
      --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/proxy.txt 2>&1; echo \$? > $d/proxy.done" < /dev/null > /dev/null 2>&1 &
  setsid bash -c "$F campaign --profile all --backend cuda --property model --time 600 --corpus $R/model --seed 62 \
      --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json > $d/model.txt 2>&1; echo \$? > $d/model.done" < /dev/null > /dev/null 2>&1 &
  echo "== every GPU test (sharing the GPU with the campaigns)"
  timeout 330 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -q -p no:xdist -p no:cacheprovider -rA tests \
    > "$d/pytest-gpu.txt" 2>&1
  echo "exit $?"; grep -E "^(FAILED|ERROR)|passed|failed" "$d/pytest-gpu.txt" | tail -30
  echo "== mbarrier.complete_tx litmus tests on the GPU (1e7 instances each)"
  for t in tests/litmus/mbarrier-complete-tx/*.litmus; do
    echo "=== $t"; timeout 40 $F run --instances 1e7 --barrier --spin 1000 "$t" 2>&1 | tail -12; echo "exit ${PIPESTATUS[0]}"
  done > "$d/complete-tx.txt" 2>&1
  grep -E "^(===|exit)" "$d/complete-tx.txt"
  while [ $SECONDS -lt 570 ]; do sleep 5; done
  tail -n 3 "$d/proxy.txt" "$d/model.txt"
  tar -C "$R" -czf "$OUT/start.tar.gz" start
  ;;
finish)
  d=$R/start; f=$R/finish; mkdir -p "$f"
  for i in $(seq 1 60); do
    [ -f "$d/proxy.done" ] && [ -f "$d/model.done" ] && break
    sleep 2
  done
  echo "exit status: proxy $(cat $d/proxy.done 2>/dev/null) model $(cat $d/model.done 2>/dev/null) after $SECONDS s"
  grep -A40 "^classes" "$d/proxy.txt" | head -50; grep -A24 "^classes" "$d/model.txt" | head -30
  grep -hE "^(totals|findings|programs|workers|ended|exit status)" "$d/proxy.txt" "$d/model.txt"
  echo "== explain of every proxy finding"
  for e in "$R"/proxy/*.json; do
    [ -f "$e" ] || continue
    case "$(basename "$e")" in known.json|state.json) continue;; esac
    echo "=== $(basename "$e")"; timeout 20 $F explain "$e" 2>&1 | tail -30
  done > "$f/explain-proxy.txt"; grep -c "^===" "$f/explain-proxy.txt"
  echo "== replay --fixed of the proxy findings on the GPU"
  timeout 90 $F replay "$R/proxy" --backend cuda --fixed > "$f/replay-fixed-proxy.txt" 2>&1
  echo "exit $?"; tail -20 "$f/replay-fixed-proxy.txt"
  echo "== replay of the model findings on the GPU"
  timeout 60 $F replay "$R/model" --backend cuda > "$f/replay-model.txt" 2>&1
  echo "exit $?"; tail -20 "$f/replay-model.txt"
  echo "== TMA store under the tuned stress ($TUNED): without the fence 1e8, with it 1e9"
  timeout 60 $F run --instances 1e8 $TUNED tests/litmus/async-proxy/TMA-store-no-fence.litmus > "$f/tma-store-no-fence.txt" 2>&1
  echo "exit $?"; tail -8 "$f/tma-store-no-fence.txt"
  for t in TMA-store-fence-writer TMA-store-fence-issuer; do
    timeout 90 $F run --instances 1e9 $TUNED tests/litmus/async-proxy/$t.litmus > "$f/$t.txt" 2>&1
    echo "$t exit $?"; tail -8 "$f/$t.txt"
  done
  echo "== harness throughput"
  timeout 70 python3 bench/harness.py --out "$f" --name harness-tput-h200.json --sections tput > "$f/harness.txt" 2>&1
  echo "exit $?"; tail -6 "$f/harness.txt"
  tar -C "$R" -czf "$OUT/finish.tar.gz" start finish proxy model
  echo "== Ray: 3 actors on the GPU against --gpus 1 --workers-per-gpu 3, 240 s each (background)"
  mkdir -p "$R/ray"
  setsid bash -c "SECONDS_PER_RUN=240 OUT=$R/ray timeout 560 bash bench/ray_h200.sh > $R/ray/ray.txt 2>&1; echo \$? > $R/ray/ray.done" \
    < /dev/null > /dev/null 2>&1 &
  while [ $SECONDS -lt 575 ]; do sleep 5; done
  tail -5 "$R/ray/ray.txt"
  ;;
collect)
  for i in $(seq 1 150); do [ -f "$R/ray/ray.done" ] && break; sleep 2; done
  echo "ray exit $(cat $R/ray/ray.done 2>/dev/null) after $SECONDS s"; tail -16 "$R/ray/ray.txt"
  tar -C "$R" -czf "$OUT/collect.tar.gz" ray
  ;;
tensor)
  # the second sitting: what the first could not run (the tensor copies and the corrected fix search
  # were built after it)
  x=$OUT/tensor; mkdir -p "$x"   # straight into $OUT: what ran comes back even if the call runs out of time
  { date -u; git log -1 --format='%H %s' 2>/dev/null; } > "$x/machine.txt" 2>&1
  echo "== which forms of the 1-D tensor map the driver accepts (session 7: the first form was refused)"
  timeout 60 python3 bench/tensor_map_probe.py --out "$x" 2>&1 | tee "$x/tensor-map-probe.txt"
  echo "== GPU tests of the new parts: cp.async.bulk.tensor, run's stress options, the generator's one-way fences and cluster/PDL draws"
  timeout 150 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -q -p no:xdist -p no:cacheprovider -rA \
    tests/test_gpu_tensor.py tests/test_run_stress_options.py tests/test_producer_consumer_fences.py \
    tests/test_producer_consumer_cluster.py > "$x/pytest-gpu-new.txt" 2>&1
  echo "exit $?"; grep -E "^(PASSED|FAILED|ERROR|XFAIL|XPASS)|passed|failed" "$x/pytest-gpu-new.txt" | tail -20
  echo "== the tensor litmus tests under the tuned TMA-store stress (1e8 each)"
  for t in tests/litmus/async-proxy/*tensor*.litmus; do
    echo "=== $t"; timeout 25 $F run --instances 1e8 --stress-config strategies/stress/tma-store-tuned.toml "$t" 2>&1 | tail -9; echo "exit ${PIPESTATUS[0]}"
  done > "$x/tensor-runs.txt" 2>&1; grep -E '^(===|exit|Observation)' "$x/tensor-runs.txt"
  echo "== the campaign's TMA store (same thread) under the stress that found it: no fence 1e8, fence 1e9"
  C=strategies/stress/tma-store-campaign-h200.toml
  timeout 40 $F run --instances 1e8 --stress-config $C tests/litmus/async-proxy/TMA-store-same-thread-no-fence.litmus > "$x/same-thread-no-fence.txt" 2>&1
  echo "exit $?"; grep -E '^(Observation|Instances)' "$x/same-thread-no-fence.txt"
  timeout 80 $F run --instances 1e9 --stress-config $C tests/litmus/async-proxy/TMA-store-same-thread-fence.litmus > "$x/same-thread-fence.txt" 2>&1
  echo "exit $?"; grep -E '^(Observation|Instances)' "$x/same-thread-fence.txt"
  ;;
replay)
  # the second call of the second sitting: the corrected fix search's fixes on the hardware
  x=$OUT/replay; mkdir -p "$x"
  { date -u; git log -1 --format='%H %s' 2>/dev/null; } > "$x/machine.txt" 2>&1
  echo "== replay --fixed of session 6's proxy corpus (corrected fix reading), 1e8 instances each"
  rm -rf "$R/proxy6" && cp -r bench/results/campaign-h200-session6/proxy-corpus "$R/proxy6"
  timeout 120 $F replay "$R/proxy6" --backend cuda --fixed --instances 1e8 > "$x/replay-fixed-proxy.txt" 2>&1
  echo "exit $?"; tail -5 "$x/replay-fixed-proxy.txt"
  echo "== replay --fixed of session 4's race corpus with this code's fix search"
  rm -rf "$R/race4" && cp -r bench/results/campaign-h200-session4/race-corpus "$R/race4"
  timeout 400 $F replay "$R/race4" --backend cuda --fixed --instances 1e8 > "$x/replay-fixed-race4.txt" 2>&1
  echo "exit $?"; tail -17 "$x/replay-fixed-race4.txt"
  ;;
*)
  echo "unknown part $part" >&2; exit 2 ;;
esac
