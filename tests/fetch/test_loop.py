"""The loop a researcher runs, end to end on a local OpenAlex server: fetch from a BibTeX
library (citing, depth 2) -> ingest -> embed -> index -> serve; related to the library in the
CLI and the API; exports parsed back; update after the API changed."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import bibtexparser
import orjson
import pytest
import requests
from typer.testing import CliRunner

from openmsd.cli import app
from tests.fetch.apiserver import OPENALEX_KEY, World, openalex_work, serve, taln_world

runner = CliRunner()
MODEL = "muse-v3"
BIB = """@article{a, title = {Seed one}, doi = {10.5555/test.1040}}
@inproceedings{b, title = {Seed two}, doi = {https://doi.org/10.5555/TEST.1041}}
@misc{c, title = {Seed three}, url = {https://openalex.org/W1042}}
@article{gone, title = {A paper nobody knows}, doi = {10.5555/unknown.9}}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _served(corpus: Path) -> Iterator[str]:
    """``openmsd serve``'s app on a real uvicorn server on loopback, in a thread."""
    import uvicorn

    from openmsd.server import create_app

    config = uvicorn.Config(create_app(corpus, [MODEL], watch_s=0), host="127.0.0.1",
                            port=free_port(), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def world(shared_data_module: Path) -> World:
    return taln_world(shared_data_module / "taln" / "papers.jsonl", limit=120)


def test_fetch_ingest_embed_index_serve_update(world: World, tmp_path: Path) -> None:
    library = tmp_path / "my.bib"
    library.write_text(BIB, encoding="utf-8")
    works, corpus = tmp_path / "w.jsonl.gz", tmp_path / "mycorpus"
    for server in serve(world):
        output = _run("fetch", "openalex", "--seeds", str(library), "--citing", "--depth", "2",
                      "--max-works", "40", "--out", str(works), "--api-key", OPENALEX_KEY,
                      "--api-url", server.openalex)
        assert "doi:10.5555/unknown.9" in output and "1 unresolved" in output
        _run("ingest", str(works), "--out", str(corpus))
        _run("embed", str(corpus), "--model", MODEL)
        _run("index", "build", str(corpus), "--model", MODEL)
        stats = orjson.loads(_run("corpus", "stats", str(corpus), "--json"))
        assert stats["papers"] == 40

        # related to the whole library, in the CLI, exported as BibTeX and parsed back
        text = _run("related", str(corpus), "--seeds", str(library), "--model", MODEL,
                    "-k", "5", "--export", "bib")
        entries = bibtexparser.loads(text[text.index("@"):]).entries
        assert len(entries) == 5 and all(e["note"].startswith("openmsd:") for e in entries)

        with _served(corpus) as url:
            seeds = ["10.5555/test.1040", "10.5555/test.1041"]
            found = requests.post(f"{url}/api/related", json={"positive": seeds, "k": 5},
                                  timeout=60).json()
            assert len(found["results"]) == 5
            assert all(r["seeds"] for r in found["results"])
            paper = requests.get(f"{url}/api/papers/10.5555/test.1040", timeout=60).json()
            assert paper["title"] == world.works["W1040"]["title"]
            page = requests.get(f"{url}/library?id=10.5555/test.1040&id=10.5555/test.1041",
                                timeout=60)
            assert "Related to these 2 papers" in page.text

        # the API gains a work citing a seed, and a seed is updated: update fetches just these
        world.add(openalex_work(5000, "Analyse syntaxique et traduction", "Un nouveau travail "
                                "sur l'analyse syntaxique.", 2026, "fr", ["Ana Silva"], [1040],
                                updated="2099-01-01",
                                published=datetime.now(UTC).strftime("%Y-%m-%d")))
        world.works["W1041"]["updated_date"] = "2099-01-01T00:00:00.000000"
        output = _run("update", str(corpus), "--api-key", OPENALEX_KEY)
        assert "2 works" in output
        stats = orjson.loads(_run("corpus", "stats", str(corpus), "--json"))
        assert stats["papers"] == 41
        with _served(corpus) as url:
            related = requests.get(f"{url}/api/papers/10.5555/test.5000/related?k=3",
                                   timeout=60)
            assert related.status_code == 200, related.text
