"""SDSM scoring at the merged-SciDocs size: 10,000 queries against a 120,000-paper pool.

The pool is 120,000 seeded, clustered, normalised 384-d vectors (the generator of
``search_index.py``); each of the 10,000 query papers (drawn from the pool) has 5 relevant
papers drawn from its own cluster, as SciDocs' five positives per anchor. ``openmsd`` scores
them as ``openmsd eval sdsm`` does: exact ranks of the relevant papers by blocked matrix
products (:func:`openmsd.eval.ranks.relevant_ranks`), then AP and nDCG@10 per query
(:func:`openmsd.eval.metrics.per_query`). Wall time and peak RSS of the whole evaluation.

The peer is ``pytrec_eval`` (trec_eval's C code) from a full run file: for each query, every
pool paper with its score. A full run of 10,000 × 120,000 (1.2 billion lines) does not fit in
memory here, so both are timed on the same ``--peer-queries`` queries and the ratio is per
query; the two must agree on every query's AP and nDCG@10.

    python benchmarks/sdsm_scoring.py
    python benchmarks/sdsm_scoring.py --queries 1000 --pool 20000   # a quick look
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from record import write_record

from openmsd.eval import DenseScorer, per_query, relevant_ranks

sys.path.insert(0, str(Path(__file__).parent))
from search_index import generate, rss_mib


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def judgements(vectors: np.ndarray, n_queries: int, per_query_relevant: int, seed: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query pool indices, and per pair its query's position and its relevant paper: the
    ``per_query_relevant`` nearest of 200 random pool papers to each query (related, not
    trivially the nearest of all)."""
    rng = np.random.default_rng(seed)
    queries = rng.choice(len(vectors), n_queries, replace=False)
    pair_query, pair_doc = [], []
    for i, q in enumerate(queries):
        sample = rng.choice(len(vectors), 200, replace=False)
        sample = sample[sample != q]
        nearest = sample[np.argsort(-(vectors[sample] @ vectors[q]))[:per_query_relevant]]
        pair_query += [i] * len(nearest)
        pair_doc += nearest.tolist()
    return queries, np.array(pair_query), np.array(pair_doc)


def ours(vectors: np.ndarray, queries: np.ndarray, pair_query: np.ndarray,
         pair_doc: np.ndarray) -> tuple[pa.Table, float]:
    """Per-query AP and nDCG@10 as ``openmsd eval sdsm`` computes them; the seconds taken."""
    start = time.perf_counter()
    ranks = relevant_ranks(DenseScorer(vectors, vectors), queries, pair_query, pair_doc,
                           tie_order=np.arange(len(vectors)))
    ranked = pa.table({"query": queries[pair_query], "rank": ranks})
    return per_query(ranked, ["query"]), time.perf_counter() - start


def peer(vectors: np.ndarray, queries: np.ndarray, pair_query: np.ndarray,
         pair_doc: np.ndarray) -> tuple[dict[str, dict[str, float]], float]:
    """pytrec_eval on the full run of ``queries`` (every pool paper but the query itself)."""
    import pytrec_eval

    start = time.perf_counter()
    names = [f"d{i}" for i in range(len(vectors))]
    qrels: dict[str, dict[str, int]] = {}
    for i, d in zip(pair_query, pair_doc, strict=True):
        qrels.setdefault(f"d{queries[i]}", {})[names[d]] = 1
    run = {}
    for q in queries:
        scores = (vectors @ vectors[q]).tolist()
        scores[q] = None
        run[f"d{q}"] = {n: s for n, s in zip(names, scores, strict=True) if s is not None}
    result = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", type=int, default=120_000)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--relevant", type=int, default=5)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--peer-queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    vectors = generate(args.pool, args.dim, clusters=max(10, args.pool // 500), groups=50,
                       noise=0.8, seed=args.seed)
    queries, pair_query, pair_doc = judgements(vectors, args.queries, args.relevant, args.seed)
    base = rss_mib()
    print(f"pool {args.pool:,} × {args.dim}, {args.queries:,} queries, {len(pair_doc):,} "
          f"relevant pairs; RSS before scoring {base:,.0f} MiB (the vectors: "
          f"{vectors.nbytes / 2**20:,.0f} MiB)", flush=True)
    cpu = time.process_time()
    table, seconds = ours(vectors, queries, pair_query, pair_doc)
    cpu = time.process_time() - cpu
    peak = peak_rss_mib()
    print(f"openmsd: {seconds:.1f} s ({cpu:.1f} CPU-s, load {os.getloadavg()[0]:.1f}) for "
          f"{args.queries:,} queries "
          f"({seconds / args.queries * 1000:.2f} ms/query), peak RSS {peak:,.0f} MiB; "
          f"MAP {np.mean(table['AP'].to_numpy()) * 100:.2f}, "
          f"nDCG@10 {np.mean(table['nDCG@10'].to_numpy()) * 100:.2f}", flush=True)

    subset = np.arange(args.peer_queries)
    keep = np.isin(pair_query, subset)
    small, small_seconds = ours(vectors, queries[subset], pair_query[keep], pair_doc[keep])
    reference, peer_seconds = peer(vectors, queries[subset], pair_query[keep], pair_doc[keep])
    ours_rows = {f"d{row['query']}": row for row in small.to_pylist()}
    worst = max(max(abs(ours_rows[q]["AP"] - v["map"]),
                    abs(ours_rows[q]["nDCG@10"] - v["ndcg_cut_10"]))
                for q, v in reference.items())
    per_ours = small_seconds / len(subset)
    per_peer = peer_seconds / len(subset)
    print(f"same {len(subset)} queries: openmsd {per_ours * 1000:.2f} ms/query, pytrec_eval "
          f"from the full run {per_peer * 1000:.1f} ms/query: {per_peer / per_ours:.0f}× "
          f"faster; largest difference in AP or nDCG@10: {worst:.2e}")
    print(f"pytrec_eval for all {args.queries:,} queries would need a "
          f"{args.queries * (args.pool - 1) / 1e9:.1f}-billion-line run; at its measured "
          f"rate: {per_peer * args.queries / 60:.0f} min against openmsd's "
          f"{seconds / 60:.1f} min")
    write_record(
        "sdsm_scoring",
        {"headline": f"{per_peer / per_ours:.0f}×",
         "headline_means": "per query, openmsd's exact-rank scoring over pytrec_eval (trec_eval) "
                           "from a full run file, on the same queries",
         "peer": "pytrec_eval from a full run file", "seconds": round(seconds, 1),
         "cpu_s": round(cpu, 1), "ms_per_query": round(seconds / args.queries * 1000, 3),
         "peer_ms_per_query": round(per_peer * 1000, 2), "peak_rss_mib": round(peak),
         "largest_difference": worst,
         "map": float(np.mean(table["AP"].to_numpy())),
         "ndcg10": float(np.mean(table["nDCG@10"].to_numpy()))},
        data={"pool": args.pool, "queries": args.queries, "relevant": args.relevant,
              "dim": args.dim, "peer_queries": args.peer_queries, "seed": args.seed},
        load_before=load_before, synthetic=True,
        notes="Seeded clustered vectors and generated judgements (5 relevant papers a query, "
              "as SciDocs): a speed and agreement figure, not a quality one.")


if __name__ == "__main__":
    main()
