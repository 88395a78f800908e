#!/bin/bash
# The GPU runs of one device session (nvidia-h200: one H200, 16 cores), in three calls:
#
#   bench/h200_session.sh part1   GPU tests under pytest-xdist (the GPU fault tests of #8), the
#                                 Table-1 probe (#5), programs/hour with 1 and 6 workers on the GPU
#                                 (#6)                                                   ~7 minutes
#   bench/h200_session.sh part2   two 10-minute campaigns at once in the background, sharing the GPU:
#                                 classic/model (#6) and reliability with injected GPU faults (#8);
#                                 waits ~9.5 minutes, then snapshots their logs
#   bench/h200_session.sh part3   waits for both campaigns to end, collects reports and corpora
#   bench/h200_session.sh part5   the GPU tests, the harness sections, a 2-minute pdl campaign
#                                 (the latest harness figures)                           ~3 minutes
#
# Run from the repository root on the GPU machine, with wheelhouse/ (PyCUDA, see README) carried
# and $OUT set; everything comes back in $OUT/<part>.tar.gz plus a summary on stdout.
set -u
export PYTHONUNBUFFERED=1
part=${1:?usage: bench/h200_session.sh part1|part2|part3}
R=/tmp/fuzzgpu-session
mkdir -p "$R" "$OUT"

if [ ! -d /tmp/site/pycuda ]; then
  python3 -m pip install -q --no-index --find-links wheelhouse --target /tmp/site pycuda || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}

case "$part" in
part1)
  d=$R/part1; mkdir -p "$d"
  { date -u; nvidia-smi; nproc; nvcc --version | tail -2; } > "$d/machine.txt" 2>&1
  echo "== pytest -m gpu (the plugin named with -p: it is not pip-installed there, so no pytest11 entry point)"
  timeout 200 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -n auto --fuzzgpu-backend cuda -rP -q -p no:cacheprovider \
    tests/test_gpu.py tests/test_gpu_faults.py > "$d/pytest-gpu.txt" 2>&1
  tail -3 "$d/pytest-gpu.txt"
  echo "== Table 1 probe (GPU 0)"
  CUDA_VISIBLE_DEVICES=0 timeout 190 python3 bench/table1_probe.py --out "$d" > "$d/table1-probe.txt" 2>&1
  tail -40 "$d/table1-probe.txt"
  echo "== programs/hour, 1 and 6 workers on the GPU"
  timeout 260 python3 bench/campaign.py --backends cuda --scaling 1x1,1x6 --time 90 \
    --out "$d/campaign-scaling.json" > "$d/campaign-scaling.txt" 2>&1
  tail -15 "$d/campaign-scaling.txt"
  tar -C "$R" -czf "$OUT/part1.tar.gz" part1
  ;;
part2)
  d=$R/part2; mkdir -p "$d"
  rm -rf "$R/classic" "$R/reliability"
  date -u > "$d/started.txt"
  # issue #6: 10 minutes, classic shapes, property model (6 workers: compile overlaps runs)
  setsid bash -c "python3 -m fuzzgpu campaign --profile classic --backend cuda --property model --time 600 \
      --corpus $R/classic --seed 7 --no-live --gpus 1 --workers-per-gpu 6 > $d/classic.txt 2>&1; date -u > $d/classic.done" &
  # issue #8: 10 minutes, bounded waits that may hang, plus injected traps, illegal addresses and
  # unbounded hangs, on the same GPU (a hung or faulting context must not stop the other campaign)
  setsid bash -c "python3 -m fuzzgpu campaign --profile reliability --backend cuda --property model --time 600 \
      --corpus $R/reliability --seed 8 --no-live --gpus 1 --workers-per-gpu 3 --watchdog 10 \
      --gpu-fault trap:0.03,illegal-address:0.03,hang:0.02 > $d/reliability.txt 2>&1; date -u > $d/reliability.done" &
  sleep 565
  tail -5 "$d/classic.txt" "$d/reliability.txt"
  tar -C "$R" -czf "$OUT/part2.tar.gz" part2
  ;;
part3)
  d=$R/part2
  for i in $(seq 1 110); do
    [ -f "$d/classic.done" ] && [ -f "$d/reliability.done" ] && break
    sleep 2
  done
  ls "$d"
  tail -25 "$d/classic.txt"; tail -40 "$d/reliability.txt"
  tar -C "$R" -czf "$OUT/part3.tar.gz" part2 classic reliability
  ;;
part5)
  # the harness sections (Table 1 in the default launch mode and in the graph mode), the GPU tests
  # (bench/results/harness-h200.md, pytest-gpu-h200.txt)
  d=$R/part5; mkdir -p "$d"
  timeout 200 python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -n 4 -rA -q -p no:cacheprovider \
    tests/test_gpu.py tests/test_gpu_faults.py > "$d/pytest-gpu.txt" 2>&1
  tail -4 "$d/pytest-gpu.txt"
  timeout 200 python3 bench/harness.py --out "$d" --name harness-h200.json \
    --sections tput,table1,zero,scope,place,pdl --table1-variants default,graph > "$d/harness.txt" 2>&1
  grep "^## Weak" "$d/harness.txt"
  # issue #6: the PDL + .nc stale read from an empty corpus with this harness (4 workers)
  timeout 170 python3 -m fuzzgpu campaign --profile pdl --backend cuda --property sc --time 120 \
    --corpus "$d/pdl" --seed 3 --no-live --gpus 1 --workers-per-gpu 4 > "$d/pdl.txt" 2>&1
  grep -A12 "^findings:" "$d/pdl.txt" | head -14
  tar -C "$R" -czf "$OUT/part5.tar.gz" part5
  ;;
*)
  echo "unknown part $part" >&2; exit 2 ;;
esac
