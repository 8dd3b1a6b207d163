"""Exact ranks and AP / nDCG@10 against hand-computed values and pytrec_eval on full runs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import pytrec_eval

from openmsd.eval import DenseScorer, per_query, relevant_ranks
from openmsd.eval.ranks import MatrixScorer, RandomScorer


def test_hand_computed_ap_and_ndcg():
    # relevant at ranks 1, 3 and 12 of the full ranking
    ranked = pa.table({"query": ["q"] * 3, "doc": ["a", "b", "c"], "rank": [3, 1, 12]})
    row = per_query(ranked, ["query"]).to_pylist()[0]
    assert row["n_relevant"] == 3
    assert row["AP"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 12) / 3)
    ideal = 1 + 1 / np.log2(3) + 1 / np.log2(4)
    assert row["nDCG@10"] == pytest.approx((1 + 1 / np.log2(4)) / ideal)


def test_keep_takes_the_other_relevant_documents_out_of_the_candidates():
    ranked = pa.table({"query": ["q"] * 3, "doc": ["a", "b", "c"], "rank": [1, 2, 4],
                       "direction": ["x", "y", "x"]})
    row = per_query(ranked, ["query"], keep="direction = 'x'").to_pylist()[0]
    # without b, c moves from rank 4 to 3
    assert row["n_relevant"] == 2 and row["AP"] == pytest.approx((1 + 2 / 3) / 2)


def _ties_trec_eval_way(scores: np.ndarray, ids: list[str]) -> list[int]:
    """Ranking of one query as trec_eval sorts: score descending, then doc id descending."""
    return sorted(range(len(ids)), key=lambda i: (-scores[i], [-ord(c) for c in ids[i]]))


@pytest.mark.parametrize("seed", range(6))
def test_ranks_and_metrics_equal_pytrec_eval_on_the_full_run(seed):
    rng = np.random.default_rng(seed)
    n_docs, n_queries, dim = 60, 12, 4
    # few distinct values: many ties, broken by id as trec_eval does
    docs = np.round(rng.standard_normal((n_docs, dim)), 0).astype(np.float32)
    ids = [f"d{i:03d}" for i in range(n_docs)]
    queries = rng.choice(n_docs, n_queries, replace=False)
    pair_query, pair_doc = [], []
    for qi, q in enumerate(queries):
        for d in rng.choice([d for d in range(n_docs) if d != q], rng.integers(1, 12),
                            replace=False):
            pair_query.append(qi)
            pair_doc.append(int(d))
    ranks = relevant_ranks(DenseScorer(docs, docs), queries, np.array(pair_query),
                           np.array(pair_doc), tie_order=np.arange(n_docs),
                           budget=n_docs * 3)  # tiny blocks: several query blocks and chunks
    ranked = pa.table({"query": [ids[queries[i]] for i in pair_query],
                       "doc": [ids[d] for d in pair_doc], "rank": ranks})
    ours = {row["query"]: row for row in per_query(ranked, ["query"]).to_pylist()}
    rank_of = {(i, d): int(r) for i, d, r in zip(pair_query, pair_doc, ranks, strict=True)}
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi, q in enumerate(queries):
        scores = docs @ docs[q]
        run[ids[q]] = {ids[d]: float(scores[d]) for d in range(n_docs) if d != q}
        qrels[ids[q]] = {ids[d]: 1 for (i, d) in rank_of if i == qi}
        order = [d for d in _ties_trec_eval_way(scores, ids) if d != q]
        assert all(rank == order.index(d) + 1 for (i, d), rank in rank_of.items() if i == qi)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
    for query, values in reference.items():
        assert ours[query]["AP"] == pytest.approx(values["map"], abs=1e-4)
        assert ours[query]["nDCG@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-4)


def test_the_query_is_never_a_candidate():
    docs = np.eye(3, dtype=np.float32)
    # the query scores itself highest; its partner comes right after
    docs[1] = [0.9, 0.1, 0]
    ranks = relevant_ranks(DenseScorer(docs, docs), np.array([0]), np.array([0]),
                           np.array([1]), np.arange(3))
    assert ranks.tolist() == [1]


def test_matrix_and_random_scorers():
    texts = ["a b", "b c", "c d"]
    scorer = MatrixScorer(lambda qs: np.array([[float(len(set(q.split()) & set(t.split())))
                                                 for t in texts] for q in qs]), texts, 3)
    assert relevant_ranks(scorer, np.array([0]), np.array([0]), np.array([1]),
                          np.arange(3)).tolist() == [1]
    random = RandomScorer(5000, seed=1)
    assert np.array_equal(random.rows(np.array([3])), random.rows(np.array([3])))
    ranks = relevant_ranks(random, np.arange(200), np.arange(200), (np.arange(200) + 1) % 5000,
                           np.arange(5000))
    assert 1500 < ranks.mean() < 3500  # uniform over the pool
    ap = per_query(pa.table({"query": np.arange(200), "rank": ranks}), ["query"])
    assert float(np.mean(ap["AP"].to_numpy())) < 0.01  # the random baseline scores about 0
