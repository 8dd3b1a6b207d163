"""``openmsd update CORPUS --watch LIBRARY`` against a local OpenAlex server: the first run
lists every paper (a first watch), and after new works appear in the API the second run's
feed lists exactly those, ranked for the library, with why. Without a key (the date filters
are paid-only) the new works are found by publication date and by their citations of the
corpus."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import feedparser
from typer.testing import CliRunner

from openmsd.cli import app
from tests.fetch.apiserver import openalex_work, serve
from tests.fetch.conftest import small_world

runner = CliRunner()
MODEL = "muse-v3"
LIBRARY = """@article{a, title = {Analyse syntaxique robuste du français},
  doi = {10.5555/test.1001}}
@article{b, title = {Neural machine translation for low resource languages},
  doi = {10.5555/test.1002}}
"""


def _run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_update_watch_lists_exactly_the_new_works(tmp_path: Path) -> None:
    world = small_world()
    library = tmp_path / "library.bib"
    library.write_text(LIBRARY, encoding="utf-8")
    works, corpus = tmp_path / "w.jsonl.gz", tmp_path / "corpus"
    first, second = tmp_path / "first.xml", tmp_path / "second.xml"
    for server in serve(world):
        _run("fetch", "openalex", "W1001", "W1002", "W1003", "--citing", "--out", works,
             "--mailto", "me@example.org", "--api-url", server.openalex)
        _run("ingest", works, "--out", corpus)
        _run("embed", corpus, "--model", MODEL)
        _run("index", "build", corpus, "--model", MODEL)

        _run("update", corpus, "--watch", library, "--atom", first)
        before = feedparser.parse(first.read_bytes())
        assert not before.bozo and before.entries  # first watch: every paper but the seeds
        seen = {e.id for e in before.entries}

        # two new works appear, published today: a Portuguese one citing a seed, an English one
        today = datetime.now(UTC).strftime("%Y-%m-%d")
        world.add(openalex_work(2001, "Análise sintática robusta do português",
                                "Um analisador sintático robusto para o português.", 2026,
                                "pt", ["Ana Silva"], [1001], updated="2099-01-01",
                                published=today))
        world.add(openalex_work(2002, "Low resource neural translation revisited",
                                "Neural machine translation with little parallel data.", 2026,
                                "en", ["Bo Li"], [1002], updated="2099-01-01",
                                published=today))
        output = _run("update", corpus, "--watch", library, "--atom", second, "--html",
                      tmp_path / "second.html")
        assert "2 new papers since" in output, output
        after = feedparser.parse(second.read_bytes())
        assert not after.bozo
        ids = {e.id for e in after.entries}
        assert ids == {"https://doi.org/10.5555/test.2001", "https://doi.org/10.5555/test.2002"}
        assert not ids & seen
        entry = next(e for e in after.entries if e.id.endswith("2001"))
        assert entry.tags[0].term == "pt" and "near" in entry.summary

        output = _run("update", corpus, "--watch", library, "--atom", second)
        assert "nothing new since" in output
        assert feedparser.parse(second.read_bytes()).entries == []


def test_a_failed_update_keeps_one_set_of_progress_files_and_its_rerun_goes_on(
        tmp_path: Path) -> None:
    world = small_world()
    works, corpus = tmp_path / "w.jsonl.gz", tmp_path / "corpus"
    for server in serve(world):
        _run("fetch", "openalex", "W1001", "W1002", "--out", works, "--api-url",
             server.openalex)
        _run("ingest", works, "--out", corpus)
        world.add(openalex_work(2001, "Análise sintática robusta do português",
                                "Um analisador sintático robusto.", 2026, "pt", ["Ana Silva"],
                                [1001], updated="2099-01-01"))
        for _ in range(2):  # nothing listens there: the update fails, twice
            failed = runner.invoke(app, ["update", str(corpus), "--api-url",
                                         "http://127.0.0.1:9", "--timeout", "1"])
            assert failed.exit_code == 2
            said = " ".join(failed.output.split())
            assert "127.0.0.1:9" in said and "Traceback" not in said
            # at most one set of progress files, however often it fails
            assert len(list(tmp_path.glob("w.update-*.progress.json"))) <= 1
            assert len(list(tmp_path.glob("w.update-*.partial"))) <= 1
        _run("update", corpus, "--api-url", server.openalex)
        assert not list(tmp_path.glob("w.update-*.progress.json"))
        assert not list(tmp_path.glob("w.update-*.partial"))
        assert len(list(tmp_path.glob("w.update-*.jsonl.gz"))) == 1
