"""The tuning objective ranks as trec_eval does: the higher score first, ties by the higher
document id, a query's own paper and the papers outside its candidates never above a relevant
one (random score matrices with many ties, checked against counting every column)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from openmsd.eval import Pool
from openmsd.experiment.pools import TuningPool
from openmsd.experiment.weights import Judged


def counted_ranks(scores: np.ndarray, ids: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """A relevant pair's rank by counting the columns ranked above it (its row of ``scores``
    and ``ids``; id -1: no paper)."""
    own = scores[ids == doc]
    if not len(own):
        return np.inf
    real = ids >= 0
    return 1 + int(((scores > own) & real).sum() + ((scores == own) & (ids > doc) & real).sum())


def judged_pool(papers: int, queries: int, seed: int) -> tuple[Pool, np.random.Generator]:
    rng = np.random.default_rng(seed)
    ids = [f"p{i:03d}" for i in range(papers)]
    pairs = {(int(q), int(d)) for q, d in zip(rng.integers(0, queries, 6 * queries),
                                              rng.integers(0, papers, 6 * queries),
                                              strict=True) if q != d}
    query, doc = zip(*sorted(pairs), strict=True)
    judgements = pa.table({"task": rng.choice(["citation", "co-citation"], len(query)).tolist(),
                           "query": [ids[q] for q in query], "doc": [ids[d] for d in doc],
                           "direction": ["x"] * len(query)})
    return Pool("train", pa.table({"paper_id": ids}), judgements, {}), rng


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranks_of_a_whole_pool_are_those_counted_column_by_column(seed):
    pool, rng = judged_pool(papers=60, queries=20, seed=seed)
    scores = rng.integers(0, 4, (60, 60)).astype(np.float32)  # a few values: many ties
    scores[rng.random(scores.shape) < 0.1] = -np.inf
    scores[scores == 0] = -0.0 if seed else 0.0
    np.fill_diagonal(scores, -np.inf)
    judged = Judged(pool, None)
    everyone = np.arange(60)
    expected = [counted_ranks(scores[q], everyone, d)
                for q, d in zip(judged.query, judged.doc, strict=True)]
    assert judged.ranks(scores).tolist() == expected


@pytest.mark.parametrize("seed", [3, 4])
def test_ranks_among_candidates_leave_out_what_a_query_never_retrieves(seed):
    pool, rng = judged_pool(papers=80, queries=25, seed=seed)
    rows = np.arange(25)
    columns = np.full((25, 30), -1, np.int64)
    for row in rows:  # each query's candidates: some of the pool, ascending, then padding
        found = np.sort(rng.choice(80, rng.integers(5, 30), replace=False))
        columns[row, :len(found)] = found
    scores = np.where(columns >= 0, rng.integers(0, 3, columns.shape), -np.inf
                      ).astype(np.float32)
    tuning = TuningPool(pool, pool.judgements, rows, columns)
    judged = Judged(tuning, None)
    expected = [counted_ranks(scores[r], columns[r], d)
                for r, d in zip(judged.row, judged.doc, strict=True)]
    found = judged.ranks(scores)
    assert np.isinf(found).any() and np.isfinite(found).any()
    assert found.tolist() == expected


def test_module_examples():
    import doctest

    from openmsd.experiment import contexts, pools, weights

    for module in (contexts, pools, weights):
        assert doctest.testmod(module).failed == 0, module.__name__
