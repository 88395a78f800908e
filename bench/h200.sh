#!/bin/bash
# The GPU measurements behind the README's "Measured" table, one part per call (each fits in one
# 10-minute call of the device tool on one H200, 16 cores); results are filed by topic in
# bench/results/<topic>/ (bench/results/README.md says which page each part's figures went to).
#
#   bench/h200.sh tests      every GPU test (FUZZGPU_REQUIRE_GPU=1), then harness throughput      ~8 min
#   bench/h200.sh plugin     the pytest plugin on the GPU (tests/gpu/test_gpu_plugin.py: --fuzzgpu-backend cuda, the
#                            shipped corpus replayed and a user's fuzzgpu_run test)                      ~2 min
#   bench/h200.sh harness    bench/harness.py: throughput, Table-1 weak rates (default and graph
#                            launch), forbidden-never-seen, scope, placement, PDL + .nc  -> harness/    ~3 min
#   bench/h200.sh probe      bench/table1_probe.py: the reference probe's method beside our harness ~3 min
#   bench/h200.sh cluster    the cluster GPU tests; DSM, cluster-barrier and remote-mbarrier litmus
#                            tests on the GPU (1e9 / 2e8 instances)                 -> harness/    ~4 min
#   bench/h200.sh wgmma      bench/wgmma_h200.py: wgmma operands written by generic stores -> harness/ ~1 min
#   bench/h200.sh tensor     bench/tensor_map_probe.py, tests/gpu/test_gpu_tensor.py, the tensor litmus
#                            tests under the tuned TMA-store stress (1e8 each)       -> tensor/     ~3 min
#   bench/h200.sh tensormap  class D: tests/gpu/test_gpu_tensormap.py (the race-tensormap catalogue and its
#                            two-CTA GPU forms, 1e8 instances each), tests/gpu/test_gpu_tensor.py -> tensormap/ ~4 min
#   bench/h200.sh draws      the generator's tensor copies judged as a campaign judges them
#                            (bench/tensor_draws.py run), docs/tuning.md's two examples -> tensor/  ~3 min
#   bench/h200.sh exposure   the weak-behaviour score, default against tuned stress, with the deep
#                            pass (bench/exposure.py)                               -> tuning/     ~3 min
#   bench/h200.sh scaling    programs/hour with 1 and 6 workers on the GPU (bench/campaign.py) -> campaigns/ ~4 min
#   bench/h200.sh campaigns  a proxy (race) and an all (model) campaign from empty corpora, side by
#                            side, $TIME s each (default 270); explain of every finding -> campaigns/ ~6 min
#   bench/h200.sh faults     profile reliability with injected GPU faults (trap, illegal address,
#                            hang), $TIME s (default 270), and campaign --in-process with a trap -> campaigns/ ~7 min
#   bench/h200.sh replay     replay --fixed of the stored H200 race and proxy corpora, 1e8 instances
#                            each                                                   -> campaigns/  ~7 min
#   bench/h200.sh all-race   the profile `all` with the race property from an empty corpus, $TIME s
#                            (default 270), 8 workers on the GPU; its report (markdown, HTML, plots);
#                            every saved entry's SASS finding re-checked by `fuzzgpu sass --details`;
#                            the shipped corpus replayed on the GPU with JUnit XML  -> campaigns/ TIME+2 min
#                            (X=DIR, a new or empty folder, writes there instead of $OUT/all-race: a campaign longer than one
#                            call runs under setsid and a second call collects DIR once DIR.done exists: see the end)
#   bench/h200.sh necessity  `fuzzgpu necessity --backend cuda` over examples/necessity (the eleven programs
#                            shaped after issue 32's field bugs): every annotation dropped or weakened
#                            alone, each changed program run 1e8 times (barrier, spin 1000), .txt and
#                            .json per program                                      -> necessity/  ~5 min
#   bench/h200.sh throughput bench/stages.py with the harness runs (CPU ms per stage), then profile all,
#                            property race, $TIME s (TIME=600 for issue 29's figure), W (default 8)
#                            workers on the GPU: programs/h, instances/program, GPU busy share
#                            (CUDA events; NVML utilisation beside it), share of programs judged
#                            while shrinking (bench/throughput.py)                  -> throughput/ TIME+5 min
#                            (STAGES=0 skips the stage profile; KNOWN=FILE passes --known; CTX=shared|per-worker
#                            passes --gpu-context (default: the campaign's, per-worker); POOL=0 passes --no-static-pool, POOL=1
#                            --static-pool (default: the campaign's, on from 4 workers); WINDOW=S passes --static-pool-window S
#                            (the workers' static checks in one pool process; its counters: corpus/.fuzzgpu/static-pool.json); CLASSES=1 adds
#                            the bug classes found (bench/discovery_classes.py) and each entry's SASS;
#                            the CPU seconds of the campaign's every process go to cpu.json, split by
#                            process (workers, backends, their nvcc/nvdisasm) to cpu-split.json; TOOLLOG=1
#                            logs each nvcc/nvdisasm call (bench/tool_shims.sh) -> tools.json; PROFILE=w0
#                            cProfiles that worker and its backend: where its wall time goes,
#                            bench/worker_split.py -> worker-split.json; GCCLOCK=1 clocks each worker's garbage
#                            collector -> throughput.json's gc_clock;
#                            with GCTHRESH=A,B,C the workers run at those thresholds instead of the campaign's)
#   bench/h200.sh gcab       the collector's thresholds in GPU campaigns: the ab part below with A the campaign's
#                            thresholds (fuzzgpu.campaign.limits.GC_THRESHOLDS) and B Python's (700, 10, 10), sided by
#                            the thresholds the clock saw (gc-ab.json, gc-ab.md; runs.tar.gz) -> throughput/gc/
#   bench/h200.sh ab         two values of one setting of the throughput part side by side: A and B, each VAR=value
#                            of the same VAR, W, WINDOW or GCTHRESH (e.g. A="WINDOW=0.5" B="WINDOW=0.25"); PAIRS
#                            (default 2) pairs of AB_TIME s campaigns (default 100), W workers (default 20) unless
#                            VAR is W, the order alternating pair by pair, each from an empty compile cache, with the
#                            collector's clock; bench/gc_ab.py sides each run by what its throughput.json recorded
#                            (workers, static_pool.window_s, the clock's thresholds) and refuses one side
#                            -> ab.json, ab.md; runs.tar.gz                           -> throughput/ PAIRS*2*(AB_TIME+25) s
#   bench/h200.sh mayhang    bench/may_hang_budget.py: the may-hang programs of a campaign's draws at the spin budgets
#                            100,000 and SHORT_BUDGET (GPU s, timeouts, what a race shows); the harness
#                            throughput; the stress knobs' GPU tests                  -> throughput/ ~5 min
#   bench/h200.sh runcost    the context flag's GPU test, then bench/run_cost.py: CPU, wall and GPU ms per
#                            harness run with 1, 8 and 14 processes on the GPU, the CUDA context's
#                            scheduling auto (spins) against blocking, test_ctas 256 and 1024 -> throughput/ ~2 min
#   bench/h200.sh anchor     fuzzgpu beside cuda-litmus's own runner on its variants (bench/anchor.py; carry
#                            the artifact's files as SRC=DIR, default cuda-litmus/: no licence, never
#                            committed), a seeded sample per family (SEEN, FORB; -1: all), GPU_S per variant per
#                            tool; FAMILIES=a,b runs those families alone, ANCHOR_FORB=no runs the base-forbidden
#                            variants with fuzzgpu alone, ABLATION_S=0 skips the ablation; RUNNERS=FILE.tar.xz:
#                            the runners built before (bench/anchor.py --build-only -1), unpacked into
#                            /tmp/anchor-bin; ANCHOR_FROM=DIR/anchor.json: fuzzgpu alone, the runner's column
#                            copied from that earlier run (with FZ_SHARE=1.0)             -> anchor/ ANCHOR_TIME+1 min
#   bench/h200.sh mechanisms which runner parameters expose the variants only cuda-litmus's runner showed, one at a
#                            time, and fuzzgpu on them (bench/anchor_mechanisms.py; NAMES=FILE, default
#                            cuda-litmus/mech.txt; SRC as for anchor)                 -> anchor/     ~5 min
#   bench/h200.sh cta        the CTA-size knob (cta_threads): its GPU tests, the harness throughput, then fuzzgpu
#                            alone at CTAs of 256, 128, 64 and 32 threads (default and the runner's exposing
#                            configuration mirrored) on the variants NAMES lists (default cuda-litmus/mech.txt),
#                            INSTANCES each (default 2^29)                            -> anchor/     ~5 min
#   bench/h200.sh mixed      class L on the GPU: tests/litmus/race-mixed/*.litmus, 1e9 instances each (barrier,
#                            spin 1000), then 1e8 under the H200-tuned TMA-store stress  -> race-mixed/ ~2 min
#   bench/h200.sh fixed      bench/fixed_on_gpu.py: the fixed programs bench/refix.py wrote (FIXED=DIR, default
#                            throughput/h200-600s-4fc7c0d/fixed), 1e7 instances each, judged by the race property -> fixed/ ~5 min
#   bench/h200.sh ray        Ray with 3 actors on the GPU against --gpus 1 --workers-per-gpu 3
#                            (bench/ray_h200.sh, SECONDS_PER_RUN=120; carry raybundle/) -> ray/     ~6 min
#
# Run from the repository root on the GPU machine with wheelhouse/ (PyCUDA and jsonschema wheels for
# cp312) carried, and $OUT set; each part writes straight into $OUT/<part>/ (what ran comes back even
# when the call runs out of time), with machine.txt (date, GPU, driver, commit) first.  A part given X=DIR runs from
# its own copy of the tree (DIR.tree); every part first waits up to GPU_IDLE_WAIT s (30) for the GPU to run no process
# of an earlier run, and refuses (exit 3) one that stays.
set -u
export PYTHONUNBUFFERED=1
part=${1:?usage: bench/h200.sh tests|plugin|harness|probe|cluster|wgmma|tensor|tensormap|draws|exposure|scaling|campaigns|faults|replay|all-race|necessity|throughput|gcab|ab|mayhang|runcost|mixed|fixed|ray|anchor|mechanisms|cta}
x=${X:-$OUT/$part}
if [ -n "${X:-}" ] && [ -n "$(ls -A "$x" 2>/dev/null)" ]; then
  # a device's /tmp outlives a call: a folder of an earlier run would mix its files with this run's
  echo "bench/h200.sh: X=$x is not empty (an earlier run's files would mix with this one's): name a new folder" >&2
  exit 2
