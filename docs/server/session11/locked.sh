#!/bin/bash
# The timing runs of session 11 (latency15c), all under one hold of /work/wt/timing.lock
# (09:50-10:15 UTC slot): the load test with dense-only and fused search AND related phases in
# one run (twice, the phases in the other order the second time), and recommend's latency.
source /work/main/.venv/bin/activate
cd /work/wt/latency15c
export PYTHONPATH=$PWD
OUT=/tmp/latency15c/t
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
  echo "== $name end $(date -u +%T) rc=$? uptime:$(uptime | sed 's/.*load average//')"
}
echo "== lock held $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
LATEST=1008
load w2 --workers 2 --phases search@muse-v3,search@default,related@muse-v3,related@default
echo "== recommend start $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
timeout 420 env OMP_NUM_THREADS=1 python benchmarks/recommend_latency.py --papers 100000 \
    --cache /tmp/server-load --citrec /tmp/latency15c/citrec-uxr0-seed0 --repeats 3 \
    --json $OUT/recommend.json > $OUT/recommend.log 2>&1
echo "== recommend end $(date -u +%T) rc=$? uptime:$(uptime | sed 's/.*load average//')"
load w2-again --workers 2 --phases related@default,related@muse-v3,search@default,search@muse-v3
LATEST=1007
load w2-keepalive --workers 2 --keep-alive-requests 0 \
    --phases search@muse-v3,search@default,related@muse-v3,related@default
echo "== lock released $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
