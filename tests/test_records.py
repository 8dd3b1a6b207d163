"""The figures the README and the docs quote are the ones their records hold.

Each headline figure has a record ``benchmarks/results/NAME.json`` written by the benchmark
that measured it (``benchmarks/record.py``). A README line that links a record must quote that
record's headline; a docs line that links a record's section of the Benchmarks page
(``benchmarks.md#NAME``) must too. So a number cannot drift from its run.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

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


EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"]["optional-dependencies"]
BENCH_ONLY = {Requirement(line).name.replace("-", "_") for line in EXTRAS["bench"]}
SCRIPTS = sorted({RECORDS[name]["command"].split()[1] for name in RECORDS
                  if RECORDS[name]["command"].startswith("python benchmarks/")})


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_of_every_record_still_imports(script: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A record can be made again: its script is there and every name it imports exists. A
    package only the ``bench`` extra installs may be missing from a test install; any other may
    not."""
    path = ROOT / script
    assert path.is_file(), f"a record's command names {script}, which is gone"
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"benchmark_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in BENCH_ONLY:
            raise
        pytest.skip(f"{script} needs {error.name} (pip install -e '.[bench]')")


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


NUMBER = re.compile(r"(?<![\w@.,/-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w@])"
                    r"|(?<![\w@.,/-])\d+(?:\.\d+)?(?![\w@]|,\d{3})")
"""A number as the README writes it (``1,000``, ``0.973``, ``24``), not a part of a name
(``fp32``, ``Recall@1``, ``IVF4096``)."""
CODE = re.compile(r"`[^`]*`|\[[^\]]*\]\([^)]*\)")
SCALES = (1.0, 100.0, 1 / 60, 1 / 3600, 1 / 1024, 1 / 1024**3, 1 / 1e9, 1 / 1e6, 1 / 1000)
"""A record's value as the README may quote it: as it is, in %, s → min or h, MiB → GiB,
bytes → GiB or GB or MB, ms → s."""


