"""The figures the README and the docs quote are the ones their records hold.

Each headline figure has a record ``benchmarks/results/NAME.json`` written by the benchmark
that measured it (``benchmarks/record.py``). A README line that links a record must quote that
record's headline; a docs line that links a record's section of the Benchmarks page
(``benchmarks.md#NAME``) must too. So a number cannot drift from its run.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from benchmarks_page import RESULTS, headline, records  # noqa: E402

RECORDS = {record["name"]: record for record in records()}
README_LINK = re.compile(r"benchmarks/results/([\w-]+)\.json")
DOCS_LINK = re.compile(r"benchmarks\.md#([\w-]+)")
KEYS = {"name", "command", "commit", "date", "machine", "data", "numbers", "synthetic"}


def quoting_lines(path: Path, pattern: re.Pattern[str]) -> list[tuple[int, str, str]]:
    """(line number, record name, line) for each line of ``path`` that links a record."""
    return [(number, name, line)
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            for name in pattern.findall(line)]


FIGURE = re.compile(r"\d(?:[\d,.]*\d)?\s?(?:%|×|s\b|works/s|texts/s)")


def what_works_rows() -> list[str]:
    """The rows of the README's "What works" table (header and rule left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What works", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return rows[1:]


def test_every_figure_the_readme_states_links_its_record() -> None:
    rows = what_works_rows()
    assert rows, "README.md has no 'What works' table"
    for row in rows:
        if FIGURE.search(row):
            assert README_LINK.search(row), f"README.md states a figure without its record: {row}"


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_record_says_how_to_rerun_it(name: str) -> None:
    record = RECORDS[name]
    assert set(record) >= KEYS, f"{name}.json lacks {sorted(KEYS - set(record))}"
    assert record["name"] == name
    assert record["command"].startswith(("python benchmarks/", "openmsd ")), record["command"]
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"]), record["commit"]
    assert record["machine"].get("cpus"), record["machine"]
    assert record["data"], f"{name}.json: no data sizes"
    assert headline(record)


def test_readme_quotes_each_linked_record_as_it_is() -> None:
    found = quoting_lines(ROOT / "README.md", README_LINK)
    assert found, "the README links no record"
    for number, name, line in found:
        assert (RESULTS / f"{name}.json").is_file(), f"README.md:{number}: no record {name}"
        assert headline(RECORDS[name]) in line, (
            f"README.md:{number} quotes {name} but not its headline "
            f"{headline(RECORDS[name])!r}: {line}")


def test_docs_quote_each_linked_record_as_it_is() -> None:
    for path in sorted((ROOT / "docs").rglob("*.md")):
        if path.name == "benchmarks.md":
            continue
        for number, name, line in quoting_lines(path, DOCS_LINK):
            where = f"{path.relative_to(ROOT)}:{number}"
            assert name in RECORDS, f"{where}: links benchmarks.md#{name}, which has no record"
            assert headline(RECORDS[name]) in line, (
                f"{where} links {name} but does not quote its headline "
                f"{headline(RECORDS[name])!r}")


def test_synthetic_data_is_said_to_be_synthetic() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    for line in readme:
        for name in README_LINK.findall(line):
            if RECORDS[name]["synthetic"]:
                assert re.search(r"synthetic|generated", line, re.I), (
                    f"README quotes {name}, measured on synthetic data, without saying so")
