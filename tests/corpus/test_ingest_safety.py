"""Ingest under kill -9 and concurrent runs: the old or the new corpus stays readable, a second
run is refused with a clear error, leftovers of a killed run are cleaned, 0 papers fail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.crashpoint import ENV
from openmsd.ingest import ingest
from openmsd.report import IngestError

CLI = "import sys; from openmsd.cli import app; sys.argv = ['openmsd', *sys.argv[1:]]; app()"


def _papers(path: Path, n: int, prefix: str = "p") -> Path:
    path.write_bytes(b"".join(orjson.dumps({"id": f"{prefix}{i}", "title": f"Paper {i}",
                                            "year": 2001}) + b"\n" for i in range(n)))
    return path


def _run(*args: str, crash: str | None = None, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, **({ENV: crash} if crash else {})}
    return subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True,
                          text=True, timeout=300, **kw)


@pytest.mark.parametrize(("point", "papers"), [("ingest.before_swap", 3),
                                                ("ingest.before_manifest", 5)])
def test_kill_during_the_swap_leaves_a_readable_corpus(tmp_path: Path, point: str,
                                                       papers: int) -> None:
    root = tmp_path / "corpus"
    ingest([_papers(tmp_path / "a.jsonl", 3)], root)
    killed = _run("ingest", str(_papers(tmp_path / "b.jsonl", 2, "q")), "--out", str(root),
                  crash=point)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    corpus = Corpus(root)
    corpus.check()  # old (killed before the swap) or new (killed after it), never neither
    assert corpus.read("papers").num_rows == papers
    assert any(root.glob(".build-*")) or point == "ingest.before_manifest"
    again = ingest([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], root)
    assert again.build["counts"]["papers"] == 5
    assert not list(root.glob(".build-*"))  # a killed run's leftovers are cleaned


def test_a_second_ingest_is_refused_while_one_runs(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    ingest([_papers(tmp_path / "a.jsonl", 3)], root)
    holder = subprocess.Popen(  # another ingest, holding the corpus, until told to stop
        [sys.executable, "-c", "import sys; from openmsd.corpus import corpus_lock\n"
         f"with corpus_lock({str(root)!r}):\n print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        second = _run("ingest", str(_papers(tmp_path / "b.jsonl", 2, "q")), "--out", str(root))
        assert second.returncode != 0
        assert "another ingest" in second.stderr and "Traceback" not in second.stderr
        assert Corpus(root).read("papers").num_rows == 3
    finally:
        holder.communicate("")
    assert ingest([tmp_path / "b.jsonl"], root).build["counts"]["papers"] == 5


def test_an_ingest_of_no_papers_fails(tmp_path: Path) -> None:
    empty = tmp_path / "nothing.jsonl"
    empty.write_text('{"title": "no id"}\nnot json\n')
    with pytest.raises(IngestError, match="no papers"):
        ingest([empty], tmp_path / "corpus")
    result = CliRunner().invoke(app, ["ingest", str(empty), "--out", str(tmp_path / "c2")])
    assert result.exit_code != 0 and "no papers" in result.output


def test_a_failed_staged_write_leaves_no_part(tmp_path: Path, monkeypatch) -> None:
    from openmsd import io
    from openmsd.ingest import run

    src = tmp_path / "p.jsonl"
    src.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": f"Paper {i}",
                                           "references": [f"p{i + 1}"]}) + b"\n"
                             for i in range(50)))
    written = io.ParquetSink.write

    def failing(sink: io.ParquetSink, batch) -> None:
        if sink.target.name == "staged_references.parquet":
            raise OSError(28, "No space left on device")
        written(sink, batch)

    monkeypatch.setattr(run, "FLUSH_ROWS", 8)  # the failure comes from a write mid-input
    monkeypatch.setattr(io.ParquetSink, "write", failing)
    with pytest.raises(OSError, match="No space left"):
        ingest([src], tmp_path / "c", fmt="jsonl")
    staged = tmp_path / "c" / "staged"
    assert not staged.exists() or not list(staged.iterdir())
    assert not (tmp_path / "c" / "papers.parquet").exists()
    monkeypatch.undo()
    assert ingest([src], tmp_path / "c", fmt="jsonl").build["counts"]["papers"] == 50
