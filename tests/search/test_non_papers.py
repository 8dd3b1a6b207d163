"""Records that are not papers are left out of related, search, library, watch and recommend
by default, counted by kind, and included on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus
from openmsd.search import CitationRequest, SearchService, watch_library

MODEL = "muse-v3"
TOPIC = "dengue vector control with insecticides against Aedes aegypti in Brazilian cities"
PAPERS = [
    {"id": "p1", "title": "Dengue vector control in Brazilian cities",
     "abstract": f"We evaluate {TOPIC}.", "references": ["p2"]},
    {"id": "p2", "title": "Insecticide resistance of Aedes aegypti",
     "abstract": "Resistance of Aedes aegypti to insecticides used for dengue vector control."},
    {"id": "p3", "title": "Community mobilisation against dengue",
     "abstract": "Households remove breeding sites: community dengue vector control."},
    {"id": "p4", "title": "Protein folding with language models",
     "abstract": "Protein structure prediction from sequences."},
    {"id": "p5", "title": "Orchids of central Brazil",
     "abstract": "A floristic survey of orchids in the Cerrado."},
    {"id": "p6", "title": "Syntactic parsing of French",
     "abstract": "Dependency parsing for French treebanks."},
    # not papers
    {"id": "e1", "title": "Erratum: Dengue vector control in Brazilian cities",
     "abstract": f"In the article on {TOPIC}, the second author's name is misspelled."},
    {"id": "d1", "title": "Editorial: dengue vector control today",
     "abstract": f"This issue gathers work on {TOPIC}.", "type": "editorial"},
    {"id": "s1", "title": "Dengue vector control in Brazilian cities and Aedes aegypti"},
]
LEFT_OUT = {"erratum": 1, "editorial": 1, "stub": 1}


@pytest.fixture(scope="module")
def root(tmp_path_factory, encoder) -> Path:
    folder = tmp_path_factory.mktemp("non-papers")
    (folder / "papers.jsonl").write_text("\n".join(json.dumps(p) for p in PAPERS) + "\n")
    out = folder / "corpus"
    ingest([folder / "papers.jsonl"], out)
    corpus = Corpus(out)
    embed_corpus(corpus, encoder, MODEL)
    build_index(corpus, MODEL)
    return out


@pytest.fixture
def service(root) -> SearchService:
    return SearchService(Corpus(root))


def _ids(results) -> list[str]:
    return [r.paper_id for r in results]


def test_related_leaves_out_non_papers_and_counts_them(service):
    every = service.related("p1", "bm25", k=5, include_non_papers=True)
    assert {"e1", "d1", "s1"} <= set(_ids(every)[:5]) and every.left_out == {}
    papers = service.related("p1", "bm25", k=3)
    assert _ids(papers)[:2] == ["p2", "p3"]  # in their order, the non-papers skipped
    assert len(papers) == 3 and not {"e1", "d1", "s1"} & set(_ids(papers))
    assert papers.left_out == LEFT_OUT


def test_k_papers_are_found_below_the_non_papers(service):
    papers = service.related("p1", "bm25", k=5)
    assert len(papers) == 5 and not {"e1", "d1", "s1"} & set(_ids(papers))


def test_search_leaves_them_out_and_counts_them(service):
    every = service.search(TOPIC, "bm25", k=9, include_non_papers=True)
    assert {"e1", "d1", "s1"} & set(_ids(every)[:3])
    papers = service.search(TOPIC, "bm25", k=2)
    assert _ids(papers) == [i for i in _ids(every) if i[0] == "p"][:2]
    # counted: the non-papers ranked above the last paper shown
    above = _ids(every)[:_ids(every).index(_ids(papers)[-1])]
    assert sum(papers.left_out.values()) == sum(i[0] != "p" for i in above) > 0


def test_library_watch_and_recommend_leave_them_out(service, root, encoder):
    corpus = Corpus(root)
    every = service.library(["p1"], MODEL, k=8, include_non_papers=True)
    assert {"e1", "s1"} & set(_ids(every))
    papers = service.library(["p1"], MODEL, k=3)
    assert not {"e1", "d1", "s1"} & set(_ids(papers)) and papers.left_out
    watched = watch_library(corpus, ["p1"], [], MODEL, k=3, record=False)
    assert not {"e1", "d1", "s1"} & set(_ids(watched.results))
    assert watched.left_out and watched.as_dict()["left_out"] == watched.left_out
    assert {"e1", "d1", "s1"} & set(_ids(watch_library(
        corpus, ["p1"], [], MODEL, k=8, record=False, include_non_papers=True).results))
    request = CitationRequest(f"Cities rely on {TOPIC} [1].", MODEL, 3)
    location, = service.recommend(request, encoder)
    assert not {"e1", "d1", "s1"} & set(_ids(location.results)) and location.left_out
    assert location.as_dict()["left_out"] == location.left_out
    every_location, = service.recommend(
        CitationRequest(request.text, MODEL, 3, include_non_papers=True), encoder)
    assert {"e1", "d1", "s1"} & set(_ids(every_location.results))
    assert every_location.left_out == {}


def test_the_command_line_says_what_it_left_out(root):
    runner = CliRunner()
    shown = runner.invoke(app, ["related", str(root), "p1", "--model", "bm25", "-k", "3",
                                "--json"])
    assert shown.exit_code == 0, shown.output
    assert not {"e1", "d1", "s1"} & {r["paper_id"] for r in json.loads(shown.stdout)}
    assert ("3 records that are not papers left out (1 editorial, 1 erratum, 1 stub); "
            "--include-non-papers shows them") in shown.stderr
    every = runner.invoke(app, ["related", str(root), "p1", "--model", "bm25", "-k", "5",
                                "--json", "--include-non-papers"])
    assert every.exit_code == 0, every.output
    assert {"e1", "d1", "s1"} <= {r["paper_id"] for r in json.loads(every.stdout)}
    assert "left out" not in every.stderr
    found = runner.invoke(app, ["search", str(root), "Erratum editorial", "--model", "bm25",
                                "-k", "3"])
    assert found.exit_code == 0, found.output
    assert "not a paper" in found.stderr or "not papers" in found.stderr
