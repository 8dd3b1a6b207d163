#!/bin/bash
# The timing runs of session 12 (latency15d), all under one hold of /work/wt/timing.lock
# (13:30-13:55 UTC slot): the load test with dense-only and fused search AND related phases in
# one run (up to four runs: the phases in the other order the second time, connections kept
# alive the third, fused first again the fourth), and recommend's latency with the batched
# own sentences and their peer (one e5 call a sentence) in the same run.
#   flock /work/wt/timing.lock nice -n 0 bash docs/server/session12/locked.sh
source /work/main/.venv/bin/activate
cd /work/wt/latency15d
export PYTHONPATH=$PWD:/tmp/latency15d/site   # aiohttp for the load test's clients
OUT=/tmp/latency15d/t
CORPUS=/tmp/server-load/n100000/corpus
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
  timeout 480 python benchmarks/server_load.py --papers 100000 --clients 20 --seconds 30 \
      --cache /tmp/server-load --json $OUT/$name.json "$@" > $OUT/$name.log 2>&1
  rc=$?
  echo "== $name end $(date -u +%T) rc=$rc uptime:$(uptime | sed 's/.*load average//')"
}
echo "== lock held $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
LATEST=1348
load w2 --workers 2 --phases search@muse-v3,search@default,related@muse-v3,related@default
if [ "$(date -u +%H%M)" -le 1346 ]; then
  echo "== recommend start $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
  timeout 420 env OMP_NUM_THREADS=1 python benchmarks/recommend_latency.py --papers 100000 \
      --cache /tmp/server-load --citrec /tmp/latency15d/citrec-ux --repeats 3 \
      --json $OUT/recommend.json > $OUT/recommend.log 2>&1
  rc=$?
  echo "== recommend end $(date -u +%T) rc=$rc uptime:$(uptime | sed 's/.*load average//')"
fi
load w2-again --workers 2 --phases related@default,related@muse-v3,search@default,search@muse-v3
LATEST=1349
load w2-keepalive --workers 2 --keep-alive-requests 0 \
    --phases search@muse-v3,search@default,related@muse-v3,related@default
LATEST=1347
load w2-third --workers 2 --phases search@default,search@muse-v3,related@default,related@muse-v3
echo "== lock released $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
