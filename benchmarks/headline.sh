#!/usr/bin/env bash
# Reruns the README's headline figures, one after the other, each writing its record
# benchmarks/results/NAME.json (benchmarks/record.py). Run from the repository root, with the
# test data in ../shared/data and the model cache built (run `openmsd demo` once first).
# About 1.5 hours on 2 cores; the 10M-vector index alone needs ~16 GB of disk under $WORK.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-/tmp/openmsd-headline}
VECTORS=${VECTORS:-10000000}
EMBED_TEXTS=${EMBED_TEXTS:-4000}
mkdir -p "$WORK"
python benchmarks/langid_accuracy.py
python benchmarks/demo_wall.py
python benchmarks/embedding_throughput.py --texts 1000 --batch-size 32 --repeats 3
python benchmarks/crosslingual_taln.py --models bm25 e5-small-multilingual hybrid --backend onnx
python benchmarks/ingest_throughput.py --works 50000
python benchmarks/sdsm_scoring.py
nice -n 19 python benchmarks/embed_spark.py --texts "$EMBED_TEXTS" --work "$WORK/embed" --prepare
python benchmarks/embed_spark.py --texts "$EMBED_TEXTS" --cores 2 --work "$WORK/embed"
# Synthetic vectors: generated niced (untimed), then built, searched exactly and measured.
INDEX=(--vectors "$VECTORS" --queries 1000 --factory IVF4096_HNSW32,PQ48 --train 160000
       --calibration 300 --work "$WORK/index")
nice -n 19 python benchmarks/index_scale.py "${INDEX[@]}" --steps generate
python benchmarks/index_scale.py "${INDEX[@]}" --steps build,truth,measure