def record_values(value: Any) -> list[float]:
    """Every number in a record's numbers, data and machine, and in its strings."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, str):
        return [float(n.replace(",", "")) for n in NUMBER.findall(value)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in record_values(item)]
    if isinstance(value, list | tuple):
        return [v for item in value for v in record_values(item)]
    return []


def quoted(text: str) -> list[str]:
    """The numbers a README cell quotes (code spans and links' targets left out)."""
    return NUMBER.findall(CODE.sub(" ", text))


def holds(values: list[float], number: str) -> bool:
    """Whether ``number`` (as written, with its decimals) is one of ``values`` at some scale,
    rounded as written."""
    plain = number.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    target, slack = float(plain), 0.5 * 10**-decimals + 1e-9
    return any(abs(v * scale - target) <= slack for v in values for scale in SCALES)


def test_every_number_the_readme_quotes_is_in_its_record() -> None:
    wrong = []
    for row in what_works_rows():
        names = README_LINK.findall(row)
        if not names:
            continue
        figure = row.split("|")[2]
        values = [v for name in names for v in record_values(
            [RECORDS[name][k] for k in ("numbers", "data", "machine", "load_before")]
            + [headline(RECORDS[name])])]
        missing = [n for n in quoted(figure) if not holds(values, n)]
        if missing:
            wrong.append(f"README.md quotes {', '.join(missing)} in the row of "
                         f"{', '.join(names)}, and the record holds no such figure")
    assert not wrong, "\n".join(wrong)


def prose_paragraphs() -> list[str]:
    """The README's paragraphs outside code blocks and tables."""
    text = re.sub(r"^```.*?^```", "", (ROOT / "README.md").read_text(encoding="utf-8"),
                  flags=re.M | re.S)
    return [" ".join(line for line in block.splitlines() if not line.startswith("|"))
            for block in text.split("\n\n")]


def test_every_figure_of_the_readme_prose_is_a_recorded_one() -> None:
    """A figure in a README paragraph links its record (and is in it) or points to "What
    works" (and is in one of its rows, which the test above checks against its record)."""
    rows = [row.split("|")[2] for row in what_works_rows()]
    wrong = []
    for paragraph in prose_paragraphs():
        figures = FIGURE.findall(CODE.sub(" ", paragraph))
        if not figures:
            continue
        names = README_LINK.findall(paragraph)
        values = [v for name in names for v in record_values(
            [RECORDS[name][k] for k in ("numbers", "data")] + [headline(RECORDS[name])])]
        for figure in figures:
            number = NUMBER.findall(figure)[0]
            if names and holds(values, number):
                continue
            if "(#what-works)" in paragraph and any(figure in row for row in rows):
                continue
            wrong.append(f"README.md states {figure!r} without a record that holds it: "
                         f"{paragraph[:120]}")
    assert not wrong, "\n".join(wrong)


def test_the_number_check_reads_figures_as_written() -> None:
    assert quoted("1.54× sentence-transformers fp32 on 1,000 TALN abstracts, `IVF4096`, "
                  "Recall@1 0.970, 99.80 %") == ["1.54", "1,000", "0.970", "99.80"]
    assert holds([0.9701], "0.970") and not holds([0.9716], "0.970")
    assert holds([294.0], "4.9")  # seconds quoted in minutes
    assert not holds([33.83], "35.39")


def test_headline_sh_reruns_every_linked_record_or_the_readme_says_why() -> None:
    script = (ROOT / "benchmarks" / "headline.sh").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## What works", 1)[1].split("\n## ", 1)[0]
    after_table = section.rsplit("|", 1)[-1]  # the words under the table
    for name in sorted(set(README_LINK.findall(readme))):
        command = RECORDS[name]["command"].split()
        rerun = command[1] if command[0] == "python" else " ".join(command[:2])
        assert rerun in script or f"`{name}`" in after_table, (
            f"benchmarks/headline.sh does not rerun {name} ({rerun}) and the README does not "
            "say why")


def script_commands(path: Path) -> list[list[str]]:
    """The simple commands of a shell script (continuation lines joined, comments left out)."""
    import shlex

    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = next((i for i, w in enumerate(words) if w in ("&&", ";")), len(words))
            found.append(words[:cut])
            words = words[cut + 1:]
    return found


def test_headline_sh_reruns_each_record_with_its_own_options() -> None:
    """Where headline.sh reruns a README-linked record, one of its commands runs that record's
    script with the record's options (paths and sizes may be variables), so that the rerun
    writes the record it replaces (the same record name, the same backend, the same runs)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = script_commands(ROOT / "benchmarks" / "headline.sh")
    for name in sorted(set(README_LINK.findall(readme))):
        recorded = RECORDS[name]["command"].split()
        if recorded[0] != "python" or not any(recorded[1] in c for c in commands):
            continue  # not rerun there (the test above asks the README to say why)

        def options(words: list[str]) -> set[str]:
            return {w for w in words if w.startswith("--")}

        def record_name(words: list[str]) -> str | None:
            return words[words.index("--record") + 1] if "--record" in words and \
                words.index("--record") + 1 < len(words) else None

        same = [c for c in commands if recorded[1] in c
                and options(c) == options(recorded) and record_name(c) == record_name(recorded)]
        assert same, (f"benchmarks/headline.sh runs {recorded[1]} but not with {name}'s options "
                      f"({RECORDS[name]['command']})")


PROCESS = re.compile(r"\b(goals?|targets?|budgets?|missed|refactor\w*)\b", re.I)
"""Words of how a figure was aimed at or how the code came to be, not of what was measured."""


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_a_record_states_what_was_measured(name: str) -> None:
    record = RECORDS[name]
    numbers = record["numbers"]
    texts = [record.get("notes") or "", str(numbers.get("headline", "")),
             str(numbers.get("headline_means", "")), *(k.replace("_", " ") for k in numbers)]
    found = [text for text in texts if PROCESS.search(text)]
    assert not found, f"{name}.json speaks of goals or history: {found}"


def test_the_readme_and_docs_state_what_was_measured() -> None:
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\b(goals?|missed|refactor\w*)\b", CODE.sub(" ", line), re.I):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line[:100]}")
    assert not found, "\n".join(found)


def test_the_directions_table_shows_each_measured_direction_as_recorded() -> None:
    from benchmarks_page import directions_table

    record = RECORDS["ranker_directions"]
    views = directions_table(record).split("View **")[1:]
    assert [view.split("**", 1)[0] for view in views] == list(record["numbers"]["variants"])
    for view, found in zip(views, record["numbers"]["variants"].values(), strict=True):
        lines = view.splitlines()
        for name, per_direction in found["figures"].items():
            protocol, split = name.rsplit(" ", 1)
            for direction, f in per_direction.items():
                if direction == "singles":
                    continue
                row = [line for line in lines
                       if line.startswith(f"| {protocol}, {split.upper()} | {direction} |")]
                if "learned" not in f:
                    assert not row and f"no test query in {direction}" in view
                    continue
                assert len(row) == 1, (name, direction)
                cells = [cell.strip() for cell in row[0].strip("|").split("|")]
                assert cells[3:6] == [f"{f['learned']:.2f}", f"{f['untuned']:.2f}",
                                      f"{f['e5']:.2f}"]
                assert cells[6].startswith(f"{f['best_single_map']:.2f} (`{f['best_single']}`)")
                assert cells[7] == f"{f['learned_over_best_single']:.2f}×"
