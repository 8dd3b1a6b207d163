#!/usr/bin/env bash
# Time to the first related result from a fresh clone (docs/getting-started.md): clone, a new virtual
# environment, an empty HOME (no pip or model cache), the README's first command.
#   bash benchmarks/fresh_clone.sh [REPO] [WORKDIR]
set -euo pipefail
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
work=${2:-/tmp/openmsd-fresh}
rm -rf "$work" && mkdir -p "$work/home"
git clone -q "$repo" "$work/clone" && cd "$work/clone"
export HOME=$work/home
start=$(date +%s)
echo "start $(date -u +%T); $(uptime)"
python3 -m venv .venv && . .venv/bin/activate
pip install -q torch==2.13.0
echo "torch installed: $(( $(date +%s) - start )) s"
pip install -q -e ".[models,serve]"
echo "openmsd installed: $(( $(date +%s) - start )) s"
COLUMNS=100 openmsd demo > demo.out 2> demo.err
echo "demo done: $(( $(date +%s) - start )) s"
tail -n 2 demo.err   # the demo's step times: first related result = install + ingest + embed
echo "end $(date -u +%T); $(uptime)"
