"""Per-request timings of a related-paper request in process, without HTTP or other clients:
what ``GET /api/papers/{id}/related?k=10`` does for random indexed papers of a corpus, as the
server does it (one shared DuckDB database, the index loaded once), step by step.

    python benchmarks/related_profile.py /tmp/server-load/n100000/corpus --requests 50

Prints the median and 95th percentile (ms) of: ``paper_details`` (the query paper with its
citation counts), the FAISS search alone, ``related`` (lookup, search, result metadata and
explanations) and the request's total (``paper_details`` + ``related``), after
``Resources.warm()`` (what the server loads at start and after a re-ingest: paper summaries and
records, the citation graph; timed as ``warm_ms``) and one warm-up request.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np

from openmsd.search import paper_details
from openmsd.server import Resources


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--model", default="muse-v3")
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    resources = Resources(args.corpus, [args.model])
    index = resources.index(args.model)
    ids = random.Random(args.seed).sample(index.ids, args.requests + 1)
    started = time.perf_counter()
    resources.warm()
    warm = time.perf_counter() - started
    ranker = resources.ranker(args.model)  # the served model, as the server answers with it
    resources.search.related(ids[0], ranker, args.k + 1)
    timings: dict[str, list[float]] = {"paper_details": [], "faiss_search": [], "related": [],
                                       "total": []}
    for paper_id in ids[1:]:
        t0 = time.perf_counter()
        paper_details(resources.corpus, paper_id)
        t1 = time.perf_counter()
        found = resources.search.related(paper_id, ranker, args.k + 1)
        t2 = time.perf_counter()
        vector = index.index.reconstruct(index.row(paper_id))[None, :]
        t3 = time.perf_counter()
        index.search(vector, args.k + 1, exclude=[paper_id])
        t4 = time.perf_counter()
        assert len(found) == args.k + 1
        for name, seconds in (("paper_details", t1 - t0), ("related", t2 - t1),
                              ("faiss_search", t4 - t3), ("total", t2 - t0)):
            timings[name].append(seconds * 1000)
    result = {"corpus": str(args.corpus), "papers": len(index.ids), "requests": args.requests,
              "index": type(index.index).__name__, "warm_ms": round(warm * 1000, 1),
              **{name: {"p50": round(float(np.percentile(ms, 50)), 1),
                        "p95": round(float(np.percentile(ms, 95)), 1)}
                 for name, ms in timings.items()},
              "load_average_1m": os.getloadavg()[0]}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
