"""The metric functions of openmsd.eval.metrics against their oracles: pytrec_eval (trec_eval's
C code) on complete runs and ranx on top-k lists, on random runs with ties and graded
judgements and on a real run (BM25, TALN French abstracts against their English ones)."""

from __future__ import annotations

import warnings

import numpy as np
import orjson
import pytest
import pytrec_eval
from ranx import Qrels, Run
from ranx import evaluate as ranx_evaluate

from openmsd.eval.metrics import (
    average_precision,
    hit_rate,
    ndcg,
    paired_t_test,
    rank_rows,
    recall,
    reciprocal_rank,
)
from openmsd.eval.ranks import PrecomputedRows, relevant_ranks
from openmsd.eval.retrieval import evaluate_ranking, text_papers
from openmsd.rank import Queries, load_scorer

TREC = {"map", "ndcg_cut_10", "recip_rank", "recall_10", "recall_100", "P_1"}


def _trec_ids(n: int) -> list[str]:
    return [f"d{i:04d}" for i in range(n)]


def _check_against_trec_eval(scores: np.ndarray, relevant: list[np.ndarray]) -> None:
    """Our metrics of the exact ranks equal trec_eval's on the complete run ``scores``
    (queries × docs; trec_eval orders equal scores by the higher id first)."""
    n_queries, n_docs = scores.shape
    ids = _trec_ids(n_docs)
    pair_query = np.repeat(np.arange(n_queries), [len(r) for r in relevant])
    pair_doc = np.concatenate(relevant)
    ranks = relevant_ranks(PrecomputedRows(scores.astype(np.float32)), np.arange(n_queries),
                           pair_query, pair_doc, tie_order=np.arange(n_docs),
                           exclude_self=False, budget=n_docs * 3)
    rows = rank_rows(pair_query, ranks, n_queries)
    ours = {"map": average_precision(rows), "ndcg_cut_10": ndcg(rows, 10),
            "recip_rank": reciprocal_rank(rows), "recall_10": recall(rows, 10),
            "recall_100": recall(rows, 100), "P_1": hit_rate(rows, 1)}
    qrels = {f"q{q}": {ids[d]: 1 for d in docs} for q, docs in enumerate(relevant)}
    run = {f"q{q}": {ids[d]: float(s) for d, s in enumerate(scores[q].astype(np.float32))}
           for q in range(n_queries)}
    reference = pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(run)
    for q in range(n_queries):
        for measure in TREC:
            assert ours[measure][q] == pytest.approx(reference[f"q{q}"][measure], abs=1e-6), \
                (q, measure)


@pytest.mark.parametrize("seed", range(5))
def test_metrics_equal_trec_eval_on_random_runs_with_ties(seed):
    rng = np.random.default_rng(seed)
    n_queries, n_docs = 15, 150
    scores = rng.integers(0, 6, (n_queries, n_docs)).astype(np.float64)  # many ties
    relevant = [rng.choice(n_docs, rng.integers(1, 20), replace=False)
                for _ in range(n_queries)]
    _check_against_trec_eval(scores, relevant)


def _taln_pairs(shared_data, n: int) -> tuple[list[str], list[str]]:
    french, english = [], []
    for line in (shared_data / "taln" / "papers.jsonl").read_bytes().splitlines():
        paper = orjson.loads(line)
        en = ((paper.get("translations") or {}).get("en") or {}).get("abstract")
        if en and paper.get("abstract"):
            french.append(paper["abstract"])
            english.append(en)
        if len(french) == n:
            break
    return french, english


def test_metrics_equal_trec_eval_and_ranx_on_a_real_run(shared_data):
    french, english = _taln_pairs(shared_data, 150)
    ids = _trec_ids(len(english))
    scorer = load_scorer("bm25", text_papers(ids, english))
    scores = np.asarray(scorer.score(Queries.of_texts(french), np.arange(len(ids))))
    rng = np.random.default_rng(0)
    # each French abstract's own English one, and two others (a graded set for ranx)
    relevant = [np.unique([q, *rng.choice(len(ids), 2)]) for q in range(len(french))]
    _check_against_trec_eval(scores, relevant)
    qrels = {f"q{q}": {ids[d]: 2 if d == q else 1 for d in docs}
             for q, docs in enumerate(relevant)}
    top, _ = scorer.top_k(Queries.of_texts(french), 100)
    ranking = {f"q{q}": [ids[d] for d in row if d >= 0] for q, row in enumerate(top.tolist())}
    _check_against_ranx(qrels, ranking)


def _check_against_ranx(qrels: dict[str, dict[str, int]], ranking: dict[str, list[str]]):
    ours = evaluate_ranking(qrels, ranking)
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} or {"none": 0.0}
           for q, docs in ranking.items()}
    names = {"MAP": "map", "nDCG@10": "ndcg@10", "MRR": "mrr", "Recall@1": "recall@1",
             "Recall@10": "recall@10", "Recall@100": "recall@100"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = ranx_evaluate(Qrels(qrels), Run(run), list(names.values()))
    for name, metric in names.items():
        assert ours[name] == pytest.approx(reference[metric], abs=1e-9), name


@pytest.mark.parametrize("seed", range(4))
def test_graded_top_k_metrics_equal_ranx(seed):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(300)]
    qrels, ranking = {}, {}
    for q in range(25):
        judged = rng.choice(300, rng.integers(1, 15), replace=False)
        qrels[f"q{q}"] = {docs[d]: int(rng.integers(1, 4)) for d in judged}
        listed = rng.choice(300, rng.integers(1, 120), replace=False)
        ranking[f"q{q}"] = [docs[d] for d in listed]
    _check_against_ranx(qrels, ranking)


def test_rank_rows_pads_and_sorts_and_the_metrics_of_empty_rows_are_zero():
    rows = rank_rows([1, 1, 0, 1], [9, 3, np.inf, 5], 3)
    assert rows.shape == (3, 3)
    assert rows[1].tolist() == [3, 5, 9] and np.isinf(rows[0, 0]) and np.isnan(rows[2]).all()
    for metric in (average_precision(rows), ndcg(rows, 10), reciprocal_rank(rows),
                   recall(rows, 10), hit_rate(rows, 10)):
        assert metric[0] == 0 and metric[2] == 0 and metric[1] > 0
    with pytest.raises(ValueError, match="needs k"):
        average_precision(rows, by="cutoff")


def test_paired_t_test_is_scipys_and_refuses_no_variance():
    from scipy import stats

    x, y = np.array([3.0, 4.0, 8.0, 1.0]), np.array([1.0, 4.5, 6.0, 0.0])
    test = paired_t_test(x, y)
    assert test["t"] == round(float(stats.ttest_rel(x, y).statistic), 4)
    assert test["p"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
    assert test["mean_difference"] == 1.125 and test["n_queries"] == 4
    assert paired_t_test(x, x)["t"] is None and paired_t_test([], [])["mean_difference"] is None