fi
if [ -n "${X:-}" ] && [ -e "${x%/}.done" ]; then
  echo "bench/h200.sh: ${x%/}.done exists (an earlier run's: a wait for this run would end at once): name a new folder" >&2
  exit 2
fi
if [ -n "${GCTHRESH:-}" ] && { [ -z "${GCCLOCK:-}" ] || ! [[ "$GCTHRESH" =~ ^[0-9]+,[0-9]+,[0-9]+$ ]]; }; then
  # the throughput part's thresholds reach the workers through the clock's sitecustomize, which records them:
  # without it, or malformed, the workers would run at the campaign's own and an A/B would be void
  echo "bench/h200.sh: GCTHRESH=$GCTHRESH needs GCCLOCK=1 and three integers A,B,C" >&2; exit 2
fi
if [ "$part" = ab ]; then  # one setting, two values; each reaches the throughput part as its own variable, and each
  # run is sided by what its throughput.json recorded of it (so a value that did not reach the campaign shows)
  for v in "${A:-}" "${B:-}"; do
    [[ "$v" =~ ^(W|WINDOW|GCTHRESH)=[0-9A-Za-z.,_-]+$ ]] || { echo "bench/h200.sh ab: '$v': A and B are each one W, WINDOW or GCTHRESH=value" >&2; exit 2; }
  done
  if [ "${A%%=*}" != "${B%%=*}" ] || [ "$A" = "$B" ]; then
    echo "bench/h200.sh ab: A=$A B=$B: two values of one setting, please" >&2; exit 2
  fi
  case "${A%%=*}" in W) BY=workers ;; WINDOW) BY=static_pool.window_s ;; *) BY= ;; esac
