"""Where the machine says no (a file-size limit, a read-only folder, a port that is none, a
``-k`` larger than the corpus): one line naming the file or the value, exit status 2, no
traceback, and the corpus as it was."""

from __future__ import annotations

import hashlib
import resource
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.index import build_index, load_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model
from tests.read_only import read_only

MODEL = "muse-v3"
CLI = "import sys; from openmsd.cli import main; sys.argv = ['openmsd', *sys.argv[1:]]; main()"


def _papers(path: Path, n: int, prefix: str) -> Path:
    path.write_bytes(b"".join(orjson.dumps({
        "id": f"{prefix}{i}", "title": f"Paper {i} on tagging {i * 7919 % 1000}",
        "abstract": "About tagging " + " ".join(  # words that compress little
            f"w{(i * 7919 + j * 104729) % 100003}" for j in range(60)),
        "year": 2000 + i % 20}) + b"\n"
        for i in range(n)))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus of 40 papers, embedded and indexed (read only: copy it)."""
    root = tmp_path_factory.mktemp("says-no")
    corpus = Corpus(root / "corpus")
    ingest([_papers(root / "a.jsonl", 40, "a")], corpus.root)
    embed_corpus(corpus, load_model(MODEL), MODEL)
    build_index(corpus, MODEL)
    return corpus.root


def _snapshot(root: Path) -> dict[str, str]:
    """Every file of the corpus (but its lock) and its digest."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".ingest.lock"}


def _limited(limit: int, *args: str | Path) -> subprocess.CompletedProcess:
    """``openmsd ARGS`` with files limited to ``limit`` bytes (``ulimit -f``; SIGXFSZ ignored,
    so a write past it fails with EFBIG as under a shell that ignores it)."""
    def limit_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-c", CLI, *map(str, args)], capture_output=True,
                          text=True, timeout=600, preexec_fn=limit_files)


def _refused(result: subprocess.CompletedProcess, words: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert f"cannot write: {words}" in lines[0]
    return lines[0]


@pytest.mark.parametrize("limit", [8_000, 40_000, 80_000])
def test_a_file_size_limit_during_ingest(built: Path, tmp_path: Path, limit: int) -> None:
    """Whichever file the limit stops (a staged part, the build's DuckDB WAL, a table)."""
    root = tmp_path / "corpus"
    shutil.copytree(built, root, symlinks=True)
    before = _snapshot(root)
    line = _refused(_limited(limit, "ingest", _papers(tmp_path / "b.jsonl", 2000, "b"),
                             "--out", root), "file too large")
    assert str(root) in line or "corpus/" in line  # names the file
    after = _snapshot(root)
    assert {k: v for k, v in after.items() if not k.startswith("staged/")} == \
        {k: v for k, v in before.items() if not k.startswith("staged/")}
    assert Corpus(root).read("papers").num_rows == 40
    assert not list(root.glob(".build-*")) and not list(root.rglob("*.tmp"))
    assert ingest([tmp_path / "b.jsonl"], root).build["counts"]["papers"] == 2040  # and again


def test_a_file_size_limit_during_embed_and_index_build(built: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(built, root, symlinks=True)
    ingest([_papers(tmp_path / "b.jsonl", 300, "b")], root)
    before = _snapshot(root)
    line = _refused(_limited(20_000, "embed", root, "--model", MODEL), "file too large")
    assert "vectors" in line and ".parquet" in line
    assert _snapshot(root) == before
    line = _refused(_limited(20_000, "index", "build", root, "--model", MODEL, "--full"),
                    "file too large")
    assert "index.faiss" in line or "papers.parquet" in line
    assert _snapshot(root) == before  # the build folder it began is removed too
    assert load_index(Corpus(root), MODEL).index.ntotal == 40


def test_a_read_only_corpus(built: Path, tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(built, root, symlinks=True)
    new = _papers(tmp_path / "b.jsonl", 30, "b")
    ingest([new], root)  # 30 papers without vectors: embed has to write
    with read_only(root):
        before = _snapshot(root)
        for args in (["ingest", new, "--out", root], ["embed", root, "--model", MODEL],
                     ["index", "build", root, "--model", MODEL, "--full"],
                     ["relations", root]):
            result = subprocess.run([sys.executable, "-c", CLI, *map(str, args)],
                                    capture_output=True, text=True, timeout=600)
            assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
            lines = [line for line in result.stderr.splitlines() if line.strip()]
            assert len(lines) == 1 and str(root) in lines[0], (args, result.stderr)
            assert ".tmp" not in lines[0]  # the file it meant to write, not a temporary one
        assert _snapshot(root) == before


@pytest.mark.parametrize("port", ["99999", "-1", "0", "65536"])
def test_a_port_that_is_none(built: Path, port: str) -> None:
    result = CliRunner().invoke(app, ["serve", str(built), "--port", port])
    assert result.exit_code == 2, result.output
    assert f"--port {port}" in result.output and "1 to 65535" in result.output


def test_a_port_in_use_or_an_address_not_ours(built: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", str(built), "--port", str(port)])
    assert result.exit_code == 2, result.output
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in result.output
    for host in ("192.0.2.1", "no-such-host.invalid"):  # TEST-NET-1: no machine's address
        result = CliRunner().invoke(app, ["serve", str(built), "--host", host])
        assert result.exit_code == 2, result.output
        assert f"--host {host}: not an address of this machine" in result.output


@pytest.mark.parametrize("k", ["99999999999999999999", "30000000"])
def test_a_huge_k_ranks_every_paper_once(built: Path, k: str) -> None:
    for args in (["search", built, "tagging", "--model", "bm25"],
                 ["related", built, "a1", "--model", f"bm25+{MODEL}"],
                 ["search", built, "tagging", "--model", MODEL]):
        result = CliRunner().invoke(app, [*map(str, args), "-k", k, "--json"])
        assert result.exit_code == 0, (args, result.output)
        assert "Traceback" not in result.output
        results = orjson.loads(result.stdout)
        ids = [r["paper_id"] for r in results]
        assert 1 < len(ids) <= 40 and len(set(ids)) == len(ids)
