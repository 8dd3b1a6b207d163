"""What ``related``, ``search`` and ``recommend`` print on a terminal 80, 100 and 120 columns
wide: run under a real pseudo-terminal of that size, every result is at most three lines, no
line is wider than the terminal, and no word of a title is cut (a title shortened to fit ends
in an ellipsis after a whole word). Ranked with BM25 on the shipped SciELO sample (no model
needed)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from openmsd.cli import SAMPLE
from openmsd.ingest import ingest
from openmsd.present.columns import ResultsView, Row, fit

ARTICLE = "10.1590/2236-8906-76-2021"
ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("terminal") / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    return str(root)


def on_terminal(columns: int, *args: str) -> list[str]:
    """The lines ``openmsd ARGS`` prints on a pseudo-terminal ``columns`` wide (escape
    sequences removed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen([sys.executable, "-m", "openmsd.cli", *args], stdin=follower,
                               stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 300)
        if not ready:
            process.kill()
            raise TimeoutError(" ".join(args))
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0, process.stderr.read().decode() if process.stderr \
        else ""
    text = ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")
    return text.splitlines()


def blocks(lines: list[str]) -> tuple[int, list[list[str]]]:
    """The title column's start and each result's lines, after the header (a result starts
    at a line with its rank)."""
    header = next(line for line in lines if line.startswith("#") and " title" in line)
    start = header.index("title")
    rows: list[list[str]] = []
    for line in lines[lines.index(header) + 1:]:
        if not line.strip():
            break
        if re.match(r"\s*\d+ ", line[:start]):
            rows.append([])
        rows[-1].append(line)
    return start, rows


def title_words(block: list[str], start: int, width: int) -> list[str]:
    """The words of a result's title cell (its identifier line left out)."""
    cells = []
    for line in block[:-1]:
        rest, used, cut = line[start:], 0, 0
        for cut, char in enumerate(rest):  # noqa: B007
            used += cell_len(char)
            if used > width:
                break
        else:
            cut = len(rest)
        cells.append(rest[:cut])
    return " ".join(cells).split()


@pytest.mark.parametrize("columns", [80, 100, 120])
@pytest.mark.parametrize("command", [["related", ARTICLE], ["search", "florestas do Brasil"]])
def test_results_read_on_a_terminal_without_a_cut_word(corpus, command, columns) -> None:
    args = [command[0], corpus, command[1], "--model", "bm25", "-k", "8"]
    found = json.loads(subprocess.run(
        [sys.executable, "-m", "openmsd.cli", *args, "--json"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600, check=True).stdout)
    lines = on_terminal(columns, *args)
    assert max(cell_len(line) for line in lines) <= columns
    start, rows = blocks(lines)
    assert len(rows) == len(found) == 8
    header = next(line for line in lines if " title" in line)
    width = header.rindex(" ") - start  # the title column ends where "why" starts
    assert any(len(r["title"]) > width for r in found)  # some titles had to be wrapped
    for block, result in zip(rows, found, strict=True):
        assert len(block) <= 3, block
        assert block[-1][start:].strip() == result["paper_id"]  # the dim identifier line
        words = set((result["title"] or "").split()) | set(
            (result["english_title"] or "").split())
        shown = title_words(block, start, width)
        assert shown and shown[0] == (result["title"] or result["english_title"]).split()[0]
        for word in shown:
            assert word.removesuffix("…") in words, (word, result["title"])


def test_recommendations_read_on_an_80_column_terminal() -> None:
    """Each location's papers as related and search show them; why names the sentence that
    points to a paper most."""
    from openmsd.present import ranked_locations, recommendations_view

    long_title = ("Is it possible to estimate the number of patients with COVID-19 admitted "
                  "to intensive care units and general wards using clinical and telemedicine "
                  "data?")
    result = {"paper_id": "10.31744/einstein_journal/2024ao0328", "score": 0.8,
              "title": long_title, "english_title": None, "language": "en", "year": 2024,
              "why": [], "co_cited_with": ["W2", "W3"],
              "drivers": [{"sentence": "Before [1].", "score": 0.8, "own_sentence": False}]}
    location = {"sentence_number": 2, "markers": ["[2]"], "sentence": "Hospitals [2].",
                "context": ["Before [1].", "Hospitals [2]."], "results": [result]}
    console = Console(width=80, record=True, color_system=None)
    console.print(recommendations_view(ranked_locations([location])))
    lines = [line for line in console.export_text().splitlines() if line.strip()]
    assert lines[0] == "sentence 2 [2]: Hospitals [2]."
    assert len(lines) == 2 + 3 and max(cell_len(line) for line in lines) <= 80
    assert "sentence before" in lines[2] and "co-cited with 2" in lines[3]
    assert lines[4].split()[-1] == result["paper_id"]
    start, end = lines[1].index("title"), lines[1].index("pointed to by")
    for word in " ".join(line[start:end] for line in lines[2:4]).split():
        assert word.removesuffix("…") in long_title.split()


def test_a_view_holds_each_result_in_three_lines_at_any_width() -> None:
    title = ("Florestas secundárias do Parque Estadual da Cantareira, São Paulo, SP, Brasil: "
             "composição florística, estrutura e dinâmica de vinte anos de regeneração")
    rows = [Row(1, "100%", "pt", "2022", title, "Secondary forests of the Parque Estadual "
                "da Cantareira, São Paulo State, Brazil", "10.1590/2236-8906-108/2020",
                ["similar text", "3 shared references, 2 outside the corpus",
                 "co-cited 2 times", "shared English words"]),
            Row(2, "unrated", "en", "", "Supercalifragilisticexpialidociouslylongwordwithout"
                "anyspaceatallinitsmiddle of forests", None, "W1", [])]
    for width in (80, 100, 120):
        console = Console(width=width, record=True, color_system=None)
        console.print(ResultsView(rows))
        lines = console.export_text().splitlines()
        assert len(lines) == 1 + 3 + 3  # the header, then three lines a result
        assert max(cell_len(line) for line in lines) <= width
        assert lines[1].split()[:4] == ["1", "100%", "pt", "2022"]
        assert "3 shared refs" in lines[2] and "+2 more" in lines[3]
        assert lines[3].split()[0] == "10.1590/2236-8906-108/2020" and lines[6].split() == ["W1"]
        assert lines[4].split()[1] == "unrated"
        for word in lines[5].split():  # the words after an over-long one are whole
            assert word in rows[1].title.split()


def test_fit_cuts_after_a_whole_word() -> None:
    text = "Contribution to the knowledge of Cerrado woody flora"
    for width in range(13, 40):  # from the longest word up
        lines = fit(text, width, 2)
        assert all(cell_len(line) <= width for line in lines)
        for word in " ".join(lines).split():
            assert word.removesuffix("…") in text.split()