fi
# a part run with X=DIR under setsid is collected by a later call once DIR.done exists, written when this script
# ends however it ends (its exit status in it), beside DIR (whose files come back):
#   timeout 580 sh -c 'until [ -e DIR.done ]; do sleep 5; done'; cat DIR.done; cp -r DIR/. "$OUT"/
# (a wait on `pgrep -f "h200.sh throughput"` finds the waiting call's own shell and never ends: 2026-12-06)
if [ -n "${X:-}" ] && [ -z "${FZ_OWN_TREE:-}" ]; then
  # the device tool copies the working tree over this one at the start of every call: a run that outlives its call
  # reads files while they are rewritten (a campaign worker's first import of fuzzgpu.fixes, 13 s in, as the
  # collecting call began: "cannot import name 'fixes' from 'fuzzgpu'", 2026-12-06).  It runs from its own copy.
  # (A part's own nested runs -- ab's, gcab's -- run in its tree: FZ_OWN_TREE.)
  x=$(realpath -m "$x"); t="${x%/}.tree"
  case "$t/" in "$(realpath .)"/*)
    echo "bench/h200.sh: X=$x is inside the tree it would copy: name a folder outside it" >&2
    mkdir -p "$(dirname "$x")" && echo "exit 2 $(date -u)" > "${x%/}.done"; exit 2 ;;
  esac
  if ! { mkdir -p "$(dirname "$t")" && rm -rf "$t" && cp -a . "$t"; }; then
    echo "bench/h200.sh: cannot copy the tree to $t" >&2; { echo "exit 3 $(date -u)" > "${x%/}.done"; } 2>/dev/null; exit 3
  fi
  cd "$t" && X="$x" FZ_OWN_TREE=1 exec bash bench/h200.sh "$@"
fi
if [ -n "${X:-}" ]; then trap 'echo "exit $? $(date -u)" > "${x%/}.done"' EXIT; fi
mkdir -p "$x"
# processes an earlier run left on the GPU (a campaign whose GPU stopped answering left 20, stuck in the driver, and
# the next part hung behind them for its whole call: 2026-12-06): a part measured beside them would mean nothing
# (a campaign's processes just ended may take a moment to leave it: up to GPU_IDLE_WAIT seconds, default 30)
left=
for _ in $(seq "${GPU_IDLE_WAIT:-30}"); do
  left=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null || true)
  [ -z "$left" ] && break
  sleep 1
done
if [ -n "$left" ]; then
  echo "bench/h200.sh: the GPU already runs $(printf '%s\n' "$left" | wc -l) process(es), an earlier run's (stuck in the" \
       "driver?): $(printf '%s' "$left" | tr '\n' ';' | tr -cd '[:print:]' | cut -c1-200); a fresh machine is needed" >&2
  exit 3
fi
if [ ! -d /tmp/site/pycuda ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site wheelhouse/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD:${PYTHONPATH:-}
F="python3 -m fuzzgpu"
PYTEST_GPU="python3 -m pytest -p fuzzgpu.pytest_plugin -m gpu -q -p no:xdist -p no:cacheprovider -rA"
TUNED=strategies/stress/tma-store-tuned.toml
TIME=${TIME:-270}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu 2>/dev/null | grep -m1 "Model name" || true; nvcc --version | tail -2
  echo "host $(hostname 2>/dev/null) boot $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"  # which machine: rows of two differ
  git log -1 --format='%H %s' 2>/dev/null
  echo "files of the tree that differ from that commit (a device copy: the tree copied over its base): $(git status --porcelain 2>/dev/null | wc -l)"
} > "$x/machine.txt" 2>&1

case "$part" in
anchor)
  if [ -n "${RUNNERS:-}" ]; then  # the runners built before on a CPU machine (bench/anchor.py --build-only -1)
    mkdir -p /tmp/anchor-bin && tar -xJf "$RUNNERS" -C /tmp/anchor-bin || exit 3
  fi
  timeout $((${ANCHOR_TIME:-360} + 90)) python3 bench/anchor.py --src "${SRC:-cuda-litmus}" --out "$x" --gpu-s "${GPU_S:-1}" \
    --seen-per-family "${SEEN:-6}" --forbidden-per-family "${FORB:-6}" --deadline-s "${ANCHOR_TIME:-360}" \
    --seed "${SEED:-31}" ${INCLUDE:+--include "$INCLUDE"} ${FAMILIES:+--families "$FAMILIES"} \
    --anchor-forbidden "${ANCHOR_FORB:-yes}" ${ANCHOR_FROM:+--anchor-from "$ANCHOR_FROM"} --ablation-s "${ABLATION_S:-25}" --fz-share "${FZ_SHARE:-0.5}" > "$x/anchor.txt" 2>&1
  echo "exit $?"; tail -40 "$x/anchor.txt"
  ;;
cta)
  echo "== the knob's GPU tests"
  FUZZGPU_REQUIRE_GPU=1 timeout 200 $PYTEST_GPU tests/gpu/test_gpu_cta_threads.py \
    tests/stress/test_tune_cli.py::test_every_knob_value_runs_on_the_gpu tests/gpu/test_gpu.py > "$x/pytest-gpu.txt" 2>&1
  echo "exit $?"; grep -E "^(FAILED|ERROR|XPASS)|passed|failed" "$x/pytest-gpu.txt" | tail -30
  echo "== harness throughput"
  timeout 70 python3 bench/harness.py --out "$x" --name harness-tput-h200.json --sections tput > "$x/harness.txt" 2>&1
  echo "exit $?"; tail -6 "$x/harness.txt"
  echo "== fuzzgpu at each CTA size"
  timeout ${MECH_TIME:-300} python3 bench/anchor_mechanisms.py --src "${SRC:-cuda-litmus}" --out "$x" --anchor no \
    --configs cta --tune-s 0 --names "${NAMES:-cuda-litmus/mech.txt}" --instances "${INSTANCES:-536870912}" > "$x/mechanisms.txt" 2>&1
  echo "exit $?"; tail -12 "$x/mechanisms.txt"
  ;;
mechanisms)
  timeout ${MECH_TIME:-540} python3 bench/anchor_mechanisms.py --src "${SRC:-cuda-litmus}" --out "$x" \
    --names "${NAMES:-cuda-litmus/mech.txt}" --tune-s "${TUNE_S:-2}" ${MECH_ARGS:-} > "$x/mechanisms.txt" 2>&1
  echo "exit $?"; tail -30 "$x/mechanisms.txt"
  ;;
plugin)
  echo "== the pytest plugin on the GPU"
  FUZZGPU_REQUIRE_GPU=1 timeout 400 $PYTEST_GPU tests/gpu/test_gpu_plugin.py > "$x/pytest-gpu-plugin.txt" 2>&1
  echo "exit $?"; grep -E "^(FAILED|ERROR|PASSED)|passed|failed" "$x/pytest-gpu-plugin.txt" | tail -10
  ;;
tests)
  echo "== every GPU test"
  FUZZGPU_REQUIRE_GPU=1 timeout 540 $PYTEST_GPU tests > "$x/pytest-gpu.txt" 2>&1
  echo "exit $?"; grep -E "^(FAILED|ERROR|XPASS)|passed|failed" "$x/pytest-gpu.txt" | tail -30
  echo "== harness throughput"
  timeout 70 python3 bench/harness.py --out "$x" --name harness-tput-h200.json --sections tput > "$x/harness.txt" 2>&1
  echo "exit $?"; tail -6 "$x/harness.txt"
  ;;
harness)
  timeout 200 python3 bench/harness.py --out "$x" --name harness-h200.json \
    --sections tput,table1,zero,scope,place,pdl --table1-variants default,graph > "$x/harness.txt" 2>&1
  echo "exit $?"; grep "^## Weak" "$x/harness.txt"; tail -6 "$x/harness.txt"
  ;;
probe)
  CUDA_VISIBLE_DEVICES=0 timeout 190 python3 bench/table1_probe.py --out "$x" > "$x/table1-probe.txt" 2>&1
  echo "exit $?"; tail -40 "$x/table1-probe.txt"
  ;;
cluster)
  timeout 200 $PYTEST_GPU tests/gpu/test_gpu_cluster.py > "$x/pytest-gpu-cluster.txt" 2>&1
  echo "exit $?"; grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$x/pytest-gpu-cluster.txt" | tail -30
  for t in dsm/DSM-MP-relacq-cluster dsm/DSM-MP-relacq-cta dsm/DSM-MP-fence-acqrel-cluster dsm/DSM-MP-fence-acqrel-cta \
           cluster-barrier/CB-MP-release cluster-barrier/CB-MP-relaxed-both mbarrier-cluster/RMB-MP-release-cluster-acquire-cluster; do
    n=$([ "$t" = dsm/DSM-MP-relacq-cluster ] && echo 1e9 || echo 2e8)
    echo "== fuzzgpu run $t --instances $n --barrier --spin 1000"
    timeout 120 $F run "tests/litmus/$t.litmus" --instances $n --barrier --spin 1000 > "$x/$(basename $t).txt" 2>&1
    echo "exit $?"; grep -vE "^\s*$" "$x/$(basename $t).txt" | tail -8
  done
  ;;
wgmma)
  timeout 75 python3 bench/wgmma_h200.py --out "$x" --seconds 40 > "$x/wgmma.txt" 2>&1
  echo "exit $?"; tail -20 "$x/wgmma.txt"
  ;;
tensor)
  echo "== the tensor map forms"
  timeout 60 python3 bench/tensor_map_probe.py --out "$x" 2>&1 | tee "$x/tensor-map-probe.txt"
  echo "== tests/gpu/test_gpu_tensor.py"
  FUZZGPU_REQUIRE_GPU=1 timeout 200 $PYTEST_GPU tests/gpu/test_gpu_tensor.py > "$x/pytest-gpu-tensor.txt" 2>&1
  echo "exit $?"; grep -E "^(PASSED|FAILED|ERROR|XFAIL|XPASS)|passed|failed" "$x/pytest-gpu-tensor.txt" | tail -12
  echo "== the tensor litmus tests under the tuned TMA-store stress (1e8 each)"
  for t in tests/litmus/async-proxy/*tensor*.litmus; do
    echo "=== $t"; timeout 60 $F run --instances 1e8 --stress-config $TUNED "$t" 2>&1 | tail -9; echo "exit ${PIPESTATUS[0]}"
  done > "$x/tensor-runs.txt" 2>&1; grep -E '^(===|exit|Observation)|error' "$x/tensor-runs.txt"
  ;;
draws)
  echo "== the generator's tensor copies: the stored draws, 1e7 instances each, judged as a campaign judges them"
  timeout 400 python3 bench/tensor_draws.py run bench/results/tensor/h200-tensor-copies/tensor-draws --out "$x" --instances 1e7 \
    > "$x/tensor-draws.txt" 2>&1
  echo "exit $?"; tail -3 "$x/tensor-draws.txt"
  echo "== docs/tuning.md's examples: the H200-tuned stress on TMA-store-no-fence"
  for extra in "" "--spin 1000"; do
    timeout 60 $F run --stress-config $TUNED $extra tests/litmus/async-proxy/TMA-store-no-fence.litmus \
      > "$x/tma-store-tuned${extra:+-spin1000}.txt" 2>&1
    echo "exit $?"; grep -E "^(Observation|Instances)" "$x/tma-store-tuned${extra:+-spin1000}.txt"
  done
  ;;
exposure)
  timeout 200 python3 bench/exposure.py --budget-s 165 --deep-gpu-s 2 --out "$x" > "$x/exposure.txt" 2>&1
  echo "exit $?"; tail -3 "$x/exposure.txt"
  ;;
scaling)
  timeout 260 python3 bench/campaign.py --backends cuda --scaling 1x1,1x6 --time 90 \
    --out "$x/campaign-scaling.json" > "$x/campaign-scaling.txt" 2>&1
  echo "exit $?"; tail -15 "$x/campaign-scaling.txt"
  ;;
campaigns)
  echo "== a proxy campaign (race) and an all campaign (model), $TIME s each from empty corpora, side by side"
  for c in "proxy race 81" "all model 82"; do
    set -- $c
    setsid bash -c "$F campaign --profile $1 --backend cuda --property $2 --time $TIME --corpus $x/$1-corpus --seed $3 \
        --no-live --gpus 1 --workers-per-gpu 3 --known corpus/known.json --json > $x/$1.json 2> $x/$1.txt; echo \$? > $x/$1.done" \
        < /dev/null > /dev/null 2>&1 &
  done
  for i in $(seq 1 $((TIME / 2 + 60))); do [ -f "$x/proxy.done" ] && [ -f "$x/all.done" ] && break; sleep 2; done
  echo "exit status: proxy $(cat $x/proxy.done 2>/dev/null) all $(cat $x/all.done 2>/dev/null) after $SECONDS s"
  tail -n 4 "$x/proxy.txt" "$x/all.txt"
  echo "== explain of every finding"
  for e in "$x"/*-corpus/*.json; do
    case "$(basename "$e")" in known.json|state.json) continue;; esac
    echo "=== $e"; timeout 20 $F explain "$e" 2>&1 | tail -30
  done > "$x/explain.txt" 2>&1; grep -c "^===" "$x/explain.txt"
  tar -C "$x" -czf "$x/corpora.tar.gz" proxy-corpus all-corpus && rm -rf "$x/proxy-corpus" "$x/all-corpus"
  ;;
faults)
  echo "== profile reliability, $TIME s, injected traps, illegal addresses and hangs, 3 workers"
  timeout $((TIME + 120)) $F campaign --profile reliability --backend cuda --property model --time $TIME \
    --corpus "$x/reliability" --seed 8 --no-live --gpus 1 --workers-per-gpu 3 --watchdog 10 \
    --gpu-fault trap:0.03,illegal-address:0.03,hang:0.02 > "$x/reliability.txt" 2>&1
  echo "exit $?"; tail -25 "$x/reliability.txt"
  echo "== campaign --in-process with an injected trap: the program quarantined, the campaign stopped, exit 3"
  timeout 150 $F campaign --profile classic --backend cuda --in-process --gpu-fault trap:0.05 --time 90 \
    --corpus "$x/inprocess" --no-live --seed 83 > "$x/inprocess.txt" 2>&1
  echo "exit $?"; tail -4 "$x/inprocess.txt"; ls "$x/inprocess/quarantine" 2>&1 | head
  tar -C "$x" -czf "$x/corpora.tar.gz" reliability inprocess && rm -rf "$x/reliability" "$x/inprocess"
  ;;
replay)
  for c in h200-proxy-tuned/proxy-corpus h200-all-600s/race-corpus; do
    n=$(echo "$c" | tr / -)
    rm -rf "/tmp/replay-$n" && cp -r "bench/results/campaigns/$c" "/tmp/replay-$n"
    echo "== replay --fixed of bench/results/campaigns/$c, 1e8 instances each"
    timeout 270 $F replay "/tmp/replay-$n" --backend cuda --fixed --instances 1e8 > "$x/replay-fixed-$n.txt" 2>&1
    echo "exit $?"; tail -5 "$x/replay-fixed-$n.txt"
  done
  ;;
all-race)
  echo "== profile all, property race, from an empty corpus, $TIME s, 8 workers on the GPU"
  $F campaign --profile all --backend cuda --property race --time "$TIME" --corpus "$x/corpus" --seed 91 --no-live \
      --gpus 1 --workers-per-gpu 8 --known corpus/known.json --json > "$x/campaign.json" 2> "$x/campaign.txt"
  echo "exit $?"; tail -n 25 "$x/campaign.txt"
  echo "== each saved entry's SASS, with the checker's details"
  for e in "$x"/corpus/*.litmus; do
    [ -e "$e" ] || continue
    echo "=== $e"; timeout 120 $F sass --arch sm_90 --details --no-cache "$e" 2>&1 | head -40
  done > "$x/sass-of-entries.txt" 2>&1
  grep -c "^===" "$x/sass-of-entries.txt"
  echo "== the shipped corpus replayed on the GPU"
  timeout 240 $F replay corpus --junit-xml "$x/replay.xml" > "$x/replay.txt" 2>&1; echo "exit $?"; tail -n 6 "$x/replay.txt"
  echo "== harness throughput"
  timeout 90 python3 bench/harness.py --out "$x" --name harness-tput-h200.json --sections tput > "$x/harness.txt" 2>&1
  echo "exit $?"; tail -4 "$x/harness.txt"
  ;;
necessity)
  for t in ${ONLY:-examples/necessity/NEC-*.litmus}; do  # ONLY="FILE ...": those programs alone
    n=$(basename "$t" .litmus)
    echo "== fuzzgpu necessity --backend cuda --instances 1e8 --barrier --spin 1000 $t"
    timeout 55 $F necessity --backend cuda --instances 1e8 --barrier --spin 1000 --json "$t" > "$x/$n.json" 2> "$x/$n.err"
    echo "exit $?"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['summary'], 'original:', d['original']['gpu'])
for c in d['changes']: print(c['thread'], c['from'], '->', c['to'], c['verdict'], c['gpu'])" "$x/$n.json" > "$x/$n.txt" 2>&1
    tail -12 "$x/$n.txt"
  done
  ;;
throughput)
  if [ "${STAGES:-1}" != 0 ]; then
    echo "== the stage profile (bench/stages.py) on $(nproc) cores, each harness run on the GPU at 1e7 instances"
    timeout 300 python3 bench/stages.py --programs "${PROGRAMS:-32}" --batch 32 --run --instances 10000000 --label h200 --out "$x" \
      > "$x/stages.txt" 2>&1
    echo "exit $?"; tail -n 9 "$x/stages.txt"
  fi
  echo "== profile all, property race, from an empty corpus, $TIME s, ${W:-8} workers on the GPU; programs/h, busy share"
  # NVML's utilisation (a kernel running on the GPU, sampled each second) beside the CUDA-event sum
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 1000 > "$x/nvml-util.txt" 2>&1 &
  smi=$!
  start=$(date -u +%s)
  if [ -n "${TOOLLOG:-}" ]; then  # every nvcc and nvdisasm call logged: kind of module, kernels, CPU s
    bash bench/tool_shims.sh /tmp/fz-shims "$x/tools.log" && export PATH=/tmp/fz-shims:$PATH
  fi
  if [ -n "${PROFILE:-}" ]; then  # cProfile these workers (and their backends): bench/cprofile_site
    mkdir -p "$x/prof"; export FUZZGPU_CPROFILE_DIR="$x/prof" FUZZGPU_CPROFILE_WORKERS="$PROFILE" PYTHONPATH=$PYTHONPATH:$PWD/bench/cprofile_site
  fi
  if [ -n "${GCCLOCK:-}" ]; then  # each worker's clock on Python's garbage collector (bench/cprofile_site) -> corpus/gc-clock/
    mkdir -p "$x/gc-clock"; export FUZZGPU_GC_CLOCK_DIR="$x/gc-clock" ${GCTHRESH:+FUZZGPU_GC_THRESHOLDS=$GCTHRESH}
    case ":$PYTHONPATH:" in *cprofile_site*) ;; *) export PYTHONPATH=$PYTHONPATH:$PWD/bench/cprofile_site ;; esac
  fi
  # the CPU seconds of the campaign's every process (its workers, their backends, nvcc: all waited for)
  python3 -c "import json, resource, subprocess, sys, time
t = time.time(); rc = subprocess.call(sys.argv[2:]); u = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({'exit': rc, 'wall_s': round(time.time() - t, 1), 'user_s': u.ru_utime, 'sys_s': u.ru_stime}, open(sys.argv[1], 'w'))" \
    "$x/cpu.json" $F campaign --profile all --backend cuda --property race --time "$TIME" --corpus "$x/corpus" --seed 92 --no-live \
      --gpus 1 --workers-per-gpu "${W:-8}" ${KNOWN:+--known "$KNOWN"} ${CTX:+--gpu-context "$CTX"} ${POOL:+$([ "$POOL" = 0 ] && echo --no-static-pool || echo --static-pool)} ${WINDOW:+--static-pool-window "$WINDOW"} \
      --json > "$x/campaign.json" 2> "$x/campaign.txt" &
  wrapper=$!
  # the CPU by process: the workers' Python, their backends' Python, the backends' nvcc and nvdisasm
  python3 bench/cpu_split.py "$wrapper" "$x/cpu-split.json" --names wrapper,campaign,worker,backend &
  splitter=$!
  wait "$wrapper"; wait "$splitter"; cat "$x/cpu-split.json"
  if [ -n "${TOOLLOG:-}" ]; then
    export PATH=${PATH#/tmp/fz-shims:}; python3 bench/tool_log.py "$x/tools.log" --json "$x/tools.json"; gzip "$x/tools.log"
  fi
  echo "exit $(python3 -c "import json; print(json.load(open('$x/cpu.json'))['exit'])")"; tail -n 25 "$x/campaign.txt"; cat "$x/cpu.json"; echo
  kill $smi 2>/dev/null
  if [ -n "${PROFILE:-}" ]; then
    unset FUZZGPU_CPROFILE_DIR
    w=${PROFILE%%,*}; b=$(ls "$x"/prof/cprofile-"$w"-backend-*.pstats 2>/dev/null | tail -1)
    python3 bench/worker_split.py "$x/prof/cprofile-$w.pstats" ${b:+--backend "$b"} > "$x/worker-split.json"; head -c 2500 "$x/worker-split.json"
    tar -C "$x" -czf "$x/prof.tar.gz" prof && rm -rf "$x/prof"
  fi
  if [ -n "${GCCLOCK:-}" ]; then unset FUZZGPU_GC_CLOCK_DIR; mv "$x/gc-clock" "$x/corpus/"; fi
  python3 bench/throughput.py "$x/corpus" --time "$TIME" --nvml "$x/nvml-util.txt" > "$x/throughput.json"; cat "$x/throughput.json"
  mv "$x/nvml-util.txt" "$x/corpus/"
  if [ "${CLASSES:-0}" != 0 ]; then  # the issue classes in the corpus (the oracle's finding_class), each entry's SASS
    echo "== the bug classes in the corpus (bench/discovery_classes.py)"
    timeout 200 python3 bench/discovery_classes.py "$x/corpus" "$start" --json "$x/classes.json" > "$x/classes.txt" 2>&1
    echo "exit $?"; cat "$x/classes.txt"
    echo "== each saved entry's SASS, with the checker's details"
    # tcgen05 entries (classes E/G: the oracle judged them; the H200 cannot run them) compile for sm_100a
    ls "$x"/corpus/*.litmus 2>/dev/null | xargs -P 8 -I{} sh -c 'a=sm_90; grep -q tensormap "{}" && a=sm_90a; grep -q tcgen05 "{}" && a=sm_100a
      timeout 60 python3 -m fuzzgpu sass --arch $a --details --no-cache "{}" > "{}.sass.txt" 2>&1; echo "exit $?" >> "{}.sass.txt"'
    for e in "$x"/corpus/*.litmus; do [ -e "$e" ] && { echo "=== $e"; head -40 "$e.sass.txt"; }; done > "$x/sass-of-entries.txt"
    grep -c "^===" "$x/sass-of-entries.txt"
  fi
  # the device tool brings back at most 8 files a call: the figures' files stay apart, the rest (the campaign's
  # output, the call log, each entry's SASS) goes into corpus.tar.gz beside corpus/
  head -3 "$x/campaign.txt" > "$x/campaign-tail.txt"; echo ... >> "$x/campaign-tail.txt"; tail -6 "$x/campaign.txt" >> "$x/campaign-tail.txt"
  keep="machine.txt cpu.json cpu-split.json throughput.json tools.json classes.json classes.txt worker-split.json"
  rest=$(cd "$x" && ls | grep -vxF -e corpus $(printf -- '-e %s ' $keep))
  tar -C "$x" -czf "$x/corpus.tar.gz" corpus $rest && (cd "$x" && rm -rf corpus $rest)
  ;;
tensormap)
  echo "== class D on the GPU: tests/gpu/test_gpu_tensormap.py (1e8 instances each), then the tensor-copy GPU tests"
  FUZZGPU_REQUIRE_GPU=1 timeout 420 $PYTEST_GPU -s tests/gpu/test_gpu_tensormap.py tests/gpu/test_gpu_tensor.py > "$x/pytest-gpu-tensormap.txt" 2>&1
  echo "exit $?"; grep -E "condition seen|passed|failed|^(FAILED|ERROR|XPASS)" "$x/pytest-gpu-tensormap.txt" | tail -30
  ;;
gcab)  # the collector's A/B: the ab part with the campaign's thresholds (fuzzgpu.campaign.limits) against Python's
  A=GCTHRESH=$(python3 -c 'from fuzzgpu.campaign.limits import GC_THRESHOLDS as t; print(*t, sep=",")') || exit 3
  B=GCTHRESH=700,10,10 BY= LABEL=gc-ab
  ;&
ab)
  TIME=${AB_TIME:-100}
  echo "== A ($A) against B ($B): ${PAIRS:-2} pairs of $TIME s campaigns, the order alternating; sided by ${BY:-gc-thresholds}"
  rm -rf /tmp/ab-cache-*  # a warm device keeps /tmp: every run starts from an empty compile cache
  for i in $(seq 1 "${PAIRS:-2}"); do
    order="a b"; [ $((i % 2)) = 0 ] && order="b a"
    for side in $order; do
      set=$A; [ "$side" = b ] && set=$B
      env W="${W:-20}" "$set" XDG_CACHE_HOME=/tmp/ab-cache-$i-$side X="$x/$i-$side" FZ_OWN_TREE=1 GCCLOCK=1 STAGES=0 TIME=$TIME \
        bash bench/h200.sh throughput > "$x/$i-$side.log" 2>&1
      echo "$i $side ($set) exit $?"; rm -f "$x/$i-$side/corpus.tar.gz" "$x/$i-$side/machine.txt"
    done
  done
  python3 bench/gc_ab.py "$x"/[0-9]*-*/ ${BY:+--by "$BY"} --label "${LABEL:-ab}" --out "$x"; echo "exit $?"  # exit 2: one side
  (cd "$x" && tar -czf runs.tar.gz [0-9]*-* && rm -rf [0-9]*-*)
  ;;
