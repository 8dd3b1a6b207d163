"""``openmsd ingest SNAPSHOT``: an OpenAlex snapshot folder in either layout (gzip JSON lines or
Parquet), read by its manifest, its deletion ledger applied, ``--since`` reading the newer
partitions only; a bad snapshot is one line and writes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from tests.fetch.conftest import small_world
from tests.ingest.snapshot_files import write_snapshot

runner = CliRunner()
OLD, NEW = "2026-01-15", "2026-08-20"


def _partitions() -> dict[str, list[dict]]:
    """The twelve works of the fetch tests: 1001-1006 last updated in January, 1007-1012 in
    August; 1013, a thesis from a repository, in August too."""
    works = sorted(small_world().works.values(), key=lambda w: w["id"])
    out: dict[str, list[dict]] = {OLD: [], NEW: []}
    for work in works:
        day = OLD if int(work["id"].rsplit("W", 1)[1]) <= 1006 else NEW
        out[day].append({**work, "updated_date": f"{day}T00:00:00.000000"})
    thesis = {**out[NEW][0], "id": "https://openalex.org/W1013", "doi": None,
              "ids": {"openalex": "https://openalex.org/W1013"}, "title": "Une thèse",
              "display_name": "Une thèse", "type": "dissertation", "is_xpac": True}
    out[NEW].append(thesis)
    return out


def _invoke(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _papers(corpus: Path) -> dict[str, dict]:
    return {row["paper_id"]: row for row in Corpus(corpus).read("papers").to_pylist()}


def _error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    return " ".join(output[output.index("error:"):].split())


def test_both_layouts_give_the_same_corpus_by_the_manifest(tmp_path: Path) -> None:
    corpora = {}
    for layout in ("jsonl", "parquet"):
        works = write_snapshot(tmp_path / layout, _partitions(), layout,
                               deleted=["W1012", "W99999"], part_rows=4)
        # a partition on disk the manifest does not name (a copy synced without --delete)
        stray = works / "updated_date=2025-01-01"
        stray.mkdir()
        shutil.copy(next((works / f"updated_date={OLD}").iterdir()), stray / "part_0000.bin")
        corpus = tmp_path / f"corpus-{layout}"
        code, output = _invoke("ingest", tmp_path / layout, "--out", corpus)
        assert code == 0, output
        corpora[layout] = _papers(corpus)
    jsonl, parquet = corpora["jsonl"], corpora["parquet"]
    assert len(jsonl) == 12  # 13 works, W1012 deleted
    assert "10.5555/test.1012" not in jsonl
    fields = ("title", "abstract", "year", "authors", "doc_type", "aliases", "declared_language")
    assert {k: [v[f] for f in fields] for k, v in jsonl.items()} == \
        {k: [v[f] for f in fields] for k, v in parquet.items()}
    assert jsonl["10.5555/test.1001"]["abstract"].startswith("Analyse syntaxique robuste")
    assert jsonl["openalex:W1013"]["doc_type"] == "dissertation"
    assert jsonl["10.5555/test.1001"]["abstract_source"] == "openalex"
    citations = Corpus(tmp_path / "corpus-parquet").read("citations").num_rows
    assert citations == Corpus(tmp_path / "corpus-jsonl").read("citations").num_rows > 0


def test_since_reads_the_newer_partitions_and_needs_only_them(tmp_path: Path) -> None:
    works = write_snapshot(tmp_path / "snap", _partitions(), "parquet")
    shutil.rmtree(works / f"updated_date={OLD}")  # only the newer partitions downloaded
    code, output = _invoke("ingest", tmp_path / "snap", "--since", "2026-08-01", "--out",
                           tmp_path / "recent")
    assert code == 0, output
    assert sorted(_papers(tmp_path / "recent")) == sorted(
        [f"10.5555/test.{n}" for n in range(1007, 1013)] + ["openalex:W1013"])
    # without --since, the missing partition is one line and nothing is written
    code, output = _invoke("ingest", tmp_path / "snap", "--out", tmp_path / "all")
    line = _error_line(output)
    assert code == 2 and "1 of the 2 parts manifest.json lists are missing" in line
    assert f"updated_date={OLD}/part_0000.parquet" in line and "aws s3 sync" in line
    assert not (tmp_path / "all").exists()


def _bad_manifest(works: Path) -> None:
    (works / "manifest.json").write_text('{"files": [', encoding="utf-8")


def _other_entity(works: Path) -> None:
    manifest = json.loads((works / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][0]["url"] = manifest["files"][0]["url"].replace("/works/", "/authors/")
    (works / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _no_manifest(works: Path) -> None:
    (works / "manifest.json").unlink()
    (works.parent / "manifest.json").unlink()


def _bad_ledger(works: Path) -> None:
    (works / "deleted_ids.csv").write_text("id;date\nW1;2026\n", encoding="utf-8")


def _bad_ledger_id(works: Path) -> None:
    (works / "deleted_ids.csv").write_text("work_id,deleted_date\nA123,2026-08-14\n",
                                           encoding="utf-8")


@pytest.mark.parametrize(("spoil", "says"), [
    (_bad_manifest, "manifest.json: not a readable manifest"),
    (_other_entity, "is a partition of authors, not of works"),
    (_no_manifest, "no manifest.json (OpenAlex writes it last"),
    (_bad_ledger, "deleted_ids.csv: line 1: expected the header work_id,deleted_date"),
    (_bad_ledger_id, "deleted_ids.csv: line 2: 'A123' is not an OpenAlex work id"),
])
def test_a_bad_snapshot_is_one_line_and_writes_nothing(tmp_path: Path, spoil, says) -> None:
    works = write_snapshot(tmp_path / "snap", _partitions(), "jsonl")
    spoil(works)
    code, output = _invoke("ingest", tmp_path / "snap", "--out", tmp_path / "corpus")
    assert code == 2 and "Traceback" not in output
    assert says in _error_line(output)
    assert not (tmp_path / "corpus").exists()


def test_since_names_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.jsonl").write_text('{"id": "x", "title": "t"}\n', encoding="utf-8")
    code, output = _invoke("ingest", tmp_path / "plain", "--since", "2026-01-01", "--out",
                           tmp_path / "c")
    assert code == 2 and "is not one" in _error_line(output)
    code, output = _invoke("ingest", tmp_path / "plain", "--since", "last week", "--out",
                           tmp_path / "c")
    assert code == 2 and "--since 'last week': expected a date" in _error_line(output)


def test_since_refreshes_a_corpus_newer_values_first_deleted_works_out(tmp_path: Path) -> None:
    snap, corpus = tmp_path / "snap", tmp_path / "corpus"
    write_snapshot(snap, _partitions(), "parquet")
    code, output = _invoke("ingest", snap, "--out", corpus)
    assert code == 0, output
    assert _papers(corpus)["10.5555/test.1001"]["title"] == "Analyse syntaxique robuste du français"

    # the next release: W1001 retitled (it moves to a new partition), W1002 deleted, a new work
    release = _partitions()
    retitled = next(w for w in release[OLD] if w["id"].endswith("W1001"))
    release[OLD].remove(retitled)
    new = {**release[NEW][1], "id": "https://openalex.org/W1020",
           "doi": "https://doi.org/10.5555/test.1020", "title": "Un nouveau travail"}
    release["2026-10-02"] = [{**retitled, "title": "Analyse syntaxique robuste (révisée)",
                              "updated_date": "2026-10-02T00:00:00.000000"}, new]
    shutil.rmtree(snap)
    write_snapshot(snap, release, "parquet", deleted=["W1002"])
    code, output = _invoke("ingest", snap, "--since", "2026-10-01", "--out", corpus)
    assert code == 0, output
    papers = _papers(corpus)
    assert papers["10.5555/test.1001"]["title"] == "Analyse syntaxique robuste (révisée)"
    assert "10.5555/test.1020" in papers and "10.5555/test.1002" not in papers
    citing = {r["citing_id"] for r in Corpus(corpus).read("references").to_pylist()}
    assert "10.5555/test.1002" not in citing and "10.5555/test.1001" in citing
