"""Retrieval evaluation: metrics against hand-computed values, exact blocked top-k, the
``openmsd eval retrieval`` contract on a real cross-lingual set (TALN) and bad input."""

from __future__ import annotations

import json
from math import log2
from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.eval.retrieval import (
    RetrievalEvalError,
    evaluate_ranking,
    evaluate_retrieval,
    rank,
    record_text,
)
from openmsd.ingest.queries import read_qrels, read_records
from openmsd.rank.dense import DenseScorer
from openmsd.rank.lexical import LexicalScorer
from openmsd.rank.scorer import Papers
from openmsd.rank.topk import top_k
from openmsd.report import Report

runner = CliRunner()
CONTRACT_METRICS = {"MAP", "nDCG@10", "MRR", "Recall@1", "Recall@10", "Recall@100"}

# A hand-made run: per query, its judgements, its ranking, and its metrics worked out by hand.
HAND = {
    # relevant d1 (rank 2) and d3 (rank 4): AP = (1/2 + 2/4) / 2
    "q1": ({"d1": 1, "d3": 1}, ["d2", "d1", "d4", "d3"],
           {"MAP": 0.5, "MRR": 0.5, "Recall@1": 0.0, "Recall@10": 1.0, "Recall@100": 1.0,
            "nDCG@10": (1 / log2(3) + 1 / log2(5)) / (1 + 1 / log2(3))}),
    # graded: d5 is 2, d6 is 1, d9 judged non-relevant; nDCG gains are the grades
    "q2": ({"d5": 2, "d6": 1, "d9": 0}, ["d6", "d9", "d5"],
           {"MAP": (1 / 1 + 2 / 3) / 2, "MRR": 1.0, "Recall@1": 0.5, "Recall@10": 1.0,
            "Recall@100": 1.0, "nDCG@10": (1 + 2 / log2(4)) / (2 + 1 / log2(3))}),
    # the relevant document is never retrieved
    "q3": ({"d7": 1}, ["d1", "d2"],
           {"MAP": 0.0, "MRR": 0.0, "Recall@1": 0.0, "Recall@10": 0.0, "Recall@100": 0.0,
            "nDCG@10": 0.0}),
    # one of two relevant documents retrieved: AP divides by both
    "q4": ({"d1": 1, "d8": 1}, ["d1"],
           {"MAP": 0.5, "MRR": 1.0, "Recall@1": 0.5, "Recall@10": 0.5, "Recall@100": 0.5,
            "nDCG@10": 1 / (1 + 1 / log2(3))}),
}


@pytest.mark.parametrize("query", sorted(HAND))
def test_metrics_of_one_query_match_hand_computed_values(query):
    judged, ranking, expected = HAND[query]
    assert evaluate_ranking({query: judged}, {query: ranking}) == pytest.approx(expected)


def test_metrics_are_means_over_queries_and_a_missing_ranking_retrieves_nothing():
    metrics = evaluate_ranking({q: v[0] for q, v in HAND.items()},
                               {q: v[1] for q, v in HAND.items() if q != "q3"})
    assert set(metrics) == CONTRACT_METRICS
    for name in CONTRACT_METRICS:
        assert metrics[name] == pytest.approx(sum(v[2][name] for v in HAND.values()) / 4)
    assert metrics["MAP"] == pytest.approx((0.5 + 5 / 6 + 0 + 0.5) / 4)
    with pytest.raises(ValueError, match="without a relevant document"):
        evaluate_ranking({"q": {"d": 0}}, {"q": ["d"]})


class AngleEncoder:
    """A fake dense encoder: 'query' is (1, 0); 'doc j' is at angle j degrees / 4, so doc j
    ranks j + 1. Records which kind each call embedded."""

    name, dim = "angle", 2

    def __init__(self) -> None:
        self.kinds: list[tuple[str, int]] = []

    def encode(self, texts, kind="passage", batch_size=32):
        self.kinds.append((kind, len(texts)))
        angles = [0.0 if t == "query" else np.radians(int(t.split()[1]) / 4) for t in texts]
        return np.array([[np.cos(a), np.sin(a)] for a in angles], np.float32)