mayhang)
  echo "== the spin budget of programs that may hang (bench/may_hang_budget.py)"
  timeout 240 python3 bench/may_hang_budget.py --out "$x" --programs "${PROGRAMS:-8}" > "$x/may-hang-budget.txt" 2>&1
  echo "exit $?"; tail -n 22 "$x/may-hang-budget.txt"
  echo "== harness throughput"
  timeout 70 python3 bench/harness.py --out "$x" --name harness-tput-h200.json --sections tput > "$x/harness.txt" 2>&1
  echo "exit $?"; tail -6 "$x/harness.txt"
  echo "== the stress knobs' GPU tests"
  FUZZGPU_REQUIRE_GPU=1 timeout 200 $PYTEST_GPU tests/stress/test_tune_cli.py::test_every_knob_value_runs_on_the_gpu \
    tests/gpu/test_gpu_cta_threads.py tests/gpu/test_gpu.py > "$x/pytest-gpu.txt" 2>&1
  echo "exit $?"; grep -E "^(FAILED|ERROR|XPASS)|passed|failed" "$x/pytest-gpu.txt" | tail -30
  ;;
runcost)
  FUZZGPU_REQUIRE_GPU=1 timeout 60 $PYTEST_GPU tests/gpu/test_gpu.py -k context_waits_block > "$x/pytest-context.txt" 2>&1
  echo "exit $?"; grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$x/pytest-context.txt" | tail -3
  timeout 240 python3 bench/run_cost.py --programs "${PROGRAMS:-16}" --out "$x" > "$x/run-cost.txt" 2>&1
  echo "exit $?"; cat "$x/run-cost.md"
  ;;
