"""One index build at a time writes a corpus (the ingest's lock), and the next build removes
what killed builds left under ``index/.builds``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from openmsd.corpus import Corpus
from openmsd.crashpoint import ENV
from openmsd.index import build_index, index_dir, load_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model

MODEL = "muse-v3"
CLI = "import sys; from openmsd.cli import main; sys.argv = ['openmsd', *sys.argv[1:]]; main()"


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": f"Paper {i} on parsing",
                                              "abstract": "About parsing."}) + b"\n"
                                for i in range(5)))
    corpus = Corpus(tmp_path / "corpus")
    ingest([papers], corpus.root)
    embed_corpus(corpus, load_model(MODEL), MODEL)
    build_index(corpus, MODEL)
    return corpus


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=300)


def test_a_second_index_build_is_refused_while_one_runs(corpus: Corpus) -> None:
    before = load_index(corpus, MODEL).ids
    link = os.readlink(index_dir(corpus, MODEL))
    holder = subprocess.Popen(  # a build or an ingest holding the corpus until told to stop
        [sys.executable, "-c", "import sys; from openmsd.corpus import corpus_lock\n"
         f"with corpus_lock({str(corpus.root)!r}):\n print('locked', flush=True); "
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        second = _cli("index", "build", str(corpus.root), "--model", MODEL, "--full")
        assert second.returncode == 2, second.stderr
        assert "another ingest, embed or index build" in second.stderr
        assert str(corpus.root) in second.stderr and "Traceback" not in second.stderr
        assert os.readlink(index_dir(corpus, MODEL)) == link  # nothing swapped or removed
        assert load_index(corpus, MODEL).ids == before
    finally:
        holder.communicate("")
    build_index(corpus, MODEL, full=True)  # and once it is done, the build goes through
    assert load_index(corpus, MODEL).ids == before


def test_the_next_build_removes_what_a_killed_build_left(corpus: Corpus) -> None:
    killed = _cli("index", "build", str(corpus.root), "--model", MODEL, "--full",
                  **{ENV: "index.between_writes"})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    builds = corpus.root / "index" / ".builds"
    unfinished = [b for b in builds.glob("*/*") if not (b / "papers.parquet").exists()]
    assert unfinished  # a fresh one: the age rule of the swap would keep it an hour
    build_index(corpus, MODEL)  # nothing to add: no swap, the clean-up alone
    assert not [b for b in builds.glob("*/*") if not (b / "papers.parquet").exists()]
    assert load_index(corpus, MODEL).index.ntotal == 5
