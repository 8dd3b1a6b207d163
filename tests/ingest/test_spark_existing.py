"""A Spark ingest never replaces a corpus: it refuses one that exists, with one line, before
anything is written; the DuckDB ingest adds inputs to a corpus built on Spark."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
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


def test_spark_refuses_an_existing_corpus_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    ingest([_papers(tmp_path / "a.jsonl", range(30))], root)
    before = _state(root)
    new = _papers(tmp_path / "b.jsonl", range(100, 102))
    with pytest.raises(IngestError, match=r"already a corpus .* --engine spark builds a new"):
        ingest_on_spark([new], root)
    result = CliRunner().invoke(app, ["ingest", str(new), "--out", str(root),
                                      "--engine", "spark"])
    assert result.exit_code == 2
    assert "already a corpus" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _state(root) == before  # nothing written, nothing removed
    assert not (root / "_staged").exists() and not (root / "_work").exists()


def test_duckdb_adds_to_a_corpus_built_on_spark(tmp_path: Path, spark) -> None:
    a = _papers(tmp_path / "a.jsonl", range(20))
    b = _papers(tmp_path / "b.jsonl", range(100, 105), cites=3)
    built = ingest_on_spark([a], tmp_path / "spark", spark=spark)
    assert built.build["counts"]["papers"] == 20
    with pytest.raises(IngestError, match="already a corpus"):  # Spark twice: refused too
        ingest_on_spark([b], tmp_path / "spark", spark=spark)
    added = ingest([b], tmp_path / "spark")  # the DuckDB engine: incremental
    assert added.unchanged == [] and added.staged == [str(b)]
    single = ingest([a, b], tmp_path / "single")
    assert added.build["counts"] == single.build["counts"]
    assert added.build["counts"]["citations"] == 5
    assert _state(tmp_path / "spark")[1] == _state(tmp_path / "single")[1]
    assert "engine" not in orjson.loads((tmp_path / "spark" / "manifest.json").read_bytes())
    again = ingest([a, b], tmp_path / "spark")  # both parts known: nothing read again
    assert sorted(again.unchanged) == sorted([str(a), str(b)]) and again.staged == []


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
