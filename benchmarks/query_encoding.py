"""CPU per query of the served query encoders, one query at a time and in batches.

What the server's micro-batching encoder pays per search: each model (and backend) encodes
real titles as queries (``kind="query"``) in batches of 1, 4, 8, 16 and 32, on ``--threads``
intra-op threads; the figure is the process CPU time per query (steadier than wall time on a
shared machine) and the wall time per batch, each the median of ``--repeats`` runs over
``--queries`` titles from a corpus (any corpus: the load test's, or the shipped sample's).

    OMP_NUM_THREADS=1 python benchmarks/query_encoding.py /tmp/server-load/n100000/corpus \
        --encoder muse-v3:torch --encoder e5-small-multilingual:onnx \
        --encoder e5-small-multilingual:torch --json /tmp/query-encoding.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from openmsd.corpus.store import Corpus
from openmsd.models.registry import load_model
from openmsd.server.resources import THREADS_ENV

BATCHES = (1, 4, 8, 16, 32)


def titles(corpus_dir: Path, count: int) -> list[str]:
    """``count`` titles of the corpus (a repeatable sample)."""
    rows = Corpus(corpus_dir).connect().execute(
        "SELECT title FROM papers WHERE title IS NOT NULL ORDER BY hash(paper_id) LIMIT ?",
        [count]).fetchall()
    return [r[0] for r in rows]


def measure(encoder, texts: list[str], batch: int, repeats: int) -> dict[str, float]:
    """Median CPU ms per query and wall ms per batch of encoding ``texts`` ``batch`` at a time."""
    cpu, wall = [], []
    for _ in range(repeats):
        started, cpu_started = time.perf_counter(), time.process_time()
        for start in range(0, len(texts), batch):
            encoder.encode(texts[start:start + batch], "query", batch)
        cpu.append((time.process_time() - cpu_started) * 1000 / len(texts))
        wall.append((time.perf_counter() - started) * 1000 / -(-len(texts) // batch))
    return {"cpu_ms_per_query": round(statistics.median(cpu), 2),
            "wall_ms_per_batch": round(statistics.median(wall), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--encoder", action="append", default=None,
                        help="MODEL:BACKEND (repeatable); default muse-v3:torch and "
                             "e5-small-multilingual:onnx")
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="Threads per encoder ($OPENMSD_THREADS: ONNX Runtime's intra-op "
                             "threads, muse-v3's BLAS threads; torch.set_num_threads)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    os.environ[THREADS_ENV] = str(args.threads)  # ONNX Runtime's and muse-v3's BLAS threads
    texts = titles(args.corpus, args.queries)
    results: dict[str, dict[str, dict[str, float]]] = {}
    for spec in args.encoder or ["muse-v3:torch", "e5-small-multilingual:onnx"]:
        name, _, backend = spec.partition(":")
        encoder = load_model(name, backend or "torch")
        encoder.encode(texts[:8], "query", 8)  # warm-up
        results[spec] = {str(b): measure(encoder, texts, b, args.repeats) for b in BATCHES}
        print(spec, json.dumps(results[spec]), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "queries": len(texts),
                                         "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
