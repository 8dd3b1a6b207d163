"""The README's "Your own corpus" block, run as written and in order, against loopback servers
speaking OpenAlex's and Zotero's public APIs: each ``openmsd`` command of the block runs with
its own words; only where a server lives is added (``--api-url``, ``--zotero-url``) and the
keys and libraries come from the environment, as a user's shell would give them.

The OpenAlex world holds the shipped sample's papers (their real titles, abstracts, languages
and years; their DOIs, the README's 10.1590/2236-8906-76-2021 among them), each referencing a
few others in a fixed pattern; ``my.bib`` holds three of them. Before ``update`` two new works
appear, published today and citing the library.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SECTION = re.compile(r"^## Your own corpus\n(.*?)^## ", re.M | re.S)
BLOCK = re.compile(r"^```bash\n(.*?)^```", re.M | re.S)
LIBRARY_DOIS = ["10.1590/2236-8906-76-2021"]
STEPS = [("fetch", "openalex", "--dry-run"), ("fetch", "openalex"), ("ingest",), ("embed",),
         ("index", "build"), ("related",), ("relations",), ("train", "adapter"),
         ("train", "ranker"), ("update", "--watch")]


@dataclass(frozen=True)
class Command:
    """One simple command of the block: its words and the file its output goes to."""

    line: int
    words: tuple[str, ...]
    stdout: str | None = None

    def __str__(self) -> str:
        out = f" > {self.stdout}" if self.stdout else ""
        return f"README.md:{self.line}: {shlex.join(self.words)}{out}"


def readme_block() -> list[Command]:
    """The commands of the first ``bash`` block under "## Your own corpus", in order (a line
    of ``a && b`` is two; comments are left out; ``> FILE`` is kept as the output's file)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = SECTION.search(text)
    assert section, "README.md has no '## Your own corpus' section"
    block = BLOCK.search(section.group(1))
    assert block, "README.md's 'Your own corpus' has no bash block"
    first = text[:section.start(1) + block.start(1)].count("\n") + 1
    found = []
    for number, line in enumerate(block.group(1).splitlines(), first):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        stdout = None
        tokens = iter([*lexer, "&&"])
        for token in tokens:
            if token == ">":
                stdout = next(tokens)
            elif token == "&&":
                if words:
                    found.append(Command(number, tuple(words), stdout))
                words, stdout = [], None
            else:
                assert token not in {"|", ";", "||", "&", ">>", "<"}, f"README.md:{number}"
                words.append(token)
    return found


def _is(command: Command, step: tuple[str, ...]) -> bool:
    """Whether ``command`` is ``openmsd STEP...`` with the step's options among its words."""
    words = command.words[1:]
    return words[:len([s for s in step if not s.startswith("-")])] == tuple(
        s for s in step if not s.startswith("-")) and all(
        s in words for s in step if s.startswith("-"))


def test_the_block_covers_the_own_corpus_steps() -> None:
    commands = [c for c in readme_block() if c.words[0] == "openmsd"]
    at = 0
    for step in STEPS:  # each step, in this order
        while at < len(commands) and not _is(commands[at], step):
            at += 1
        assert at < len(commands), f"README's own-corpus block has no {' '.join(step)} " \
                                   "after the steps before it"


def sample_world(tmp: Path) -> tuple[object, list[str]]:
    """An OpenAlex world of the shipped sample's papers that have a DOI, a title and an
    abstract (ingested into ``tmp``, then removed), and their DOIs in work-number order."""
    from openmsd.corpus import Corpus
    from openmsd.ingest import ingest
    from tests.fetch.apiserver import World, openalex_work

    ingest([ROOT / "openmsd" / "data" / "sample"], tmp)
    rows = Corpus(tmp).read("papers", ["doi", "title", "abstract", "language", "year",
                                       "authors", "venue"]).to_pylist()
    rows = sorted((r for r in rows if r["doi"] and r["title"] and r["abstract"]),
                  key=lambda r: r["doi"])
    world = World()
    for i, row in enumerate(rows):
        refs = sorted({1000 + j for j in (i - 1, i - 2, i // 2, i // 3) if 0 <= j < i})
        work = openalex_work(1000 + i, row["title"], row["abstract"], int(row["year"] or 2000),
                             row["language"] or "en", list(row["authors"] or [])[:3], refs,
                             row["venue"])
        doi = "https://doi.org/" + row["doi"]
        world.add({**work, "doi": doi, "ids": {**work["ids"], "doi": doi}})
    shutil.rmtree(tmp)
    return world, [r["doi"] for r in rows]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple]:
    from tests.fetch import apiserver, zoteroserver

    world, dois = sample_world(tmp_path / "sample")
    library = zoteroserver.Library()
    thesis = library.add_collection("Thesis")
    for doi in LIBRARY_DOIS:
        library.add_item("a paper of the thesis", doi, collections=[thesis])
    for api in apiserver.serve(world):
        for zotero in zoteroserver.serve(library):
            yield api, zotero, dois


@pytest.mark.slow
def test_the_readme_own_corpus_block_runs_as_written(
        servers: tuple, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command of the block, in order, exits 0 without a traceback; straight after
    ``train ranker`` (checks of the block's promises, not in it) ``related`` rates its results
    and ``watch`` of the library works; ``update --watch`` then lists exactly the two works
    that appeared in OpenAlex, ranked; ``train ranker`` (as ``tune``) also works without a dev
    split."""
    from openmsd.cli import app
    from openmsd.fetch import LOCAL_API_ENV
    from tests.fetch import apiserver, zoteroserver

    api, zotero, dois = servers
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(home)
    seeds = [*LIBRARY_DOIS, dois[len(dois) // 2], dois[len(dois) // 3]]
    (home / "my.bib").write_text("".join(
        f"@article{{p{i}, title = {{Paper {i}}}, doi = {{{doi}}}}}\n"
        for i, doi in enumerate(seeds)), encoding="utf-8")
    monkeypatch.setenv(LOCAL_API_ENV, zotero.local)
    monkeypatch.setenv("ZOTERO_LIBRARY", f"user:{zoteroserver.USER}")
    monkeypatch.setenv("ZOTERO_API_KEY", zoteroserver.WRITE_KEY)
    runner = CliRunner()

    def run(words: list[str], what: object) -> str:
        result = runner.invoke(app, words)
        assert result.exit_code == 0, f"{what}\n{result.output}"
        assert "Traceback" not in result.output, f"{what}\n{result.output}"
        return result.stdout

    said: dict[tuple[str, ...], str] = {}
    for command in readme_block():
        words = list(command.words)
        if words[0] == "pip":
            continue
        if words[0] == "export":
            name = words[1].partition("=")[0]
            assert name == "OPENALEX_API_KEY", f"{command}: an unknown variable"
            monkeypatch.setenv(name, apiserver.OPENALEX_KEY)
            continue
        assert words[0] == "openmsd", f"{command}: not an openmsd command"
        if words[1:3] == ["fetch", "openalex"]:
            words += ["--api-url", api.openalex]
        if "--to-zotero" in words:
            words += ["--zotero-url", zotero.url]
        if words[1] == "update":  # two works appear, published today, citing two seeds
            today = datetime.now(UTC).strftime("%Y-%m-%d")
            for number, cited in ((5001, seeds[0]), (5002, seeds[1])):
                api.world.add(apiserver.openalex_work(
                    number, f"Novo estudo {number} sobre orquídeas e florestas do Brasil",
                    "Um inventário de orquídeas numa floresta secundária.", 2026, "pt",
                    ["Ana Silva"], [1000 + dois.index(cited)], updated="2099-01-01",
                    published=today))
        stdout = run(words[1:], command)
        if command.stdout:
            (home / command.stdout).write_text(stdout, encoding="utf-8")
        said[tuple(command.words[1:3])] = stdout
        if words[1:3] == ["train", "ranker"]:
            _straight_after_training(run, seeds[0])

    assert "works.jsonl.gz" in said["fetch", "openalex"]
    assert "@article" in (home / "related.bib").read_text(encoding="utf-8")
    feed = feedparser.parse((home / "new.xml").read_bytes())
    assert not feed.bozo
    assert {e.id for e in feed.entries} == {"https://doi.org/10.5555/test.5001",
                                            "https://doi.org/10.5555/test.5002"}
    assert not list(home.glob("*.partial")) and not list(home.glob("*.progress.json"))

    # a corpus without a dev split: train ranker (and tune, its other name) learns from train
    run(["relations", "mycorpus", "--dev", "0"], "relations --dev 0")
    assert "saved to" in run(["tune", "mycorpus"], "tune without a dev split")


def _straight_after_training(run, paper: str) -> None:
    """``related`` rates each result (the trained ranker's probability) and does not claim an
    adapter that leaves vectors as they are; ``watch`` of the library works (its first watch:
    every paper but the seeds)."""
    import json

    results = json.loads(run(["related", "mycorpus", paper, "--json"], "related --json"))
    assert results and all(0.0 <= r["relevance"] <= 1.0 for r in results), results
    adapter = json.loads(Path("mycorpus/adapters/adapter-e5-small-multilingual/adapter.json")
                         .read_text(encoding="utf-8"))
    if adapter["training"]["chosen"]["candidate"] == "identity":
        assert not any("adapter" in " ".join(r["why"]) for r in results), results
    watched = run(["watch", "mycorpus", "--seeds", "my.bib"], "watch --seeds my.bib")
    assert "new papers" in watched or "rank" in watched