fixed)
  timeout 500 python3 bench/fixed_on_gpu.py "${FIXED:-bench/results/throughput/h200-600s-4fc7c0d/fixed}" --instances 1e7 --deadline-s 420 \
    --out "$x" > "$x/fixed.txt" 2>&1
  echo "exit $?"; tail -n 4 "$x/fixed.txt"
  ;;
mixed)
  for t in tests/litmus/race-mixed/*.litmus; do
    n=$(basename "$t" .litmus)
    for how in "--instances 1e9 --barrier --spin 1000" "--instances 1e8 --stress-config $TUNED"; do
      echo "=== fuzzgpu run $how $t"; timeout 90 $F run $how "$t" 2>&1 | grep -vE "^\s*$" | tail -12; echo "exit ${PIPESTATUS[0]}"
    done
  done > "$x/race-mixed.txt" 2>&1
  grep -E "^(===|exit)|forbidden|racy|Observation" "$x/race-mixed.txt"
  ;;
ray)
  SECONDS_PER_RUN=${SECONDS_PER_RUN:-120} OUT="$x" timeout 500 bash bench/ray_h200.sh > "$x/ray.txt" 2>&1
  echo "exit $?"; tail -14 "$x/ray.txt"
  ;;
*)
  echo "unknown part $part" >&2; exit 2 ;;
esac
