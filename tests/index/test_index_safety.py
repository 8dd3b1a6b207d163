"""The index survives kill -9 between its writes, follows changed texts, and can always be
rebuilt from the vectors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import faiss
import numpy as np
import orjson
import pytest

from openmsd.corpus import Corpus
from openmsd.crashpoint import ENV
from openmsd.index import build_index, index_dir, load_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model, load_vectors

MODEL = "muse-v3"
TITLES = ["Dependency parsing of French", "Neural machine translation", "Plant diversity",
          "Speech recognition for Portuguese", "Named entity recognition in Spanish",
          "Coral reefs and climate", "Protein folding with deep learning"]


def _write(path: Path, titles: list[str]) -> Path:
    path.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": t, "year": 2000 + i,
                                            "abstract": f"An abstract about {t.lower()}."})
                              + b"\n" for i, t in enumerate(titles)))
    return path


@pytest.fixture(scope="module")
def encoder():
    return load_model(MODEL)


@pytest.fixture
def corpus(tmp_path: Path, encoder) -> Corpus:
    corpus = Corpus(tmp_path / "corpus")
    ingest([_write(tmp_path / "papers.jsonl", TITLES)], corpus.root)
    embed_corpus(corpus, encoder, MODEL)
    build_index(corpus, MODEL)
    return corpus


def _aligned(corpus: Corpus) -> None:
    """Every row of the index holds the current vector of the paper it names."""
    built = load_index(corpus, MODEL)
    ids, vectors = load_vectors(corpus, MODEL)
    want = dict(zip(ids, vectors, strict=True))
    stored = built.index.reconstruct_n(0, built.index.ntotal)
    for row, paper_id in enumerate(built.ids):
        np.testing.assert_allclose(stored[row], want[paper_id], atol=1e-5)


def _build_killed_at(corpus: Corpus, point: str, *args: str) -> subprocess.CompletedProcess:
    code = ("import sys; from openmsd.cli import app; "
            "sys.argv = ['openmsd', *sys.argv[1:]]; app()")
    return subprocess.run([sys.executable, "-c", code, "index", "build", str(corpus.root),
                           "--model", MODEL, *args], env={**os.environ, ENV: point},
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("point", ["index.between_writes", "index.before_swap"])
def test_kill_during_a_rebuild_leaves_the_old_index_whole(corpus: Corpus, point: str) -> None:
    before = load_index(corpus, MODEL).ids
    killed = _build_killed_at(corpus, point, "--kind", "hnsw")  # a full rebuild
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    after = load_index(corpus, MODEL)
    assert after.ids == before and isinstance(after.index, faiss.IndexFlatIP)
    _aligned(corpus)
    rebuilt, _ = build_index(corpus, MODEL, "hnsw")  # and the next build goes through
    assert isinstance(rebuilt.index, faiss.IndexHNSWFlat)
    _aligned(corpus)


def test_a_changed_title_replaces_its_vector(corpus: Corpus, tmp_path: Path, encoder) -> None:
    changed = [*TITLES]
    changed[2] = "Quantum error correction codes"
    ingest([_write(tmp_path / "papers.jsonl", changed)], corpus.root)
    assert embed_corpus(corpus, encoder, MODEL).embedded == 1
    _, added = build_index(corpus, MODEL)
    assert added >= 1
    _aligned(corpus)
    query = encoder.encode(["Quantum error correction codes"], "query")
    assert load_index(corpus, MODEL).search(query, 1)[0][0][0] == "p2"


def test_a_broken_index_is_rebuilt_by_index_build(corpus: Corpus) -> None:
    directory = index_dir(corpus, MODEL)
    broken = faiss.read_index(str(directory / "index.faiss"))
    broken.add(np.ones((1, broken.d), np.float32))  # rows and papers disagree
    faiss.write_index(broken, str(directory / "index.faiss"))
    with pytest.raises(FileNotFoundError, match="index build"):
        load_index(corpus, MODEL)
    for kind in ("auto", "flat", "hnsw"):
        built, _ = build_index(corpus, MODEL, kind)
        assert built.index.ntotal == len(TITLES)
        _aligned(corpus)
