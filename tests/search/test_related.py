"""Embedding, the FAISS index and related-paper search on the shipped SciELO sample."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.corpus import Corpus
from openmsd.index import build_index, index_kind, load_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_vectors
from openmsd.search import PaperNotFoundError, find_paper, related_papers, search

ARTICLE = "10.1590/0101-3173.2022.v45n1.p139"  # cited by two commentaries in the sample
COMMENTARY = "10.1590/0101-3173.2022.v45n1.p159"
MODEL = "muse-v3"


@pytest.fixture(scope="module")
def corpus(indexed_root):
    return Corpus(indexed_root)


def test_embedding_is_resumable_and_never_twice(corpus, encoder):
    again = embed_corpus(corpus, encoder, MODEL)
    assert again.embedded == 0 and again.cached == 50 and again.no_text == 0
    ids, vectors = load_vectors(corpus, MODEL)
    assert len(ids) == 50 and vectors.shape == (50, 512)


def test_related_excludes_the_paper_and_explains_citation_links(corpus):
    results = related_papers(corpus, f"https://doi.org/{ARTICLE.upper()}", MODEL, k=14)
    ids = [r.paper_id for r in results]
    assert ARTICLE not in ids and len(ids) == 14
    commentary = next(r for r in results if r.paper_id == COMMENTARY)
    assert commentary.cited_by and "cites the query paper" in commentary.why
    other = next(r for r in results if r.paper_id == "10.1590/0101-3173.2022.v45n1.p165")
    assert other.co_cited == 0 and other.cited_by
    assert results == sorted(results, key=lambda r: -r.score)


def test_filters_by_language_and_year(corpus):
    results = related_papers(corpus, ARTICLE, MODEL, k=10, languages=["pt"])
    assert results and {r.language for r in results} == {"pt"}
    years = related_papers(corpus, ARTICLE, MODEL, k=10, years=(2022, 2022))
    assert years and all(r.year == 2022 for r in years)
    assert related_papers(corpus, ARTICLE, MODEL, k=10, languages=["xx"]) == []


def test_free_text_search_crosses_languages(corpus, encoder):
    results = search(corpus, "Cynicism and indifference in Foucault's The Courage of Truth",
                     encoder, MODEL, k=3)
    assert ARTICLE in [r.paper_id for r in results]  # a Spanish article for an English query
    with pytest.raises(ValueError, match="empty"):
        search(corpus, "  ", encoder, MODEL)


def test_unknown_papers_and_missing_indexes_are_clear_errors(corpus, tmp_path):
    with pytest.raises(PaperNotFoundError, match="no paper with id or DOI"):
        find_paper(corpus, "10.9999/none")
    with pytest.raises(FileNotFoundError, match="openmsd index build"):
        load_index(corpus, "minilm-en")


def test_every_alias_finds_the_paper_sql_finds(corpus):
    """find_paper's in-memory alias map answers as a scan of the aliases column does."""
    con = corpus.connect()
    rows = con.execute("SELECT DISTINCT unnest(aliases) AS a FROM papers").fetchall()
    assert len(rows) > 50  # DOIs and SciELO PIDs
    for (name,) in rows:
        expected = con.execute("SELECT paper_id FROM papers WHERE list_contains(aliases, ?) "
                               "ORDER BY paper_id LIMIT 1", [name]).fetchone()[0]
        assert find_paper(corpus, name) == expected
    with pytest.raises(PaperNotFoundError):
        find_paper(corpus, "scielo:not-a-pid")


def test_index_grows_incrementally(corpus, encoder, tmp_path):
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    ingest([SAMPLE / "unarxive"], copy.root)
    result = embed_corpus(copy, encoder, MODEL)
    assert result.embedded == 7 and result.cached == 50
    index, added = build_index(copy, MODEL)
    assert added == 7 and index.index.ntotal == 57


def test_cli_related_and_search_json(corpus):
    runner = CliRunner()
    result = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                 "-k", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 3
    missing = runner.invoke(app, ["related", str(corpus.root), "nope", "--model", MODEL])
    assert missing.exit_code == 2 and "no paper with id or DOI 'nope'" in missing.output
    bad_year = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                   "--year", "soon"])
    assert bad_year.exit_code == 2 and "--year" in bad_year.output


def test_filter_masks_equal_a_row_by_row_check(corpus):
    from openmsd.rank import corpus_papers
    from openmsd.search.ranking import allowed

    index = load_index(corpus, MODEL)
    rows = index.papers.to_pylist()
    papers = corpus_papers(corpus)
    for languages, years in [(["pt"], None), (["es", "en"], (2020, None)),
                             (None, (None, 2021)), (["xx"], (2000, 2030))]:
        low, high = years or (None, None)
        expected = [(not languages or row["language"] in languages)
                    and (low is None or (row["year"] is not None and row["year"] >= low))
                    and (high is None or (row["year"] is not None and row["year"] <= high))
                    for row in rows]
        assert index.allowed(languages, years).tolist() == expected
        ranked = allowed(corpus, papers, languages, years)  # the rankers' rows, in their order
        assert [papers.ids[i] for i in np.flatnonzero(ranked)] == sorted(
            row["paper_id"] for row, keep in zip(rows, expected, strict=True) if keep)
        assert 0 < sum(expected) < len(rows) or languages == ["xx"]


def test_an_index_of_another_kind_is_built_anew(corpus, tmp_path):
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    hnsw, added = build_index(copy, MODEL, "hnsw")  # the corpus has an exact index
    assert index_kind(hnsw.index) == "hnsw" and added == 50
    again, added = build_index(copy, MODEL)  # auto extends what is there
    assert index_kind(again.index) == "hnsw" and added == 0
    assert index_kind(load_index(copy, MODEL).index) == "hnsw"
    assert [r.paper_id for r in related_papers(copy, ARTICLE, MODEL, k=5)] == \
        [r.paper_id for r in related_papers(corpus, ARTICLE, MODEL, k=5)]


def test_default_rankers_fuse_text_and_citations_and_say_why(corpus):
    from openmsd.search import rank_related, rank_search

    results = rank_related(corpus, ARTICLE, k=5)  # hybrid-graph: muse-v3 + bm25-en + graph
    ids = [r.paper_id for r in results]
    assert ARTICLE not in ids and len(ids) == 5
    commentary = next(r for r in results if r.paper_id == COMMENTARY)
    assert "cites the query paper" in commentary.why
    assert any(w in ("similar text", "shared English words") for r in results for w in r.why)
    assert results == sorted(results, key=lambda r: -r.score)
    portuguese = rank_related(corpus, ARTICLE, k=5, languages=["pt"])
    assert portuguese and {r.language for r in portuguese} == {"pt"}
    found = rank_search(corpus, "Cynicism and indifference in Foucault's The Courage of Truth",
                        k=3)
    assert ARTICLE in [r.paper_id for r in found]
    graph_only = rank_related(corpus, ARTICLE, "co-citation+citation", k=3)
    assert graph_only and all(r.cited_by or r.cites or r.co_cited for r in graph_only)
    runner = CliRunner()
    unknown = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", "bm52"])
    assert unknown.exit_code == 2 and "bm25, bm25-en" in unknown.output
    default = runner.invoke(app, ["search", str(corpus.root), "Foucault", "-k", "2", "--json"])
    assert default.exit_code == 0, default.output
    assert len(json.loads(default.stdout)) == 2
