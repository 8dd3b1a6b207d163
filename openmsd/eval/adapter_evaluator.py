"""The SDSM tasks on a pool of given vectors: how an adapter's model selection judges a fold.

Given a pool's paper ids, their vectors (rows in that order) and the relevant pairs
(``task``, ``query``, ``doc``), every query ranks the whole pool by cosine (never itself), as
``openmsd eval sdsm`` ranks a split, and the per-query AP is returned (``task``, ``query``,
``n_relevant``, ``AP``, ``nDCG@10``). :func:`openmsd.train.train_adapter` takes it as its
evaluator.

>>> import numpy as np, pyarrow as pa
>>> vectors = np.array([[1, 0], [0.9, 0.1], [0, 1]], np.float32)
>>> pairs = pa.table({"task": ["citation"], "query": ["a"], "doc": ["b"]})
>>> sdsm_per_query(["a", "b", "c"], vectors, pairs)["AP"].to_pylist()
[1.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from openmsd.eval.metrics import average_precision, ndcg, rank_rows
from openmsd.eval.ranks import DenseScorer, relevant_ranks

__all__ = ["sdsm_per_query"]


def sdsm_per_query(ids: Sequence[str], vectors: np.ndarray, pairs: pa.Table) -> pa.Table:
    """Per (task, query) AP and nDCG@10 of ranking the pool ``ids`` by the cosine of
    ``vectors`` for the relevant ``pairs`` (ties broken as trec_eval does: by id), sorted by
    task and query. The same figures as :func:`openmsd.eval.metrics.per_query` of the ranks,
    grouped in numpy: a fold is judged hundreds of times in one model selection."""
    position = {paper: i for i, paper in enumerate(ids)}
    order = np.argsort(np.argsort(np.asarray(ids, dtype=object), kind="stable"), kind="stable")
    tasks = np.asarray(pairs["task"].to_pylist(), dtype=object)
    query_ids = np.asarray(pairs["query"].to_pylist(), dtype=object)
    query_index = np.array([position[q] for q in query_ids], np.int64)
    doc_index = np.array([position[d] for d in pairs["doc"].to_pylist()], np.int64)
    queries, pair_query = np.unique(query_index, return_inverse=True)
    ranks = relevant_ranks(DenseScorer(vectors, vectors), queries, pair_query, doc_index,
                           tie_order=order)
    keys = sorted({(t, q) for t, q in zip(tasks, query_ids, strict=True)})
    row = {key: i for i, key in enumerate(keys)}
    group = np.array([row[(t, q)] for t, q in zip(tasks, query_ids, strict=True)], np.int64)
    rows = rank_rows(group, ranks, len(keys))
    return pa.table({"task": pa.array([k[0] for k in keys], pa.string()),
                     "query": pa.array([k[1] for k in keys], pa.string()),
                     "n_relevant": pa.array(np.bincount(group, minlength=len(keys)), pa.int64()),
                     "AP": pa.array(average_precision(rows)),
                     "nDCG@10": pa.array(ndcg(rows, 10))})
