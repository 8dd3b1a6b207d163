"""Where OpenAlex has no abstract, Crossref's (JATS) fills it: the corpus keeps where each
abstract came from (``abstract_source``) and the kind of work (``doc_type``), and the paper page
shows both; markup in a Crossref abstract stays inert."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from tests.fetch.apiserver import OPENALEX_KEY, Server, crossref_work, openalex_work

runner = CliRunner()
MODEL = "muse-v3"


@pytest.fixture(autouse=True)
def _no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)


def _run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_crossref_abstracts_fill_the_gaps_with_their_source_shown(api: Server,
                                                                   tmp_path: Path) -> None:
    api.world.crossref["10.5555/test.1005"] = crossref_work(
        "10.5555/test.1005", "A treebank of French",
        'The French Treebank, <script>alert("x")</script> described &amp; annotated.', [])
    api.world.add(openalex_work(1013, "Une thèse sur les arbres", None, 2020, "fr", ["Eve"],
                                [1001], work_type="dissertation", xpac=True))
    api.world.add(openalex_work(1014, "Entities", None, 2021, "en", ["Flo"], [1001]))
    api.world.crossref["10.5555/test.1014"] = crossref_work(
        "10.5555/test.1014", "Entities", '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/hostname">'
        '<!ENTITY b "&e;&e;">]>Text &b; here.', [])
    works, cross, corpus = tmp_path / "w.jsonl.gz", tmp_path / "c.json", tmp_path / "corpus"
    _run("fetch", "openalex", "W1001", "--citing", "--out", works, "--api-url", api.openalex,
         "--api-key", OPENALEX_KEY)
    _run("fetch", "crossref", "--lacking-in", works, "--out", cross, "--mailto",
         "me@example.org", "--api-url", api.crossref)
    _run("ingest", works, cross, "--out", corpus)
    papers = {row["paper_id"]: row for row in Corpus(corpus).read("papers").to_pylist()}
    treebank = papers["10.5555/test.1005"]
    assert treebank["abstract"] == ("The French Treebank, alert(\"x\") described & annotated.")
    assert treebank["abstract_source"] == "crossref"
    assert papers["10.5555/test.1004"]["abstract_source"] == "openalex"
    assert papers["10.5555/test.1013"]["doc_type"] == "dissertation"  # an xpac work, kept
    assert papers["10.5555/test.1013"]["abstract_source"] is None
    assert papers["10.5555/test.1004"]["doc_type"] == "article"
    entities = papers["10.5555/test.1014"]["abstract"]  # declared entities never expanded
    assert "Text" in entities and "here." in entities
    hostname = Path("/etc/hostname")
    assert "&e;&e;" not in entities
    assert not hostname.exists() or hostname.read_text().strip() not in entities

    _run("embed", corpus, "--model", MODEL)
    _run("index", "build", corpus, "--model", MODEL)
    from openmsd.server import create_app

    with TestClient(create_app(corpus, [MODEL], watch_s=0)) as client:
        page = client.get("/papers/10.5555/test.1005").text
        assert "abstract from Crossref" in page and "<script>alert" not in page
        thesis = client.get("/papers/10.5555/test.1013").text
        assert 'class="badge type">dissertation<' in thesis
        record = client.get("/api/papers/10.5555/test.1005").json()
        assert record["abstract_source"] == "crossref"
        assert record["type"] == "article"  # OpenAlex's, the first input's, over Crossref's
