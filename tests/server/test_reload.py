"""A rebuilt index is taken only once complete, and requests keep being answered meanwhile."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import faiss
import numpy as np
import orjson
from fastapi.testclient import TestClient

from openmsd.corpus import Corpus
from openmsd.index import build_index, index_dir
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model
from openmsd.server import create_app
from openmsd.server.resources import LiveIndex
from tests.server.conftest import MODEL


def test_half_written_index_is_not_taken(served_corpus: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(served_corpus, root)
    live = LiveIndex(Corpus(root), MODEL)
    old = live.current
    directory = index_dir(Corpus(root), MODEL)
    bigger = faiss.read_index(str(directory / "index.faiss"))
    bigger.add(np.ones((1, bigger.d), np.float32))
    faiss.write_index(bigger, str(directory / "index.faiss"))  # its rows are not written yet
    assert not live.refresh() and live.current is old
    (directory / "index.faiss").unlink()
    assert not live.refresh() and live.current is old  # no index at all: keep the old one
    build_index(Corpus(root), MODEL, "hnsw")  # a complete rebuild: both files consistent
    assert live.refresh() and isinstance(live.current.index, faiss.IndexHNSWFlat)


def test_requests_are_served_while_the_index_is_rebuilt(served_corpus: Path,
                                                        tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(served_corpus, root)
    app = create_app(root, [MODEL], watch_s=0.05)
    statuses: list[int] = []
    stop = threading.Event()
    with TestClient(app, raise_server_exceptions=False) as client:
        def hammer() -> None:
            while not stop.is_set():
                statuses.append(client.get("/api/papers/fr-parse/related?k=3").status_code)
                statuses.append(client.get("/api/search?q=parsing&k=3").status_code)

        workers = [threading.Thread(target=hammer) for _ in range(3)]
        for worker in workers:
            worker.start()
        new = tmp_path / "new.jsonl"
        new.write_bytes(orjson.dumps({"id": "de-parse", "year": 2019, "title":
                                      "Dependenzparsing des Deutschen", "abstract":
                                      "Wir stellen einen Dependenzparser für das Deutsche vor."
                                      }) + b"\n")
        ingest([new], root, None, False)
        embed_corpus(Corpus(root), load_model(MODEL), MODEL)
        build_index(Corpus(root), MODEL)
        for _ in range(200):
            if client.get("/healthz").json()["indexed"][MODEL] == 59:
                break
            stop.wait(0.05)
        stop.set()
        for worker in workers:
            worker.join()
        assert client.get("/healthz").json()["indexed"][MODEL] == 59
        found = client.get("/api/search?q=Dependenzparser Deutsch&k=1").json()["results"]
        assert found[0]["paper_id"] == "de-parse"
    assert len(statuses) > 10 and set(statuses) == {200}
