"""The search service answers every question one way, and its resources live as long as their
owner: a corpus object's, fresh for another corpus, a new build, vectors, index or spec."""

from __future__ import annotations

import doctest
import json
import os
import shutil

import pytest
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.corpus import Corpus
from openmsd.index import build_index, load_index
from openmsd.ingest import ingest
from openmsd.rank import ranker_path
from openmsd.search import (
    CitationRequest,
    Location,
    Recommendation,
    SearchResources,
    SearchService,
    load_citation_graph,
    load_paper_records,
    rank_related,
    resources_of,
)
from openmsd.vectors import vectors_dir

MODEL = "muse-v3"
ARTICLE = "10.1590/0101-3173.2022.v45n1.p139"


@pytest.fixture(scope="module")
def root(indexed_root):
    return indexed_root


def test_a_corpus_object_keeps_one_resources_and_another_object_its_own(root):
    corpus = Corpus(root)
    assert resources_of(corpus) is resources_of(corpus)
    assert SearchService(corpus).resources is resources_of(corpus)
    assert load_paper_records(corpus) is load_paper_records(corpus)  # read once
    other = Corpus(root)  # another command's corpus: its own resources, read anew
    assert resources_of(other) is not resources_of(corpus)
    assert load_paper_records(other) is not load_paper_records(corpus)
    assert load_paper_records(other).rows == load_paper_records(corpus).rows


def test_two_corpora_do_not_share_caches(root, tmp_path):
    one = Corpus(root)
    two = Corpus(shutil.copytree(root, tmp_path / "two", symlinks=True))
    first, second = SearchService(one), SearchService(two)
    assert first.scorer("bm25") is not second.scorer("bm25")
    assert load_citation_graph(one) is not load_citation_graph(two)
    assert first.resources.root != second.resources.root
    # the same answers, from each corpus's own structures
    assert first.related(ARTICLE, "hybrid-graph") == second.related(ARTICLE, "hybrid-graph")


def test_rebuilt_vectors_index_or_spec_give_fresh_resources(root, tmp_path, encoder):
    corpus = Corpus(shutil.copytree(root, tmp_path / "c", symlinks=True))
    service = SearchService(corpus)
    resources = service.resources
    scorer = service.scorer(MODEL)
    index_build = resources.index_build(MODEL)
    assert service.scorer(MODEL) is scorer and resources.built_scorer(MODEL) is scorer
    build_index(corpus, MODEL, full=True)  # another index build: the lists' key changes
    assert resources.index_build(MODEL) != index_build
    for part in vectors_dir(corpus, MODEL).glob("*.parquet"):  # vectors written again
        os.utime(part, ns=(part.stat().st_atime_ns, part.stat().st_mtime_ns + 10**9))
    assert resources.built_scorer(MODEL) is None
    fresh = service.scorer(MODEL)
    assert fresh is not scorer
    bm25 = service.scorer("bm25")
    path = ranker_path(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({}))  # 'openmsd train ranker' wrote a spec: every ranker anew
    assert resources.built_scorer("bm25") is None and service.scorer("bm25") is not bm25


def test_a_new_build_gives_fresh_resources(root, tmp_path):
    corpus = Corpus(shutil.copytree(root, tmp_path / "c", symlinks=True))
    resources = resources_of(corpus)
    records, scorer = load_paper_records(corpus), resources.scorer("bm25")
    build = resources.build
    ingest([SAMPLE / "unarxive"], corpus.root)  # a re-ingest: another build
    assert resources.current_build() != build
    assert load_paper_records(corpus) is not records
    assert resources.build != build and resources.scorer("bm25") is not scorer
    assert len(resources.scorer("bm25").papers) == len(scorer.papers) + 7


def test_a_served_model_answers_as_a_command_does(root, encoder):
    corpus = Corpus(root)
    service = SearchService(corpus, SearchResources(corpus))
    index = load_index(corpus, MODEL)
    asked: list[str] = []

    def served_encoder():
        asked.append(MODEL)
        return encoder

    service.serve_model(MODEL, lambda: index, served_encoder)
    served = service.related(ARTICLE, MODEL, 5)
    command = SearchService(Corpus(root), SearchResources(Corpus(root)))
    assert [r.as_dict() for r in served] == [r.as_dict() for r in
                                             command.related(ARTICLE, MODEL, 5)]
    assert any("cites the query paper" in r.why for r in served)
    assert not asked  # a paper's related papers encode nothing
    assert service.built(MODEL) is not None  # built once, then answered at once
    fused = service.related(ARTICLE, "hybrid-graph", 5)
    assert [r.as_dict() for r in fused] == [r.as_dict() for r in
                                            rank_related(Corpus(root), ARTICLE, "hybrid-graph", 5)]
    text = "Foucault e a filosofia"
    assert service.search(text, MODEL, 3) == service.search(
        text, MODEL, 3, vectors={MODEL: encoder.encode([text], "query")})
    assert asked  # the free text went through the served encoder
    with pytest.raises(ValueError, match="empty"):
        service.search("  ", MODEL)


def test_recommend_takes_a_request_and_gives_typed_locations(root, encoder):
    service = SearchService(Corpus(root))
    request = CitationRequest("Foucault wrote about power and knowledge [1]. Discipline and "
                              "punishment shaped the prison [2, 3].", MODEL, 3, explain=True)
    found = service.recommend(request, encoder)
    assert [type(x) for x in found] == [Location, Location]
    assert all(isinstance(r, Recommendation) for x in found for r in x.results)
    first, second = (x.as_dict() for x in found)
    assert list(first) == ["location", "sentence_number", "sentence", "markers", "cites",
                           "context", "supplemental", "ranking", "results", "left_out"]
    assert second["cites"] == 2 and len(second["cocited_set"]) == 2
    assert list(first["results"][0])[-4:] == ["why", "relevance", "drivers", "co_cited_with"]
    with pytest.raises(ValueError, match="no encoder"):
        service.recommend(request)  # nothing served, none given


def test_the_command_line_answers_as_the_service(root):
    result = CliRunner().invoke(app, ["related", str(root), ARTICLE, "-k", "4", "--json"])
    assert result.exit_code == 0, result.output
    shown = [r["paper_id"] for r in json.loads(result.stdout)]
    assert shown == [r.paper_id for r in SearchService(Corpus(root)).related(ARTICLE, k=4)]


def test_module_examples():
    from openmsd.rank import explain as explain_module

    assert doctest.testmod(explain_module).failed == 0
