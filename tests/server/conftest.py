"""A small real corpus for the server tests, built once per session: the shipped SciELO JATS
sample plus a few papers in four languages (one titled with a script tag), embedded with the
bundled muse-v3 encoder and indexed; and the app, in process and as a real uvicorn server."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from openmsd.cli import SAMPLE
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model

CHROMIUM = Path("/usr/bin/chromium")
BROWSER = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at "
                       "/usr/bin/chromium (apt-get install chromium; .ci/run installs it)"),
]
"""The marks of a browser test module (``pytestmark = BROWSER``)."""


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """Debian's headless Chromium driven by Playwright (which downloads no browser)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        # root (CI containers) cannot use Chromium's sandbox
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield launched
        launched.close()

MODEL = "muse-v3"
SCRIPT_TITLE = "<script>alert(1)</script>"
PAPERS = [
    {"id": "fr-parse", "title": "Analyse syntaxique en dépendances du français",
     "abstract": "Nous présentons un analyseur syntaxique statistique en dépendances pour le "
                 "français, entraîné sur un corpus arboré.", "year": 2009, "venue": "TALN",
     "authors": ["Marie Candito"], "references": ["en-parse", "es-parse"],
     "translations": {"en": {"title": "Dependency parsing of French", "abstract": ""}}},
    {"id": "en-parse", "title": "A fast transition-based dependency parser",
     "abstract": "We describe a transition-based dependency parser trained on treebanks with "
                 "a neural network classifier.", "year": 2014, "venue": "EMNLP",
     "authors": ["Danqi Chen", "Christopher Manning"]},
    {"id": "es-parse", "title": "Análisis sintáctico de dependencias para el español",
     "abstract": "Presentamos un analizador sintáctico de dependencias para el español "
                 "entrenado sobre un corpus anotado.", "year": 2012, "venue": "SEPLN",
     "authors": ["Ana García"], "references": ["en-parse"]},
    {"id": "pt-parse", "title": "Análise sintática de dependências do português",
     "abstract": "Apresentamos um analisador sintático de dependências para o português "
                 "treinado num corpus anotado.", "year": 2016, "venue": "PROPOR",
     "authors": ["João Silva"], "references": ["en-parse", "fr-parse"]},
    {"id": "fr-mt", "title": "Traduction automatique statistique à base de segments",
     "abstract": "Cet article décrit un système de traduction automatique statistique du "
                 "français vers l'anglais.", "year": 2008, "venue": "TALN",
     "authors": ["Philippe Langlais"], "references": ["en-mt"]},
    {"id": "en-mt", "title": "Neural machine translation by jointly learning to align",
     "abstract": "We propose a neural machine translation model that learns to align and "
                 "translate jointly.", "year": 2015, "venue": "ICLR",
     "authors": ["Dzmitry Bahdanau"]},
    {"id": "es-bio", "title": "Diversidad de plantas en la selva atlántica",
     "abstract": "Estudiamos la diversidad de especies de plantas en fragmentos de selva "
                 "atlántica.", "year": 2020, "venue": "Hoehnea", "authors": ["Carla Ruiz"]},
    {"id": "xss", "title": SCRIPT_TITLE,
     "abstract": "An abstract about dependency parsing <img src=x onerror=alert(2)> with "
                 "markup in it.", "year": 2021, "venue": "<b>Venue</b>",
     "authors": ["Eve <i>Mallory</i>"], "references": ["en-parse"]},
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def served_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus directory, with muse-v3 vectors and index."""
    root = tmp_path_factory.mktemp("server")
    papers = root / "papers.jsonl"
    papers.write_bytes(b"\n".join(orjson.dumps(p) for p in PAPERS) + b"\n")
    corpus_dir = root / "corpus"
    ingest([SAMPLE / "scielo-jats", papers], corpus_dir, None, False)
    corpus = Corpus(corpus_dir)
    embed_corpus(corpus, load_model(MODEL), MODEL)
    build_index(corpus, MODEL)
    return corpus_dir


@pytest.fixture(scope="session")
def app(served_corpus: Path):
    from openmsd.server import create_app

    return create_app(served_corpus, [MODEL], watch_s=0.2)


@pytest.fixture(scope="session")
def client(app) -> Iterator:
    from fastapi.testclient import TestClient

    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@contextmanager
def serve_in_thread(app) -> Iterator[str]:
    """``app`` served by a real uvicorn server on a free loopback port, in a thread; yields its
    base URL and stops the server on exit."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 30
    while not server.started:
        if time.time() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def server_url(app) -> Iterator[str]:
    """A real uvicorn server on a free loopback port, in a thread."""
    with serve_in_thread(app) as url:
        yield url
