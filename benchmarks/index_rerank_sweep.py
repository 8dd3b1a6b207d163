"""Recall@10 and queries/s of a built factory index over nprobe × re-ranking depth.

Loads the index that ``index_scale.py`` built under ``WORK/full`` and searches ``--queries`` of
its held-out queries (``WORK/queries.npy``) with :func:`openmsd.index.factory_index.search_factory`
at each setting, against the exact top-10 over the index's own stored vectors (streamed).

    python benchmarks/index_rerank_sweep.py /tmp/ivfpq/s3m --queries 100
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from index_scale import load_index_at

from openmsd.index import search_factory

K = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", type=Path, help="index_scale.py's --work directory")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--nprobe", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--rerank", type=int, nargs="+", default=[100, 200, 400, 800])
    args = parser.parse_args()
    index = load_index_at(args.work / "full")
    queries = np.load(args.work / "queries.npy")[:args.queries]
    vectors = index.vectors
    best = np.full((len(queries), K), -np.inf, np.float32)
    rows = np.full((len(queries), K), -1)
    for start in range(0, len(vectors), 200_000):
        scores = queries @ np.asarray(vectors[start:start + 200_000]).T
        both = np.hstack([best, scores])
        ids = np.hstack([rows, np.broadcast_to(np.arange(start, start + scores.shape[1]),
                                               scores.shape)])
        keep = np.argpartition(-both, K - 1, axis=1)[:, :K]
        best, rows = np.take_along_axis(both, keep, 1), np.take_along_axis(ids, keep, 1)
    print("nprobe rerank recall@10 q/s")
    for nprobe in args.nprobe:
        for rerank in args.rerank:
            index.settings.nprobe, index.settings.rerank = nprobe, rerank
            start = time.perf_counter()
            _, found = search_factory(index.index, queries, K, index.settings, vectors)
            seconds = time.perf_counter() - start
            recall = np.mean([len(set(f) & set(t)) / K for f, t in zip(found, rows, strict=True)])
            print(f"{nprobe} {rerank} {recall:.3f} {len(queries) / seconds:.1f}", flush=True)


if __name__ == "__main__":
    main()
