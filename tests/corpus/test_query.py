"""``openmsd corpus query``: one SELECT, read only (no ``COPY ... TO``, ``ATTACH``, other
files), its rows streamed to a pipe in constant memory."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.ingest import ingest

runner = CliRunner()
CLI = "import sys; from openmsd.cli import app; sys.argv = ['openmsd', *sys.argv[1:]]; app()"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("query")
    papers = root / "p.jsonl"
    papers.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": f"Paper {i}",
                                              "authors": ["A B", "C\tD"]}) + b"\n"
                                for i in range(20)))
    ingest([papers], root / "corpus")
    return root / "corpus"


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".ingest.lock"}


@pytest.mark.parametrize("sql", [
    "COPY papers TO '{root}/papers.parquet' (FORMAT parquet)",
    "COPY (SELECT 1) TO '{root}/../elsewhere.csv'",
    "ATTACH '{root}/../other.db' AS other",
    "CREATE TABLE t AS SELECT 1",
    "INSTALL httpfs",
    "SET enable_external_access = true",
    "SELECT 1; COPY papers TO '{root}/x.csv'",
    "SELECT * FROM read_csv('/etc/hostname')",
    "SELECT * FROM read_parquet('{root}/staged/*/staged_papers.parquet')",
])
def test_only_a_select_of_the_tables_runs(corpus: Path, sql: str) -> None:
    before = _files(corpus.parent)
    result = runner.invoke(app, ["corpus", "query", str(corpus), sql.format(root=corpus)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert _files(corpus.parent) == before  # nothing written, nothing replaced


def test_rows_in_a_pipe_and_as_json(corpus: Path) -> None:
    sql = "SELECT paper_id, authors FROM papers ORDER BY paper_id LIMIT 2"
    piped = runner.invoke(app, ["corpus", "query", str(corpus), sql])
    assert piped.exit_code == 0, piped.output
    assert piped.stdout.splitlines() == ["paper_id\tauthors", 'p0\t["A B","C\\tD"]',
                                         'p1\t["A B","C\\tD"]']
    as_json = runner.invoke(app, ["corpus", "query", str(corpus), sql, "--json"])
    assert orjson.loads(as_json.stdout) == [{"paper_id": "p0", "authors": ["A B", "C\tD"]},
                                            {"paper_id": "p1", "authors": ["A B", "C\tD"]}]
    empty = runner.invoke(app, ["corpus", "query", str(corpus), "FROM papers LIMIT 0",
                                "--json"])
    assert orjson.loads(empty.stdout) == []


def _peak_kib(corpus: Path, rows: int) -> int:
    """The peak resident memory (KiB) of ``corpus query`` writing ``rows`` rows to a pipe
    read as it comes."""
    sql = f"SELECT range AS n, 'a title of some length ' || range AS title FROM range({rows})"
    process = subprocess.Popen([sys.executable, "-c", CLI, "corpus", "query", str(corpus), sql],
                               stdout=subprocess.PIPE)
    lines = sum(1 for _ in process.stdout)
    _, status, usage = os.wait4(process.pid, 0)
    assert status == 0 and lines == rows + 1
    return usage.ru_maxrss


def test_a_pipe_gets_every_row_in_constant_memory(corpus: Path) -> None:
    small, large = _peak_kib(corpus, 50_000), _peak_kib(corpus, 1_000_000)
    assert large < small * 1.25 + 20_000, (small, large)  # not ~650 MB more a million rows
