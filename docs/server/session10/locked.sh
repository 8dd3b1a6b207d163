#!/bin/bash
# The timing runs of session 10 (latency15b), all under one hold of /work/wt/timing.lock.
source /work/main/.venv/bin/activate
cd /work/wt/latency15b
export PYTHONPATH=$PWD
OUT=/tmp/latency15b/t
mkdir -p $OUT
run() {
  name=$1; shift
  if [ "$(date -u +%H%M)" -gt "$LATEST" ]; then echo "== $name skipped (past $LATEST UTC)"; return; fi
  echo "== $name start $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
  timeout 480 python benchmarks/server_load.py --papers 100000 --clients 20 --seconds 30 \
      --no-related-lists --cache /tmp/server-load --json $OUT/$name.json "$@" > $OUT/$name.log 2>&1
  echo "== $name end $(date -u +%T) rc=$? uptime:$(uptime | sed 's/.*load average//')"
}
echo "== lock held $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
LATEST=0705
run w2 --workers 2 --phases search@muse-v3,search@default
run w2-keepalive --workers 2 --keep-alive-requests 0 --phases search@muse-v3,search@default
run w1 --phases search@muse-v3,search@default
run w2-again --workers 2 --phases search@default,search@muse-v3
LATEST=0704
run w2-k4 --workers 2 --keep-alive-requests 4 --phases search@muse-v3,search@default
echo "== lock released $(date -u +%T) uptime:$(uptime | sed 's/.*load average//')"
