#!/bin/sh
# The discovery campaign of issue 15 on the CPU: profile all, property race, sim backend, 600 s,
# from an empty corpus; then the seven classes in its corpus.  Results in bench/results/.
set -e
cd "$(dirname "$0")/.."
CORPUS=${CORPUS:-/tmp/disc}
OUT=bench/results/campaigns/sim-all-race
rm -rf "$CORPUS"
START=$(date -u +%s)
CMD="python3 -m fuzzgpu campaign --profile all --property race --backend sim --time 600 --no-live --corpus $CORPUS"
{
  echo "# command: nice $CMD"
  echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fuzzgpu $(git rev-parse --short HEAD), host $(uname -n), one core (nice)"
  echo
  nice $CMD 2>&1 | grep -v '^  [0-9a-f]*\.json' || true
  echo
  cat "$CORPUS/report/report.txt"
  echo
  echo "# the seven classes of issue 15 (python3 bench/discovery_classes.py $CORPUS $START)"
  python3 bench/discovery_classes.py "$CORPUS" "$START" --json "$OUT.classes.json"
} > "$OUT.txt"
cp "$CORPUS/report/report.json" "$OUT.json"
