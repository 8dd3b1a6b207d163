"""What the command line prints in a pipe or a file: one result a line (TSV with a header),
nothing wrapped or cut, valid JSON with --json; on a terminal, Rich's tables. Run through
Typer's CliRunner and through a real pipe (a subprocess), on the shipped SciELO sample ranked
with BM25 (no model needed)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.cli.output import SafeConsole, tsv_lines
from openmsd.corpus import query_view
from openmsd.ingest import ingest

ARTICLE = "10.1590/2236-8906-76-2021"
ROOT = Path(__file__).resolve().parents[1]
HEADER = ["rank", "relevance", "paper", "lang", "year", "title", "why related"]
runner = CliRunner()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("output") / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    return str(root)


def piped(*args: str) -> subprocess.CompletedProcess:
    """``openmsd ARGS`` with its standard output to a pipe."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-m", "openmsd.cli", *args], capture_output=True,
                          text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    return done


def check_results(text: str, results: list[dict], k: int) -> None:
    """``text`` is a header line and one line per result, each whole: all of its title,
    its rank and its relevance (a percentage, or – where the result is unrated)."""
    lines = text.splitlines()
    assert len(lines) == 1 + k == 1 + len(results)
    assert lines[0].split("\t") == HEADER
    for rank, (line, result) in enumerate(zip(lines[1:], results, strict=True), 1):
        cells = line.split("\t")
        assert len(cells) == len(HEADER), line
        assert cells[0] == str(rank) == str(result["rank"])
        relevance = result["relevance"]
        assert cells[1] == ("–" if relevance is None else f"{round(100 * relevance)}%")
        assert cells[2] == result["paper_id"]
        assert cells[5].split(" / ")[0] == " ".join((result["title"] or "").split())


@pytest.mark.parametrize("command", [["related", ARTICLE], ["search", "florestas do Brasil"]])
def test_related_and_search_print_one_line_a_result_in_a_pipe(corpus, command) -> None:
    args = [command[0], corpus, command[1], "--model", "bm25", "-k", "6"]
    found = json.loads(piped(*args, "--json").stdout)
    assert [r["rank"] for r in found] == [1, 2, 3, 4, 5, 6]
    # no ranker is trained on this corpus: every result is unrated, none a share of the best
    assert [r["relevance"] for r in found] == [None] * 6
    assert max(len(r["title"]) for r in found) > 80  # a title longer than a terminal line
    check_results(piped(*args).stdout, found, 6)
    check_results(runner.invoke(app, args).stdout, found, 6)


def test_long_lines_are_never_wrapped_in_a_pipe(corpus) -> None:
    """'What next'-style text and messages longer than 80 columns stay on one line."""
    stats = piped("corpus", "stats", corpus).stdout.splitlines()
    assert any(len(line) > 80 for line in stats)  # the references line, whole
    assert any(line.startswith("references: ") and "contexts:" in line for line in stats)
    assert stats[0] == "# Papers (OpenMSD Table 1)" and "\t" in stats[1]


def test_corpus_query_prints_every_row_a_line_in_a_pipe_and_json(corpus) -> None:
    sql = "SELECT paper_id, title, authors FROM papers ORDER BY paper_id"
    rows = json.loads(piped("corpus", "query", corpus, sql, "--json").stdout)
    assert len(rows) == 50 and set(rows[0]) == {"paper_id", "title", "authors"}
    lines = piped("corpus", "query", corpus, sql).stdout.splitlines()
    assert lines[0] == "paper_id\ttitle\tauthors" and len(lines) == 1 + len(rows)
    for line, row in zip(lines[1:], rows, strict=True):
        paper_id, title, authors = line.split("\t")
        assert paper_id == row["paper_id"] and title == " ".join((row["title"] or "").split())
        assert (json.loads(authors) if authors else None) == row["authors"]


@pytest.mark.parametrize("args", [["formats"], ["models", "list"], ["corpus", "stats", "{c}"],
                                  ["corpus", "query", "{c}", "SELECT 1 AS n"]])
def test_json_is_valid_wherever_it_is_offered(corpus, args) -> None:
    result = runner.invoke(app, [a.format(c=corpus) for a in args] + ["--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)


def test_a_terminal_keeps_the_table_layout_and_a_file_gets_tsv() -> None:
    table = Table(title="Papers")
    table.add_column("title")
    table.add_column("why")
    table.add_row("A title " * 12, "similar text\nshared English words")
    terminal, file = io.StringIO(), io.StringIO()
    SafeConsole(file=terminal, force_terminal=True, color_system=None, width=60).print(table)
    SafeConsole(file=file).print(table)
    assert "┃" in terminal.getvalue() and max(map(len, terminal.getvalue().splitlines())) <= 60
    assert file.getvalue().splitlines() == [
        "# Papers", "title\twhy",
        f"{('A title ' * 12).strip()}\tsimilar text / shared English words"]
    assert tsv_lines(query_view(["a"], [{"a": "x\ty"}])) == ["a", "x y"]


def test_every_command_that_prints_results_takes_json() -> None:
    """All but the demo (a guided tour), serve and mcp (servers) and eval retrieval (JSON
    always)."""
    import typer.main

    def commands(command, prefix: str = ""):
        for name, sub in getattr(command, "commands", {}).items():
            path = f"{prefix} {name}".strip()
            if getattr(sub, "commands", None):
                yield from commands(sub, path)
            else:
                yield path, sub

    without = sorted(path for path, command in commands(typer.main.get_command(app))
                     if not any("--json" in getattr(p, "opts", []) for p in command.params))
    assert without == ["demo", "eval retrieval", "mcp", "serve"]