def test_evaluation_ranks_top_100_with_query_and_passage_kinds():
    corpus = {f"d{j}": f"doc {j}" for j in range(150)}
    queries = {"a": "query", "b": "query", "c": "query"}
    qrels = {"a": {"d0": 1, "d120": 1},  # d120 ranks 121: beyond the cutoff
             "b": {"d130": 2},  # never within the cutoff
             "c": {"d3": 0}}  # no relevant document: skipped
    encoder = AngleEncoder()

    def ranker(papers):
        return DenseScorer.from_texts(papers, encoder)

    result = evaluate_retrieval(queries, corpus, qrels, ranker)
    assert sorted(encoder.kinds) == [("passage", 150), ("query", 2)]
    assert (result["n_queries"], result["n_docs"], result["skipped_queries"]) == (2, 150, 1)
    assert result["metrics"] == pytest.approx({"MAP": 0.25, "MRR": 0.5, "Recall@1": 0.25,
                                               "Recall@10": 0.25, "Recall@100": 0.25,
                                               "nDCG@10": 1 / (1 + 1 / log2(3)) / 2})
    with pytest.raises(RetrievalEvalError, match="no query has a relevant document"):
        evaluate_retrieval({"c": "query"}, corpus, qrels, ranker)


@pytest.mark.parametrize("block_size", [1, 7, 64, 10_000])
@pytest.mark.parametrize("k", [1, 10, 211, 500])
def test_top_k_equals_a_brute_force_sort(block_size, k):
    rng = np.random.default_rng(block_size + k)
    queries = rng.standard_normal((37, 16)).astype(np.float32)
    docs = rng.standard_normal((211, 16)).astype(np.float32)
    indices, scores = top_k(queries, docs, k, block_size)
    full = queries @ docs.T
    expected = np.argsort(-full, axis=1, kind="stable")[:, :k]
    assert indices.shape == scores.shape == (37, min(k, 211))
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(full, expected, axis=1),
                               rtol=1e-5, atol=1e-5)


def test_top_k_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="do not match"):
        top_k(np.zeros((2, 3), np.float32), np.zeros((4, 5), np.float32), 2)


def test_bm25_ranks_matching_documents_only():
    docs = ["protein folding in cells", "multilingual retrieval of papers", "protein papers"]
    scorer = LexicalScorer(Papers(["a", "b", "c"], docs, ["en"] * 3))
    indices, scores = rank(scorer, ["protein folding", "zzz"], k=100)
    assert indices.shape == (2, 3)
    assert indices[0].tolist() == [0, 2, -1] and np.isinf(scores[0, 2])
    assert indices[1].tolist() == [-1, -1, -1]


def test_record_text_uses_any_of_title_abstract_context_text():
    assert record_text({"title": "A parser", "abstract": "We parse."}) == \
        "Title: A parser. Abstract: We parse."
    assert record_text({"context": "as shown by [3]", "text": "Body."}) == "as shown by [3] Body."
    assert record_text({"title": " ", "keywords": ["x"]}) == ""


# --- the command line ------------------------------------------------------------------------

def write_jsonl(path: Path, rows: list) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def taln(shared_data_module, tmp_path_factory) -> tuple[Path, Path, Path]:
    """French abstracts as queries, the same papers' English abstracts as the corpus, identity
    qrels: the 40 pairs with the shortest French abstracts of at least 300 characters (fast)."""
    source = shared_data_module / "taln" / "papers.jsonl"
    if not source.is_file():
        pytest.skip("taln/papers.jsonl is not present")
    pairs = []
    for line in source.read_bytes().splitlines():
        paper = orjson.loads(line)
        english = ((paper.get("translations") or {}).get("en") or {}).get("abstract")
        if english and len(paper.get("abstract") or "") >= 300:
            pairs.append((len(paper["abstract"]), paper["id"], paper["abstract"], english))
    pairs = sorted(pairs)[:40]
    root = tmp_path_factory.mktemp("taln")
    queries = write_jsonl(root / "q.jsonl", [{"id": i, "abstract": fr} for _, i, fr, _ in pairs])
    corpus = write_jsonl(root / "c.jsonl", [{"_id": i, "abstract": en} for _, i, _, en in pairs])
    qrels = root / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{i}\t{i}\t1\n"
                                                              for _, i, _, _ in pairs))
    return queries, corpus, qrels


def run_eval(queries: Path, corpus: Path, qrels: Path, model: str, *extra: str):
    return runner.invoke(app, ["eval", "retrieval", "--queries", str(queries), "--corpus",
                               str(corpus), "--qrels", str(qrels), "--model", model, *extra])


