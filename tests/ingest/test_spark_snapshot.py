"""``ingest --engine spark`` on an OpenAlex snapshot: its deletion ledger and ``--since`` apply
as they do in the single-process ingest, row for row (PySpark in local mode)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pyarrow.dataset as ds
import pytest

from openmsd.corpus import TABLES
from openmsd.ingest import ingest, ingest_on_spark, input_files
from openmsd.ingest.spark import deleted_aliases
from openmsd.report import IngestError
from tests.ingest.snapshot_files import write_snapshot
from tests.ingest.test_snapshot import NEW, OLD, _partitions

NEWEST = "2026-10-02"


def _release(root: Path) -> Path:
    """A snapshot whose ledger deletes W1002 and whose newest partition retitles W1001 and adds
    W1020; the snapshot folder."""
    release = _partitions()
    retitled = next(w for w in release[OLD] if w["id"].endswith("W1001"))
    release[OLD].remove(retitled)
    new = {**release[NEW][1], "id": "https://openalex.org/W1020",
           "doi": "https://doi.org/10.5555/test.1020", "title": "Un nouveau travail"}
    release[NEWEST] = [{**retitled, "title": "Analyse syntaxique robuste (révisée)",
                        "updated_date": f"{NEWEST}T00:00:00.000000"}, new]
    write_snapshot(root, release, "parquet", deleted=["W1002"])
    return root


def _fetched(path: Path) -> Path:
    """Works fetched from the API before the deletion: W1002 (deleted since) and W1003."""
    works = [w for day in _partitions().values() for w in day
             if w["id"].endswith(("W1002", "W1003"))]
    path.write_text("".join(json.dumps(w) + "\n" for w in works), encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict]:
    return ds.dataset(str(path), format="parquet").to_table().to_pylist()


def _same_tables(one: Path, other: Path) -> None:
    for name in TABLES:
        assert _rows(one / f"{name}.parquet") == _rows(other / f"{name}.parquet"), name


def test_the_ledger_leaves_deleted_works_out_of_every_input_on_spark(tmp_path, spark):
    inputs = [_release(tmp_path / "snap"), _fetched(tmp_path / "works.jsonl")]
    single = ingest(inputs, tmp_path / "single")
    many = ingest_on_spark(inputs, tmp_path / "spark", spark=spark)
    papers = {r["paper_id"] for r in _rows(tmp_path / "spark" / "papers.parquet")}
    assert "10.5555/test.1002" not in papers and "10.5555/test.1003" in papers
    citing = {r["citing_id"] for r in _rows(tmp_path / "spark" / "references.parquet")}
    assert "10.5555/test.1002" not in citing
    assert many.report["counts"]["papers.deleted_left_out"] == 1
    assert many.report["counts"]["papers.deleted_left_out"] == \
        single.report["counts"]["papers.deleted_left_out"]
    assert many.build["counts"] == single.build["counts"]
    _same_tables(tmp_path / "spark", tmp_path / "single")


def test_since_reads_the_newer_partitions_on_spark(tmp_path, spark):
    snap = _release(tmp_path / "snap")
    shutil.rmtree(snap / "data" / "parquet" / "works" / f"updated_date={OLD}")  # not needed
    single = ingest([snap], tmp_path / "single", since="2026-10-01")
    many = ingest_on_spark([snap], tmp_path / "spark", spark=spark, since="2026-10-01")
    papers = {r["paper_id"]: r for r in _rows(tmp_path / "spark" / "papers.parquet")}
    assert sorted(papers) == ["10.5555/test.1001", "10.5555/test.1020"]
    assert papers["10.5555/test.1001"]["title"] == "Analyse syntaxique robuste (révisée)"
    assert many.build["counts"] == single.build["counts"]
    _same_tables(tmp_path / "spark", tmp_path / "single")
    manifest = orjson.loads((tmp_path / "spark" / "manifest.json").read_bytes())
    assert [e["since"] for e in manifest["inputs"]] == ["2026-10-01"]


def test_since_and_the_ledger_of_a_uri_input(tmp_path):
    snap = _release(tmp_path / "snap")
    uri = f"file://{snap}"
    assert deleted_aliases([uri]) == deleted_aliases([snap]) == ["openalex:W1002"]
    names = [Path(f).name for _, f in input_files([uri])]
    assert names and all(n.startswith("part_") for n in names)  # no manifest, no ledger
    with pytest.raises(IngestError, match=r"--since 2026-10-01 reads a local OpenAlex "
                                          r"snapshot folder by its manifest"):
        input_files([uri], since="2026-10-01")
    (snap / "data" / "parquet" / "works" / "deleted_ids.csv").write_text(
        "work_id,deleted_date\nA12,2026-08-14\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"works/deleted_ids.csv: line 2: 'A12' is not an "
                                          "OpenAlex work id"):
        deleted_aliases([uri])
