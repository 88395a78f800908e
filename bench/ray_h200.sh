#!/usr/bin/env bash
# Ray on the H200 (issue 17): the same 120 s campaign (profile classic, backend cuda, property model,
# one seed) twice in one run -- through Ray with 3 actors on the one GPU (num_gpus=1/3 each), and with
# the local `--gpus 1 --workers-per-gpu 3` -- programs per hour for each (JSON + table into $OUT).
#
# Offline install: Ray for cp312 from raybundle/ray-site-cp312.tar.xz (an installable site tree: the
# Ray wheel without Java, the dashboard's web client, rllib/serve/tune/train/data/air/llm/workflow,
# binaries stripped of symbols; with Ray's required dependencies), unpacked to /tmp/site-ray and put
# first on PYTHONPATH.  Carry only that file (ignored by git: carry ["raybundle/ray-site-cp312.tar.xz"]).
#
#   bash bench/ray_h200.sh                   # SECONDS_PER_RUN=120 by default
#   bash bench/ray_h200.sh --build           # (with network) rebuild raybundle/ray-site-cp312.tar.xz
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--build" ]; then
  # the Ray wheel and its required dependencies for CPython 3.12 on x86_64 Linux, as wheels only
  rm -rf raybundle/wheels raybundle/site && mkdir -p raybundle/wheels raybundle/site
  python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d raybundle/wheels "ray==${RAY_VERSION:-2.60.0}"
  # unpacked into one site tree (file modes kept: gcs_server and raylet are executables)
  python3 - <<'EOF2'
import glob, os, zipfile
for w in glob.glob("raybundle/wheels/*.whl"):
    with zipfile.ZipFile(w) as z:
        for info in z.infolist():
            path = z.extract(info, "raybundle/site")
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)
EOF2
  # what a campaign does not use: Java, the dashboard's web client, the libraries on top of Ray core
  (cd raybundle/site/ray && rm -rf jars rllib data serve train tune llm air workflow dashboard/client/build)
  find raybundle/site -name __pycache__ -type d -prune -exec rm -rf {} +
  find raybundle/site/ray -name '*.so' -size +500k -exec strip --strip-unneeded {} \;
  strip --strip-unneeded raybundle/site/ray/core/src/ray/gcs/gcs_server raybundle/site/ray/core/src/ray/raylet/raylet
  tar -C raybundle/site -cf - . | xz -9 -T0 > raybundle/ray-site-cp312.tar.xz
  rm -rf raybundle/site
  ls -la raybundle/ray-site-cp312.tar.xz
  exit 0
fi
OUT=${OUT:-bench/results/ray/h200}
mkdir -p "$OUT"
SECS=${SECONDS_PER_RUN:-120}
BUNDLE=raybundle/ray-site-cp312.tar.xz
SITE=/tmp/site-ray
PY=${PYTHON:-python3}

[ -f "$BUNDLE" ] || { echo "no $BUNDLE: carry it (see the header of $0)"; exit 3; }
rm -rf "$SITE" && mkdir -p "$SITE"
tar -C "$SITE" -xJf "$BUNDLE"
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export RAY_USAGE_STATS_ENABLED=0
"$PY" -c "import ray, sys; print('ray', ray.__version__, 'python', sys.version.split()[0], 'from', ray.__file__)" | tee "$OUT/ray-version.txt"

# a one-node cluster: the head, with this machine's GPUs; in its own session, so that exactly its
# processes are ended afterwards (by session id)
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
raytmp=$(mktemp -d /tmp/rayh-XXXX)
setsid "$PY" -c 'import sys; from ray.scripts.scripts import main; sys.argv[0] = "ray"; sys.exit(main())' \
  start --block --head --port "$port" --node-ip-address 127.0.0.1 --num-gpus "${ngpu:-1}" --include-dashboard false \
  --disable-usage-stats --temp-dir "$raytmp" > "$OUT/ray-head.log" 2>&1 &
head_pid=$!
stop_cluster() {
  sid=$(ps -o sid= -p "$head_pid" 2>/dev/null | tr -d ' ' || true)
  [ -n "$sid" ] && pkill -KILL -s "$sid" 2>/dev/null || true
  wait "$head_pid" 2>/dev/null || true
  rm -rf "$raytmp"
}
trap stop_cluster EXIT
for _ in $(seq 1 120); do
  "$PY" -c "import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR', log_to_driver=False); r=ray.cluster_resources(); print(r); sys.exit(0 if r.get('GPU',0)>=1 else 1)" \
    "127.0.0.1:$port" > "$OUT/ray-cluster.txt" 2>&1 && break
  sleep 1
done
cat "$OUT/ray-cluster.txt"

# the same run: local workers first, then the Ray actors (one seed, the same settings)
"$PY" bench/campaign.py --backends cuda --scaling 1x3,ray:1x3 --ray "127.0.0.1:$port" --time "$SECS" --seeds 1 \
  --out "$OUT/campaign-ray.json" 2>&1 | tee "$OUT/table.txt"
"$PY" - "$OUT/campaign-ray.json" <<'EOF' | tee -a "$OUT/table.txt"
import json, sys
runs = {r["setting"]: r for r in json.load(open(sys.argv[1]))["runs"]}
loc, ray = runs["1x3"], runs["ray:1x3"]
for k in ("programs_per_hour", "programs_per_hour_wall"):
    print(f"{k}: local --gpus 1 --workers-per-gpu 3 {loc[k]:.0f}, Ray 3 actors on 1 GPU {ray[k]:.0f}: "
          f"Ray/local {ray[k] / max(loc[k], 1e-9):.3f} (issue 17: Ray must not cost more than 10%, i.e. >= 0.90)")
EOF
