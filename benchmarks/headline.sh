#!/usr/bin/env bash
# Reruns the README's headline figures, each writing its record benchmarks/results/NAME.json
# (benchmarks/record.py), then renders the Benchmarks page. Run from the repository root, with
# the test data in ../shared/data and the model cache built (run `openmsd demo` once first).
# The sizes are the ones the stored records ran at, on a 2-core machine: the index's
# VECTORS=10000000 needs ~16 GB of disk under $WORK and about 30 minutes (VECTORS=1000000 for a
# quicker look).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-/tmp/openmsd-headline}
VECTORS=${VECTORS:-10000000}
EMBED_TEXTS=${EMBED_TEXTS:-1000}
mkdir -p "$WORK"
python benchmarks/langid_accuracy.py
python benchmarks/demo_wall.py
python benchmarks/sdsm_scoring.py
python benchmarks/embedding_throughput.py --texts 1000 --repeats 1 --record
python benchmarks/embed_memory.py --sizes 1483 6000 --record
python benchmarks/ingest_throughput.py --works 200000 --sizes 50000 1000000
python benchmarks/ingest_throughput.py --works 200000 --files 2 --phases floor floor-isal read \
    ingest-one-process ingest --record ingest_parallel
python benchmarks/crosslingual_taln.py --models bm25 e5-small-multilingual hybrid --backend onnx
python benchmarks/embed_spark.py --texts "$EMBED_TEXTS" --work "$WORK/embed" --prepare \
    --backend onnx-fp32
python benchmarks/embed_spark.py --texts "$EMBED_TEXTS" --cores 2 --work "$WORK/embed" \
    --backend onnx-fp32
# TALN with relations and the dense model's vectors (the float32 build the ranking record was
# made with), then tune (train + dev) and the ranking figures on IDT, ODT and test (each run
# reads TALN's test split once more).
rm -rf "$WORK/taln"
openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out "$WORK/taln"
openmsd relations "$WORK/taln" --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
openmsd embed "$WORK/taln" --backend onnx-fp32
python benchmarks/embedding_candidates.py "$WORK/taln" --record
python benchmarks/ranking_taln.py "$WORK/taln" --record ranking_taln
# Synthetic corpora (seeded): what tune costs at 3,000, 30,000 and 100,000 papers.
for size in 3000 30000 100000; do
    python benchmarks/tune_cost.py --sizes "$size" --work "$WORK/tune" --append
done
# Synthetic vectors (seeded, clustered): generated, built, searched exactly and measured.
python benchmarks/index_scale.py --vectors "$VECTORS" --compare 200000 --queries 500 \
    --factory IVF4096_HNSW32,PQ48 --train 160000 --calibration 300 --work "$WORK/index"
python scripts/docs_reference.py
