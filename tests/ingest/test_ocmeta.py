"""The OpenCitations Meta reader, and OMID-only Index rows resolved through Meta's DOIs.

The fixtures in ``tests/ingest/opencitations/`` follow the documented dump layouts: ``meta.csv``
the Meta CSV dump's columns (``id,title,author,issue,volume,venue,page,pub_date,type,publisher,
editor``, ``id`` holding the OMID and the DOI), ``index.csv`` the Index CSV dump's (both sides
by OMID). The OMIDs are illustrative; the DOIs and metadata are the works'.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from openmsd.corpus import Corpus
from openmsd.ingest import formats, ingest, ocmeta
from openmsd.report import Report

FIXTURES = Path(__file__).parent / "opencitations"
DOCUMENTED_HEADER = "id,title,author,pub_date,venue,volume,issue,page,type,publisher,editor"


def papers_of(path: Path, report: Report) -> list[dict]:
    records = list(ocmeta.read(path, report))
    assert all(kind == "paper" for kind, _ in records)
    return [record for _, record in records]


def test_dump_rows_map_every_field(report):
    first, second, third = papers_of(FIXTURES / "meta.csv", report)
    assert report.problems == []
    assert first == {
        "key": "10.1162/qss_a_00292",
        "aliases": ["doi:10.1162/qss_a_00292", "omid:br/06101801781", "openalex:W4390928828"],
        "doi": "10.1162/qss_a_00292", "title": "OpenCitations Meta", "abstract": None,
        "declared_language": None, "year": 2024, "venue": "Quantitative Science Studies",
        "authors": ["Arcangelo Massari", "Fabio Mariani", "Ivan Heibi", "Silvio Peroni",
                    "David Shotton"],
        "keywords": [], "categories": [], "translations": [], "full_text": None,
        "doc_type": "journal article", "source": "ocmeta", "loc": "meta.csv:2"}
    assert second["authors"][1:3] == ["Alexander Dutton", "Tanya Gray"]
    assert third["aliases"] == ["doi:10.1038/sdata.2016.18", "omid:br/06101759895",
                                "pmid:26978244"]
    assert report.counts["ocmeta.works"] == 3 and report.counts["ocmeta.omid_only"] == 0


def test_columns_are_read_by_name_in_the_documented_order(tmp_path, report):
    path = tmp_path / "meta.csv.gz"
    path.write_bytes(gzip.compress((
        f"{DOCUMENTED_HEADER}\n"
        'doi:10.1162/qss_a_00292,OpenCitations Meta,"Massari, Arcangelo",2024-01-22,'
        "Quantitative Science Studies [issn:2641-3337],5,1,50-75,journal article,MIT Press,\n"
        "omid:br/0612345,A Work Without A DOI,,2019,,,,,book,,\n").encode()))
    with_doi, without = papers_of(path, report)
    assert (with_doi["key"], with_doi["year"], with_doi["venue"]) == (
        "10.1162/qss_a_00292", 2024, "Quantitative Science Studies")
    assert (without["key"], without["aliases"], without["doi"]) == (
        "omid:br/0612345", ["omid:br/0612345"], None)
    assert report.counts["ocmeta.omid_only"] == 1
    assert formats.detect(path) is ocmeta.READER


def test_bad_rows_are_reported_with_their_line_and_the_good_ones_kept(tmp_path, report):
    path = tmp_path / "bad.csv"
    good = "omid:br/061 doi:10.1234/a,A,,,,,,2020,journal article,,"
    path.write_bytes("\n".join([
        "id,title,author,issue,volume,venue,page,pub_date,type,publisher,editor",  # 1
        good,                                                                       # 2
        "omid:br/062,B,,,,,,2020",                                                  # 3 8 columns
        "pmid:1234,C,,,,,,2020,journal article,,",                                  # 4 no DOI/OMID
        "omid:br/064,D,,,,,,a long time ago,journal article,,",                     # 5 bad date
        "",                                                                         # 6 blank
    ]).encode() + b"\ndoi:10.1234/caf\xe9,E,,,,,,2020,,,\n" + good.encode() + b"\n")
    papers = papers_of(path, report)
    assert [p["loc"] for p in papers] == ["bad.csv:2", "bad.csv:5", "bad.csv:8"]
    assert papers[1]["year"] is None
    found = [(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems]
    assert found == [
        ("line 3", "wrong number of columns", "skipped"),
        ("line 4", "invalid id", "skipped"),
        ("line 5", "wrong field type", "warning"),
        ("line 7", "invalid UTF-8", "skipped"),
    ]
    assert all(p.file == str(path) for p in report.problems)


def test_a_file_without_the_meta_header_is_one_problem(tmp_path, report):
    path = tmp_path / "noheader.csv"
    path.write_text("omid:br/061 doi:10.1234/a,A,,,,,,2020,journal article,,\n")
    assert papers_of(path, report) == []
    (problem,) = report.problems
    assert (problem.where, problem.kind) == ("line 1", "skipped")
    assert problem.reason.startswith("not an OpenCitations Meta header: expected the columns id,")


@pytest.mark.parametrize("head", [
    b"oci,citing,cited,creation,timespan,journal_sc,author_sc\n",
    b"id,citing,cited,creation,timespan,journal_sc,author_sc\n",
    b"title,id,author,pub_date,venue,type\n",     # id not first
    b"id,title,author\n",                         # too few of the columns
    b'{"id": "W1"}\n',
])
def test_sniff_rejects_other_files(head):
    assert ocmeta.sniff(head, Path("x.csv")) is False


def test_omid_only_index_rows_resolve_through_meta(tmp_path):
    result = ingest([FIXTURES / "meta.csv", FIXTURES / "index.csv"], tmp_path / "c")
    corpus = Corpus(tmp_path / "c")
    citations = [(c["citing_id"], c["cited_id"]) for c in corpus.read("citations").to_pylist()]
    assert citations == [("10.1108/jd-12-2013-0166", "10.1038/sdata.2016.18"),
                         ("10.1162/qss_a_00292", "10.1038/sdata.2016.18"),
                         ("10.1162/qss_a_00292", "10.1108/jd-12-2013-0166")]
    unresolved = [r for r in corpus.read("references").to_pylist()
                  if r["resolution"] == "unresolved"]
    assert [r["targets"] for r in unresolved] == [["omid:br/0690123456"]]
    assert result.report["counts"]["coci.omid_only"] == 4
    assert result.report["counts"]["ocmeta.works"] == 3
