"""The OpenCitations citations reader, on CSV shaped as OpenCitations documents it.

No dump is available here; the rows below follow the documented CSV columns
``oci,citing,cited,creation,timespan,journal_sc,author_sc`` in their three shapes: COCI's bare
DOIs, the Index API's space-separated prefixed ids (``omid:br/06101801781
doi:10.7717/peerj-cs.421 pmid:33817056``), and the Index dump's OMIDs alone
(``tests/ingest/opencitations/index.csv``).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from openmsd.ingest import coci, formats
from openmsd.report import Report

HEADER = "oci,citing,cited,creation,timespan,journal_sc,author_sc"
ROWS = [
    "02001000106361326283700-02001000106361837000007,10.1016/j.socio.2020.1,"
    "10.1016/j.ecolecon.2008.07.001,2020-03-02,P11Y7M,no,no",
    "02001000106361326283700-0200100010636193727370003,10.1016/j.socio.2020.1,"
    "10.1016/J.ECOLMODEL.2009.01.002,2020-03-02,P11Y2M,yes,no",
    "0200100000236191726283604010203-0200100000236191726283604010202,"
    "10.1002/(sici)1097-4636(199601)30:1<1::aid-jbm1>3.0.co;2-l,10.1002/asi.21234,1996-01,"
    "-P14Y,no,yes",
]
NEW_SHAPE = [
    "id,citing,cited,creation,timespan,journal_sc,author_sc",
    "oci:06101801781-06180334099,omid:br/06101801781 doi:10.7717/peerj-cs.421 pmid:33817056,"
    "omid:br/06180334099 doi:10.1108/jd-12-2013-0166,2021-03-10,P6Y0M1D,no,no",
    "oci:06101801781-06101759895,omid:br/06101801781 doi:10.7717/peerj-cs.421 pmid:33817056,"
    "omid:br/06101759895 doi:10.1038/sdata.2016.18 pmid:26978244,2021-03-10,P5Y,no,no",
]


def write(path: Path, lines: list[str], compress: bool = False, bom: bool = False) -> Path:
    data = ("\ufeff" if bom else "") + "\r\n".join(lines) + "\r\n"
    raw = data.encode("utf-8")
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


def references_of(path: Path, report: Report) -> list[dict]:
    records = list(coci.read(path, report))
    assert all(kind == "reference" for kind, _ in records)
    return [record for _, record in records]


def test_documented_rows_map_every_field(tmp_path, report):
    path = write(tmp_path / "2020-coci.csv.gz", [HEADER, *ROWS], compress=True)
    first, second, third = references_of(path, report)
    assert report.problems == []
    assert first == {  # the other reference fields are absent, i.e. null
        "citing": "10.1016/j.socio.2020.1", "position": 0,
        "ref_id": "02001000106361326283700-02001000106361837000007",
        "targets": ["doi:10.1016/j.ecolecon.2008.07.001"], "source": "coci",
        "loc": "2020-coci.csv.gz:2",
    }
    assert second["targets"] == ["doi:10.1016/j.ecolmodel.2009.01.002"]  # DOIs are lowercased
    assert (second["position"], second["loc"]) == (1, "2020-coci.csv.gz:3")
    assert third["citing"] == "10.1002/(sici)1097-4636(199601)30:1<1::aid-jbm1>3.0.co;2-l"
    assert third["targets"] == ["doi:10.1002/asi.21234"]
    assert report.counts["coci.citations"] == 3
    assert report.counts["coci.journal_self_citations"] == 1
    assert report.counts["coci.author_self_citations"] == 1


def test_header_is_recognised_by_position_not_by_searching_for_oci(tmp_path, report):
    # No header: the first row, whose citing DOI contains "oci", is data.
    path = write(tmp_path / "part.csv", ROWS[:2])
    references = references_of(path, report)
    assert [r["position"] for r in references] == [0, 1]
    assert [r["loc"] for r in references] == ["part.csv:1", "part.csv:2"]
    # A header that is not the first row is a bad row (an invalid id), not skipped silently.
    report = Report()
    path = write(tmp_path / "twice.csv", [HEADER, ROWS[0], HEADER, ROWS[1]])
    assert len(references_of(path, report)) == 2
    assert [(p.where, p.reason.split(":", 1)[0]) for p in report.problems] == [
        ("line 3", "invalid id")]


def test_byte_order_mark_before_the_header_or_the_first_row(tmp_path, report):
    path = write(tmp_path / "bom.csv", [HEADER, ROWS[0]], bom=True)
    assert len(references_of(path, report)) == 1
    path = write(tmp_path / "bom-data.csv", [ROWS[0]], bom=True)
    (reference,) = references_of(path, report)
    assert reference["ref_id"] == "02001000106361326283700-02001000106361837000007"
    assert report.problems == []


def test_index_api_shape_takes_the_doi_first_among_prefixed_ids(tmp_path, report):
    path = write(tmp_path / "index.csv", NEW_SHAPE)
    first, second = references_of(path, report)
    assert report.problems == []
    assert first["citing"] == "10.7717/peerj-cs.421"
    assert first["ref_id"] == "06101801781-06180334099"
    assert first["targets"] == ["doi:10.1108/jd-12-2013-0166", "omid:br/06180334099"]
    assert second["targets"] == ["doi:10.1038/sdata.2016.18", "pmid:26978244",
                                 "omid:br/06101759895"]
    assert (first["position"], second["position"]) == (0, 1)
    assert report.counts["coci.omid_only"] == 0


FIXTURES = Path(__file__).parent / "opencitations"


def test_index_dump_rows_name_both_sides_by_omid(report):
    path = FIXTURES / "index.csv"
    references = references_of(path, report)
    assert report.problems == []
    assert [(r["citing"], r["targets"], r["ref_id"], r["loc"]) for r in references[:2]] == [
        ("omid:br/06101801781", ["omid:br/06180334099"], "06101801781-06180334099",
         "index.csv:2"),
        ("omid:br/06101801781", ["omid:br/06101759895"], "06101801781-06101759895",
         "index.csv:3")]
    assert report.counts["coci.citations"] == 4
    assert report.counts["coci.omid_only"] == 4
    assert report.counts["coci.author_self_citations"] == 1
    assert formats.detect(path) is coci.READER


def test_an_omid_is_read_in_its_url_and_meta_forms(tmp_path, report):
    path = write(tmp_path / "forms.csv", [
        HEADER,
        "1-2,https://w3id.org/oc/meta/br/0610,meta:br/0620 doi:10.1234/B,2020,P1Y,no,no",
        "1-3,omid:BR/0610,omid:ra/0630,2020,P1Y,no,no"])  # ra/: an agent, not a work
    (reference,) = references_of(path, report)
    assert (reference["citing"], reference["targets"]) == (
        "omid:br/0610", ["doi:10.1234/b", "omid:br/0620"])
    assert [(p.where, p.reason) for p in report.problems] == [
        ("line 3", "invalid id: cited 'omid:ra/0630' (expected a DOI or an OMID such as "
         "omid:br/061...)")]


def test_quoted_cells(tmp_path, report):
    path = write(tmp_path / "q.csv", [HEADER, '1-2,"10.1234/a,b","10.1234/c",2020,P1Y,no,no'])
    (reference,) = references_of(path, report)
    assert reference["citing"] == "10.1234/a,b"


def test_bad_rows_are_reported_with_their_line_and_the_good_ones_kept(tmp_path, report):
    lines = [
        HEADER,                                                   # 1
        ROWS[0],                                                  # 2
        "1-2,10.1234/a,10.1234/b,2020",                           # 3 four columns
        "1-2,10.1234/a,10.1234/b,2020,P1Y,no,no,extra",           # 4 eight columns
        "1-2,not-a-doi,10.1234/b,2020,P1Y,no,no",                 # 5 invalid citing DOI
        "1-2,10.1234/a,,2020,P1Y,no,no",                          # 6 empty cited DOI
        "oci:1-2,doi:10.1234/a,pmid:1,2020,P1Y,no,no",  # 7 a PMID alone: neither DOI nor OMID
        "",                                                       # 8 blank line
        ROWS[1],                                                  # 9
    ]
    path = tmp_path / "bad.csv"
    text = "\n".join(lines) + "\n"
    # line 10: invalid UTF-8 inside a DOI; line 11: a good row after it
    path.write_bytes(text.encode() + b"1-2,10.1234/caf\xe9,10.1234/b,2020,P1Y,no,no\n"
                     + ROWS[2].encode() + b"\n")
    references = references_of(path, report)
    assert [r["loc"] for r in references] == ["bad.csv:2", "bad.csv:9", "bad.csv:11"]
    assert [r["position"] for r in references] == [0, 6, 8]  # 0-based data rows
    found = [(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems]
    assert found == [
        ("line 3", "wrong number of columns", "skipped"),
        ("line 4", "wrong number of columns", "skipped"),
        ("line 5", "invalid id", "skipped"),
        ("line 6", "invalid id", "skipped"),
        ("line 7", "invalid id", "skipped"),
        ("line 10", "invalid UTF-8", "skipped"),
    ]
    assert report.problems[2].reason.startswith("invalid id: citing 'not-a-doi'")
    assert all(p.file == str(path) for p in report.problems)
    assert report.counts["problems.skipped"] == 6


def test_unreadable_csv_rows_and_truncated_gzip(tmp_path, report):
    huge = "1-2,10.1234/a," + "x" * 200_000 + ",2020,P1Y,no,no"
    path = write(tmp_path / "huge.csv", [HEADER, huge, ROWS[0]])
    references = references_of(path, report)
    assert [r["loc"] for r in references] == ["huge.csv:3"]
    assert [(p.where, p.reason.split(":", 1)[0]) for p in report.problems] == [
        ("line 2", "unreadable CSV")]

    report = Report()
    data = gzip.compress(("\n".join([HEADER, *ROWS * 2000]) + "\n").encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    references = references_of(path, report)
    assert 0 < len(references) < 6000
    assert [p.reason.split(":", 1)[0] for p in report.problems] == [
        "unreadable compressed data"]


def test_empty_file_is_a_warning(tmp_path, report):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    assert references_of(path, report) == []
    assert [(p.reason.split(":", 1)[0], p.kind) for p in report.problems] == [
        ("empty file", "warning")]


@pytest.mark.parametrize("lines", [[HEADER, *ROWS], ROWS, NEW_SHAPE, NEW_SHAPE[1:]])
def test_sniff_accepts_coci(tmp_path, lines):
    head = ("\n".join(lines) + "\n").encode()
    assert coci.sniff(head, Path("x.csv")) is True
    assert coci.sniff(b"\xef\xbb\xbf" + head, Path("x.csv")) is True
    path = write(tmp_path / "coci.csv.gz", lines, compress=True)
    assert formats.detect(path) is coci.READER


@pytest.mark.parametrize("head", [
    b'{"id": "W1", "title": "generic jsonl"}',
    b"id,citing,cited\n1,10.1234/a,10.1234/b\n",
    b"socio,10.1234/a,10.1234/b,2020,P1Y,no,no\n",       # first cell is not an oci
    b"1-2,10.1234/a,not-a-doi,2020,P1Y,no,no\n",
    b"1-2,10.1234/a,10.1234/b\n",                         # too few cells
    b"<article/>",
])
def test_sniff_rejects_other_formats(head):
    assert coci.sniff(head, Path("x")) is False


def test_sniff_rejects_the_real_files_of_other_formats(shared_data):
    files = [*shared_data.glob("unarxive-sample/*.jsonl"), shared_data / "taln/papers.jsonl",
             shared_data / "s2orc-sample/metadata_sample.jsonl",
             *sorted(shared_data.glob("specter-sample/**/*.txt")),
             shared_data / "specter-sample/sample.ids",
             *sorted(shared_data.glob("scielo-jats/*.xml"))[:5]]
    assert len(files) >= 8
    for path in files:
        with path.open("rb") as handle:
            assert coci.sniff(handle.read(8192), path) is False, path
