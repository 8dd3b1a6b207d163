#!/usr/bin/env bash
# Reruns the README's headline figures, each writing its record benchmarks/results/NAME.json
# (benchmarks/record.py), then renders the Benchmarks page. Run from the repository root, with
# the test data in ../shared/data and the model cache built (run `openmsd demo` once first: the
# picture, watch and fusion figures read its ./demo-corpus). Two linked records are not rerun
# here: fetch_cost and cli_start compare against an earlier version of openmsd's own client and
# start-up, which their commands build from a git revision (run them from a clone with its
# history: `python benchmarks/fetch_throughput.py --taln ../shared/data/taln/papers.jsonl
# --no-loop --repeats 3 --peer-rev 5e2fae1 --record fetch_cost`, `python
# benchmarks/cli_start.py --runs 11 --before 0b51f03`).
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
# TALN with relations and the dense model's float32 vectors, then the int8 builds and the
# CPU builds against PyTorch on its dev split.
rm -rf "$WORK/taln"
openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out "$WORK/taln"
openmsd relations "$WORK/taln" --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
openmsd embed "$WORK/taln" --backend onnx-fp32
python benchmarks/embedding_candidates.py "$WORK/taln" --record
python benchmarks/embedding_sdsm_dev.py "$WORK/taln" --record
# The untuned fusions on TALN's train and dev pools (no test split read) and the demo's searches;
# then the adapter, trained into the TALN corpus over the int8 vectors its record was made with
# (after the figures above: the corpus's hybrid holds the adapter from then on), and its
# French -> English Recall@1 (each adapter run reads TALN's test split once more).
openmsd embed "$WORK/taln" --model minilm-en
python benchmarks/fusion_evidence.py "$WORK/taln" demo-corpus
openmsd embed "$WORK/taln" --backend onnx
python benchmarks/adapter_taln.py "$WORK/taln" --no-crosslingual
python benchmarks/crosslingual_taln.py --models e5-small-multilingual \
    "$WORK/taln/adapters/adapter-e5-small-multilingual" --backend onnx --record adapter_crosslingual
# The learned ranker on TALN: a fresh corpus with the default int8 vectors of e5 and minilm-en,
# trained on train + dev, then IDT and ODT read once; then French -> English with its free-text
# head; then whether its relevance is the probability it says, on the same test papers.
rm -rf "$WORK/taln-ranker"
openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out "$WORK/taln-ranker"
openmsd relations "$WORK/taln-ranker" --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
openmsd embed "$WORK/taln-ranker" && openmsd embed "$WORK/taln-ranker" --model minilm-en
python benchmarks/ranker_taln.py "$WORK/taln-ranker" --record
python benchmarks/ranker_crosslingual.py "$WORK/taln-ranker" --record
python benchmarks/relevance.py "$WORK/taln-ranker" --split test --record --plot docs/img/relevance-reliability.png
# The same per language direction, on two bilingual views of TALN it builds (test read once).
python benchmarks/ranker_directions.py "$WORK/directions" --variant both --split test --record
# OpenMSD's Tables 5/6 on TALN (openmsd experiment experiments/taln.toml; reads its test split
# once more): a fresh corpus, so that no adapter is in it.
rm -rf "$WORK/taln-grid"
openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out "$WORK/taln-grid"
openmsd relations "$WORK/taln-grid" --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
python benchmarks/training_taln.py "$WORK/taln-grid" --seeds 0 --runs mSpt-dc Specter SciNCL \
    --out "$WORK/training-taln"
# MP-BERT4CR on the unarXive sample's time-ordered split: baselines, the untrained start and the
# trained heads, three seeds (the newest citing papers are the test set).
rm -rf "$WORK/ux"
openmsd ingest ../shared/data/unarxive-sample --out "$WORK/ux"
python benchmarks/citrec_table3.py "$WORK/ux" --outside-references --split time --seeds 0 1 2 \
    --runs start dyn --variant dyn '{}' --rerank start dyn \
    --baselines bm25 e5-small-multilingual prefetch --steps 100 --out "$WORK/citrec-ux-time" \
    --config '{"citation_fundamental": 4, "eval_every": 20, "learning_rate": 1e-4}' \
    --record citrec_time
# Synthetic corpora (seeded): what an adapter costs at 100,000 papers, what train ranker costs
# at 3,000 and 30,000, and the picture and watch at 100,000 (beside the demo corpus's).
python benchmarks/adapter_scale.py "$WORK/adapter-scale" --positives dc-or-cc-or-bc
python benchmarks/graph_watch.py --demo demo-corpus --root "$WORK/graph-watch"
python benchmarks/mcp_latency.py --rounds 20
python benchmarks/cli_answer_time.py --corpus demo-corpus --repeats 5
python benchmarks/non_papers.py
# train ranker at 3,000, 30,000 and 100,000 papers (the sizes the README quotes), each its own
# run (the 100,000-paper corpus built anew: its ingest and relations are timed too)
python benchmarks/ranker_cost.py --sizes 3000 --work "$WORK/ranker-cost"
python benchmarks/ranker_cost.py --sizes 30000 --append --work "$WORK/ranker-cost" --reuse
python benchmarks/ranker_cost.py --sizes 100000 --append --work "$WORK/ranker-cost-100k"
# Synthetic vectors (seeded, clustered): generated, built, searched exactly and measured.
python benchmarks/index_scale.py --vectors "$VECTORS" --compare 200000 --queries 500 \
    --factory IVF4096_HNSW32,PQ48 --train 160000 --calibration 300 --work "$WORK/index"
python scripts/docs_reference.py
