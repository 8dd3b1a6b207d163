#!/bin/bash
# The timing runs of session 13 (latency15e), all under one hold of /work/wt/timing.lock
# (17:55-18:25 UTC slot): the load test with dense-only and fused search AND related phases in
# one run, up to five runs: the phases in the other order the second time, connections kept
# alive the third, fused first the fourth, as the first the fifth (while the slot lasts).
#   touch /work/wt/SLOT_OPEN; flock /work/wt/timing.lock nice -n 0 bash docs/server/session13/locked.sh
source /work/main/.venv/bin/activate
cd /work/wt/latency15e
export PYTHONPATH=$PWD:/tmp/latency15e/side   # aiohttp for the load test's clients
OUT=/tmp/latency15e/t
CACHE=/tmp/latency15e/server-load
CORPUS=$CACHE/n100000/corpus
mkdir -p $OUT
# the stored related lists must be current for this code (else server_load computes them)
python -c "
from openmsd.corpus import Corpus; from openmsd.search import is_current
import sys; sys.exit(0 if is_current(Corpus('$CORPUS'), 'hybrid-graph') else 1)" \
    || { echo "related lists not current: not timing"; exit 1; }
load() {
  name=$1; shift
  if [ "$(date -u +%H%M)" -gt "$LATEST" ]; then echo "== $name skipped (past $LATEST UTC)"; return; fi
  echo "== $name start $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
  timeout 420 python benchmarks/server_load.py --papers 100000 --clients 20 --seconds 30 \
      --cache $CACHE --json $OUT/$name.json "$@" > $OUT/$name.log 2>&1
  rc=$?
  echo "== $name end $(date -u +%T) rc=$rc uptime:$(uptime | sed 's/.*load average//')"
}
echo "== lock held $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
echo "== code $(git rev-parse HEAD)"
LATEST=1815
load w2 --workers 2 --phases search@muse-v3,search@default,related@muse-v3,related@default
load w2-again --workers 2 --phases related@default,related@muse-v3,search@default,search@muse-v3
load w2-keepalive --workers 2 --keep-alive-requests 0 \
    --phases search@muse-v3,search@default,related@muse-v3,related@default
LATEST=1812
load w2-third --workers 2 --phases search@default,search@muse-v3,related@default,related@muse-v3
LATEST=1816
load w2-fifth --workers 2 --phases search@muse-v3,search@default,related@muse-v3,related@default
echo "== lock released $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