def test_cli_prints_the_contract_and_muse_beats_bm25_across_languages(taln, tmp_path):
    recall = {}
    for model in ("bm25", "muse-v3"):
        out = tmp_path / f"{model}.json"
        result = run_eval(*taln, model, "--out", str(out))
        assert result.exit_code == 0, result.output
        printed = json.loads(result.stdout)
        assert {"model", "n_queries", "n_docs", "metrics"} <= set(printed)
        assert set(printed["metrics"]) == CONTRACT_METRICS
        assert (printed["model"], printed["n_queries"], printed["n_docs"]) == (model, 40, 40)
        assert printed["problems"] == 0 and printed["skipped_queries"] == 0
        assert all(0 <= v <= 1 for v in printed["metrics"].values())
        assert json.loads(out.read_text()) == printed
        recall[model] = printed["metrics"]["Recall@1"]
    print(f"TALN fr->en, 40 papers: Recall@1 bm25 {recall['bm25']:.3f}, "
          f"muse-v3 {recall['muse-v3']:.3f}")
    # per-language stop words and stemming make BM25 find many of 40 French→English pairs by
    # names and terms; the multilingual encoder still finds more
    assert recall["muse-v3"] >= 0.8 and recall["muse-v3"] > recall["bm25"]


def test_bad_input_is_reported_with_file_and_line_and_counted(tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "q1", "title": "protein folding"}\n'
                       '{"id": \n'  # line 2: malformed
                       '{"title": "no id"}\n'  # line 3
                       '{"id": "q2", "keywords": ["no text"]}\n'  # line 4
                       '{"id": "q1", "title": "again"}\n'  # line 5: duplicate
                       '{"id": "q3", "abstract": "papers about retrieval"}\n'
                       '{"id": "q4", "text": "unjudged"}\n')
    corpus = write_jsonl(tmp_path / "c.jsonl", [
        {"_id": "d1", "title": "Protein folding"}, {"_id": "d2", "abstract": "Retrieval of papers"},
        {"_id": "d3", "text": "Something else"}])
    qrels = tmp_path / "r.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n"
                     "q1\td1\t1\n"
                     "q1\td2\n"  # line 3: two fields
                     "q3\td2\tyes\n"  # line 4: not an integer
                     "q9\td2\t1\n"  # line 5: unknown query
                     "q3\td9\t1\n"  # line 6: unknown doc
                     "q3\td2\t2\n"
                     "q3\td2\t1\n")  # line 8: duplicate
    result = run_eval(queries, corpus, qrels, "bm25")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["problems"] == 9
    assert printed["problems_by_reason"] == {
        "malformed JSON": 1, "record without an id": 1, "record without text": 1,
        "duplicate id": 1, "wrong number of fields": 1, "relevance not an integer": 1,
        "unknown query id": 1, "unknown doc id": 1, "duplicate judgement": 1}
    assert (printed["n_queries"], printed["skipped_queries"], printed["n_docs"]) == (2, 1, 3)
    assert printed["metrics"]["MAP"] == 1.0
    for where in ("q.jsonl: line 2: malformed JSON", "q.jsonl: line 4: record without text",
                  "r.tsv: line 3: wrong number of fields", "r.tsv: line 6: unknown doc id"):
        assert where in result.stderr
    strict = run_eval(queries, corpus, qrels, "bm25", "--strict")
    assert strict.exit_code == 2 and "q.jsonl: line 2: malformed JSON" in strict.output


def test_unusable_input_and_unknown_models_fail_with_exit_2(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"id": "d1", "title": "A"}])
    qrels = tmp_path / "r.tsv"
    qrels.write_text("d1\td1\t1\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = run_eval(empty, corpus, qrels, "bm25")
    assert result.exit_code == 2 and "empty.jsonl: empty file" in result.output
    result = run_eval(corpus, corpus, tmp_path / "missing.tsv", "bm25")
    assert result.exit_code == 2 and "missing.tsv: no such file" in result.output
    (tmp_path / "bad.tsv").write_text("d1 d1 1\n")
    result = run_eval(corpus, corpus, tmp_path / "bad.tsv", "bm25")
    assert result.exit_code == 2 and "bad.tsv: no usable judgements" in result.output
    result = run_eval(corpus, corpus, qrels, "no-such-model")
    assert result.exit_code == 2 and "muse-v3" in result.output and "bm25" in result.output


def test_readers_keep_file_order_and_report_problems(tmp_path):
    report = Report()
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": 2, "title": "B"}, {"_id": "a", "text": "A"}])
    assert list(read_records(path, report, record_text)) == ["2", "a"]
    qrels = tmp_path / "r.tsv"
    qrels.write_text("2\ta\t1.0\n\n2\t2\t0\n")
    assert read_qrels(qrels, report, {"2"}, {"2", "a"}) == {"2": {"a": 1, "2": 0}}
    assert report.problems == []
