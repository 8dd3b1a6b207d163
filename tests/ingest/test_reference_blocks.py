"""``references`` blocks (one paper's references as columns) are staged as the same rows the
``reference`` records they stand for would be, and their texts are held to the field limits."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from openmsd.corpus import Corpus, reference_rows
from openmsd.ingest import ingest, input_records
from openmsd.ingest.formats import get_reader
from openmsd.ingest.inputs import FIELD_CHARS
from openmsd.ingest.run import StagedWriter
from openmsd.report import Report


def _staged(directory: Path, records: list[tuple[str, dict]]) -> list[dict]:
    writer = StagedWriter(directory)
    for kind, record in records:
        writer.add(kind, dict(record))
    writer.close()
    return pq.read_table(directory / "staged_references.parquet").sort_by("seq").to_pylist()


BLOCK = {"citing": "doi:10.1/a", "position": [0, 2, 3], "ref_id": ["W1", "W3", "W4"],
         "targets": [["openalex:W1"], ["openalex:W3", "doi:10.9/x"], []],
         "year": [2001, None, 2003], "source": "openalex", "loc": "w.jsonl:1"}


def test_reference_rows_splits_columns_and_shares_the_rest():
    rows = reference_rows(BLOCK)
    assert [r["position"] for r in rows] == [0, 2, 3]
    assert rows[1] == {"citing": "doi:10.1/a", "position": 2, "ref_id": "W3",
                       "targets": ["openalex:W3", "doi:10.9/x"], "year": None,
                       "source": "openalex", "loc": "w.jsonl:1"}


def test_a_block_is_staged_as_its_reference_records_are(tmp_path):
    paper = {"key": "doi:10.1/a", "title": "A", "source": "openalex"}
    row = {"citing": "doi:10.1/b", "position": 0, "ref_id": "r0", "title": "A title",
           "authors": ["Ana"], "targets": ["doi:10.5/z"]}
    other = {"citing": "doi:10.1/c", "position": [5], "ref_id": ["W9"], "raw": ["Raw text"],
             "title": "shared title", "source": "openalex"}
    as_blocks = _staged(tmp_path / "blocks", [("paper", paper), ("references", BLOCK),
                                              ("reference", row), ("references", other)])
    as_rows = _staged(tmp_path / "rows", [("paper", paper),
                                          *[("reference", r) for r in reference_rows(BLOCK)],
                                          ("reference", row),
                                          *[("reference", r) for r in reference_rows(other)]])
    assert as_blocks == as_rows
    assert [r["seq"] for r in as_blocks] == [1, 2, 3, 4, 5]  # the paper is seq 0
    assert as_blocks[4]["title"] == "shared title" and as_blocks[4]["raw"] == "Raw text"
    assert as_blocks[1]["targets"] == ["openalex:W3", "doi:10.9/x"]
    assert as_blocks[2]["targets"] == [] and as_blocks[2]["year"] == 2003


def test_a_block_whose_columns_differ_in_length_is_an_error(tmp_path):
    bad = {"citing": "doi:10.1/a", "position": [0, 1], "ref_id": ["W1"]}
    writer = StagedWriter(tmp_path / "part")
    writer.add("references", bad)
    with pytest.raises(ValueError, match="'ref_id' does not have one item per position"):
        writer.close()
    writer.abort()


def test_a_too_long_text_in_a_block_skips_that_reference_only(tmp_path):
    long_id = "https://openalex.org/W" + "1" * FIELD_CHARS.get("ref_id", 10_000)
    work = {"id": "https://openalex.org/W5", "title": "Five", "referenced_works": [
        "https://openalex.org/W1", long_id, "https://openalex.org/W2"]}
    path = tmp_path / "works.jsonl"
    path.write_bytes(orjson.dumps(work) + b"\n")
    report = Report()
    records = list(input_records([path], get_reader("openalex"), report))
    assert [kind for kind, _ in records] == ["paper", "reference", "reference"]
    assert [r["ref_id"] for _, r in records[1:]] == ["W1", "W2"]
    assert [r["position"] for _, r in records[1:]] == [0, 2]
    (problem,) = report.problems
    assert problem.where == "line 1" and "field ref_id too long" in problem.reason
    assert "reference skipped" in problem.reason


def test_openalex_references_reach_the_corpus_through_blocks(tmp_path):
    works = [{"id": f"https://openalex.org/W{n}", "title": f"Paper {n}",
              "referenced_works": [f"https://openalex.org/W{m}" for m in range(n)]}
             for n in range(1, 5)]
    path = tmp_path / "works.jsonl"
    path.write_bytes(b"".join(orjson.dumps(w) + b"\n" for w in works))
    ingest([path], tmp_path / "corpus")
    citations = Corpus(tmp_path / "corpus").read("citations").to_pylist()
    pairs = sorted((c["citing_id"], c["cited_id"]) for c in citations)
    # W0 is not in the corpus: each Wn cites W1..W(n-1) of it
    assert pairs == sorted((f"openalex:W{n}", f"openalex:W{m}")
                           for n in range(1, 5) for m in range(1, n))
