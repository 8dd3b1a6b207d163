"""Related papers computed once per build (``openmsd index related``) answer exactly as the live
fusion, and only while they hold what would be ranked now."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model
from openmsd.rank import Fusion, Papers, Queries
from openmsd.rank.scorer import ExactScorer
from openmsd.search import corpus_scorer, is_current, lists_path, rank_related, stored_related

MODEL = "muse-v3"
RANKER = "hybrid-graph"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("lists") / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    corpus = Corpus(root)
    embed_corpus(corpus, load_model(MODEL), MODEL)
    build_index(corpus, MODEL)
    return corpus


def _answers(corpus: Corpus, k: int) -> dict[str, list[dict]]:
    ids = corpus_scorer(corpus, RANKER).papers.ids
    return {p: [r.as_dict() for r in rank_related(corpus, p, RANKER, k)] for p in ids}


def test_stored_lists_answer_as_the_live_fusion(corpus):
    live = {k: _answers(corpus, k) for k in (1, 4, 11, 50, 60)}
    scorer = corpus_scorer(corpus, RANKER)
    assert stored_related(corpus, RANKER, scorer) is None  # nothing stored yet
    result = CliRunner().invoke(app, ["index", "related", str(corpus.root)])
    assert result.exit_code == 0, result.output
    assert lists_path(corpus, RANKER).is_file()
    stored = stored_related(corpus, RANKER, scorer)
    assert stored is not None and stored.rows.shape == (len(scorer.papers), 50)
    assert (stored.rows >= 0).any(axis=1).all()
    for k, answers in live.items():  # k 60: deeper than stored, ranked live
        assert _answers(corpus, k) == answers
    # a language filter is ranked live, and still filters
    some = scorer.papers.ids[0]
    assert {r.language for r in rank_related(corpus, some, RANKER, 10, ["pt"])} <= {"pt"}


def _decoded(corpus: Corpus) -> tuple:
    stored = stored_related(corpus, RANKER, corpus_scorer(corpus, RANKER))
    assert stored is not None
    words = [[tuple(stored.signal_sets[c]) for c in row] for row in stored.signals]
    return stored.rows.tolist(), stored.scores.tolist(), words


def test_stored_lists_are_not_used_after_the_index_changes(corpus, tmp_path):
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c", symlinks=True))
    assert CliRunner().invoke(app, ["index", "related", str(copy.root)]).exit_code == 0
    one = _decoded(copy)
    result = CliRunner().invoke(app, ["index", "related", str(copy.root), "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert _decoded(copy) == one  # two processes rank the same lists
    build_index(copy, MODEL, full=True)  # a new index build: other HNSW/flat neighbours
    assert stored_related(copy, RANKER, corpus_scorer(copy, RANKER)) is None
    assert not is_current(copy, RANKER)


def test_a_ranker_that_is_not_a_fusion_is_refused(corpus):
    result = CliRunner().invoke(app, ["index", "related", str(corpus.root), "--ranker", "bm25"])
    assert result.exit_code != 0 and "fused rankers" in result.output


class _Fixed(ExactScorer):
    """Scores from a fixed (queries × collection) matrix."""

    generates = True

    def __init__(self, papers: Papers, name: str, matrix: np.ndarray):
        self.papers, self.name, self.matrix = papers, name, matrix

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        return self.matrix[np.maximum(queries.rows, 0)][:, candidates].copy()


def test_fused_ties_are_ordered_by_row_so_a_shorter_list_is_a_prefix():
    papers = Papers([f"p{i}" for i in range(8)], ["x"] * 8, ["en"] * 8)
    # member b ranks the papers in the reverse order of member a: every RRF sum ties
    a = np.tile(np.arange(8, 0, -1, dtype=np.float32), (8, 1))
    fused = Fusion("a+b", [_Fixed(papers, "a", a), _Fixed(papers, "b", a[:, ::-1].copy())])
    queries = Queries.of_rows(papers, [0, 5])
    full, full_scores, _ = fused.top_k_explained(queries, 7)
    for k in range(1, 7):
        rows, scores, _ = fused.top_k_explained(queries, k)
        assert (rows == full[:, :k]).all() and (scores == full_scores[:, :k]).all()
    for row, score in zip(full, full_scores, strict=True):
        order = list(zip(-score, row, strict=True))
        assert order == sorted(order) and len(set(score)) < len(score)  # ties, by row
