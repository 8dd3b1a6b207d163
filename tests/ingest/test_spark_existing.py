"""Either engine adds to a corpus the other built, by the same rules, with the papers of one
ingest of everything; a Spark ingest killed before its swap leaves the old corpus readable; a
corpus under a URI is refused by Spark with one line, before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.crashpoint import ENV
from openmsd.ingest import ingest, ingest_on_spark
from openmsd.report import IngestError


def _papers(path: Path, ids: range, cites: int | None = None) -> Path:
    path.write_bytes(b"".join(orjson.dumps(
        {"id": f"p{i}", "title": f"Paper {i} on parsing", "year": 2001,
         "references": [f"p{cites}"] if cites is not None else []}) + b"\n" for i in ids))
    return path


def _state(root: Path) -> tuple[bytes, list[str]]:
    """The manifest's bytes and the paper ids of a corpus."""
    return ((root / "manifest.json").read_bytes(),
            Corpus(root).read("papers", ["paper_id"]).column(0).to_pylist())


def _papers_of(root: Path) -> list[dict]:
    """Every row of a corpus's papers table, by paper id."""
    return sorted(Corpus(root).read("papers").to_pylist(), key=lambda row: row["paper_id"])


def test_spark_refuses_a_corpus_under_a_uri_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    ingest([_papers(tmp_path / "a.jsonl", range(30))], root)
    before = _state(root)
    new = _papers(tmp_path / "b.jsonl", range(100, 102))
    with pytest.raises(IngestError, match=r"already a corpus .* --engine spark adds to a "
                                          r"corpus in a local directory only"):
        ingest_on_spark([new], f"file://{root}")
    result = CliRunner().invoke(app, ["ingest", str(new), "--out", f"file://{root}",
                                      "--engine", "spark"])
    assert result.exit_code == 2
    assert "already a corpus" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(root) == before  # nothing written, nothing removed
    assert not (root / "_staged").exists() and not (root / "_work").exists()


@pytest.mark.slow  # about 20 s: with the slow tests
def test_each_engine_adds_to_the_others_corpus(tmp_path: Path, spark) -> None:
    a = _papers(tmp_path / "a.jsonl", range(20))
    b = _papers(tmp_path / "b.jsonl", range(100, 105), cites=3)
    single = ingest([a, b], tmp_path / "single")
    assert single.build["counts"]["citations"] == 5
    # Spark, then DuckDB
    built = ingest_on_spark([a], tmp_path / "spark", spark=spark)
    assert built.build["counts"]["papers"] == 20
    added = ingest([b], tmp_path / "spark")
    assert added.unchanged == [] and added.staged == [str(b)]
    assert added.build == single.build  # the same parts, so the same build id and counts
    assert _papers_of(tmp_path / "spark") == _papers_of(tmp_path / "single")
    assert "engine" not in orjson.loads((tmp_path / "spark" / "manifest.json").read_bytes())
    again = ingest([a, b], tmp_path / "spark")  # both parts known: nothing read again
    assert sorted(again.unchanged) == sorted([str(a), str(b)]) and again.staged == []
    # DuckDB, then Spark
    ingest([a], tmp_path / "duckdb")
    added = ingest_on_spark([b], tmp_path / "duckdb", spark=spark)
    assert added.unchanged == [] and added.staged == [str(b)]
    assert added.build == single.build
    assert _papers_of(tmp_path / "duckdb") == _papers_of(tmp_path / "single")
    for name in ("references", "citations", "contexts"):
        assert (Corpus(tmp_path / "duckdb").read(name).num_rows
                == Corpus(tmp_path / "single").read(name).num_rows), name
    assert orjson.loads((tmp_path / "duckdb" / "manifest.json").read_bytes())["engine"] == "spark"
    again = ingest_on_spark([a, b], tmp_path / "duckdb", spark=spark)
    assert sorted(again.unchanged) == sorted([str(a), str(b)]) and again.staged == []
    assert again.build == single.build


def test_a_changed_input_replaces_its_part_in_place_on_spark(tmp_path: Path, spark) -> None:
    a = _papers(tmp_path / "a.jsonl", range(10))
    b = _papers(tmp_path / "b.jsonl", range(100, 103))
    root = tmp_path / "corpus"
    ingest([a, b], root)
    _papers(a, range(10, 14))  # a changed: its part read again, in its place (ordinal 0)
    changed = ingest_on_spark([a], root, spark=spark)
    assert changed.staged == [str(a)]
    single = ingest([a, b], tmp_path / "single")
    assert changed.build == single.build
    assert _papers_of(root) == _papers_of(tmp_path / "single")
    assert sorted(p.name[:4] for p in (root / "staged").iterdir()) == ["0000", "0001"]


@pytest.mark.parametrize("point", [
    "ingest.parts_in_place",
    # a minute of Spark each: with the slow tests (the old corpus after before_swap, as after
    # parts_in_place; the new one after before_manifest)
    pytest.param("ingest.before_swap", marks=pytest.mark.slow),
    pytest.param("ingest.before_manifest", marks=pytest.mark.slow)])
def test_a_spark_ingest_killed_anywhere_leaves_a_readable_corpus(tmp_path: Path,
                                                                 point: str) -> None:
    a = _papers(tmp_path / "a.jsonl", range(20))
    b = _papers(tmp_path / "b.jsonl", range(100, 105), cites=3)
    root = tmp_path / "corpus"
    ingest([a], root)
    before = _papers_of(root)
    ingest([a, b], tmp_path / "single")
    after = _papers_of(tmp_path / "single")
    command = [sys.executable, "-m", "openmsd", "ingest", str(b), "--out", str(root),
               "--engine", "spark"]
    killed = subprocess.run(command, env={**os.environ, ENV: point},
                            capture_output=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    Corpus(root).check()
    # the old corpus before the tables are swapped in, the new one after: never neither
    assert _papers_of(root) == (after if point == "ingest.before_manifest" else before)
    done = subprocess.run(command, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _papers_of(root) == after
    assert not list(root.glob(".build-*")) and not (root / "_staged").exists()


def test_a_staged_part_gone_is_read_again_from_its_input(tmp_path: Path) -> None:
    """A corpus whose staged part is missing (as the parts of an older Spark build, kept under
    ``_staged/``): the next ingest reads that input again, or names it when it is gone."""
    a = _papers(tmp_path / "a.jsonl", range(10))
    root = tmp_path / "corpus"
    ingest([a], root)
    [part] = list((root / "staged").iterdir())
    part.rename(tmp_path / "elsewhere")
    b = _papers(tmp_path / "b.jsonl", range(50, 53))
    assert ingest([b], root).build["counts"]["papers"] == 13
    next(p for p in (root / "staged").iterdir() if p.name.startswith("0000-")).rename(
        tmp_path / "gone")
    a.unlink()
    c = _papers(tmp_path / "c.jsonl", range(70, 71))
    with pytest.raises(IngestError, match=r"the staged part of .*a\.jsonl is missing"):
        ingest([c], root)
    assert Corpus(root).read("papers").num_rows == 13  # the corpus as it was
