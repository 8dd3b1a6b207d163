"""The Unpaywall reader, on records shaped as the Unpaywall data format documents them.

No Unpaywall snapshot is available here; the records below follow the documented response
object (``doi``, ``doi_url``, ``title``, ``genre``, ``is_paratext``, ``published_date``,
``year``, ``journal_name``, ``journal_issns``, ``journal_issn_l``, ``journal_is_oa``,
``journal_is_in_doaj``, ``publisher``, ``is_oa``, ``oa_status``, ``has_repository_copy``,
``best_oa_location``, ``first_oa_location``, ``oa_locations``, ``oa_locations_embargoed``,
``updated``, ``data_standard``, ``z_authors``).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from openmsd.ingest import formats, unpaywall
from openmsd.report import Report
from tests.ingest.records import write_lines

LOCATION = {
    "updated": "2023-08-09T12:00:00.000000", "url": "https://peerj.com/articles/4375.pdf",
    "url_for_pdf": "https://peerj.com/articles/4375.pdf",
    "url_for_landing_page": "https://doi.org/10.7717/peerj.4375",
    "evidence": "open (via page says license)",
    "license": "cc-by", "version": "publishedVersion", "host_type": "publisher", "is_best": True,
    "pmh_id": None, "endpoint_id": None, "repository_institution": None,
    "oa_date": "2018-02-13",
}
STATE_OF_OA = {
    "doi": "10.7717/peerj.4375",
    "doi_url": "https://doi.org/10.7717/peerj.4375",
    "title": "The state of OA: a large-scale analysis of the prevalence and impact of Open "
             "Access articles",
    "genre": "journal-article",
    "is_paratext": False,
    "published_date": "2018-02-13",
    "year": 2018,
    "journal_name": "PeerJ",
    "journal_issns": "2167-8359",
    "journal_issn_l": "2167-8359",
    "journal_is_oa": True,
    "journal_is_in_doaj": True,
    "publisher": "PeerJ",
    "is_oa": True,
    "oa_status": "gold",
    "has_repository_copy": True,
    "best_oa_location": LOCATION,
    "first_oa_location": LOCATION,
    "oa_locations": [LOCATION],
    "oa_locations_embargoed": [],
    "updated": "2023-08-09T12:00:00.000000",
    "data_standard": 2,
    "z_authors": [
        {"given": "Heather", "family": "Piwowar", "sequence": "first",
         "ORCID": "http://orcid.org/0000-0003-1613-5981", "authenticated-orcid": False},
        {"given": "Jason", "family": "Priem", "sequence": "additional"},
        {"given": "Vincent", "family": "Larivière", "sequence": "additional"},
    ],
}
CLOSED = {
    "doi": "10.1590/s0102-311x2013000100002", "doi_url": "https://doi.org/10.1590/s0102-311x"
    "2013000100002", "title": "Saúde e ambiente", "genre": "journal-article", "year": None,
    "published_date": "2013-01-01", "journal_name": "Cadernos de Saúde Pública",
    "is_oa": False, "oa_status": "closed", "best_oa_location": None, "oa_locations": [],
    "z_authors": None, "data_standard": 2,
}


def papers_of(path: Path, report: Report) -> list[dict]:
    records = list(unpaywall.read(path, report))
    assert all(kind == "paper" for kind, _ in records)  # Unpaywall has no references
    return [record for _, record in records]


def test_documented_records_map_every_field(tmp_path, report):
    path = write_lines(tmp_path / "unpaywall_snapshot.jsonl.gz", [STATE_OF_OA, CLOSED],
                       compress=True)
    first, second = papers_of(path, report)
    assert report.problems == []
    assert first == {
        "key": "10.7717/peerj.4375", "aliases": ["doi:10.7717/peerj.4375"],
        "doi": "10.7717/peerj.4375",
        "title": "The state of OA: a large-scale analysis of the prevalence and impact of Open "
                 "Access articles",
        "abstract": None, "declared_language": None, "year": 2018, "venue": "PeerJ",
        "authors": ["Heather Piwowar", "Jason Priem", "Vincent Larivière"], "keywords": [],
        "categories": [], "translations": [], "full_text": None,
        "doc_type": "journal-article", "source": "unpaywall",
        "loc": "unpaywall_snapshot.jsonl.gz:1",
    }
    assert second["key"] == "10.1590/s0102-311x2013000100002"
    assert second["year"] == 2013  # year null: taken from published_date
    assert second["venue"] == "Cadernos de Saúde Pública"
    assert second["authors"] == []
    assert report.counts["unpaywall.open_access"] == 1
    assert report.counts["unpaywall.oa_status.gold"] == 1
    assert report.counts["unpaywall.oa_status.closed"] == 1


def test_doi_urls_are_normalised(tmp_path, report):
    path = write_lines(tmp_path / "u.jsonl", [{**CLOSED, "doi": "https://doi.org/10.1234/ABC"}])
    (paper,) = papers_of(path, report)
    assert paper["key"] == paper["doi"] == "10.1234/abc"


def test_bad_lines_are_reported_and_the_good_ones_kept(tmp_path, report):
    lines = [
        STATE_OF_OA,                                                  # 1
        {**CLOSED, "doi": None},                                      # 2 no DOI
        {**CLOSED, "doi": "not a doi"},                               # 3 invalid DOI
        b'{"doi": "10.1234/cut", "title": ',                          # 4 malformed JSON
        b'"just a string"',                                           # 5 not an object
        {**CLOSED, "doi": 101234},                                    # 6 DOI of the wrong type
        {**CLOSED, "doi": "10.1234/x", "z_authors": "Piwowar, H.",
         "title": ["A list"]},                                        # 7 wrong types
        b'{"doi": "10.1234/y", "title": "S\xe3o Paulo"}',             # 8 Windows-1252
        {**CLOSED, "doi": "10.1234/z"},                               # 9
    ]
    path = write_lines(tmp_path / "u.jsonl", lines)
    papers = papers_of(path, report)
    assert [p["doi"] for p in papers] == ["10.7717/peerj.4375", "10.1234/x", "10.1234/y",
                                          "10.1234/z"]
    assert papers[2]["title"] == "São Paulo"
    assert papers[1]["authors"] == [] and papers[1]["title"] is None
    found = [(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems]
    assert found == [
        ("line 2", "missing required field", "skipped"),
        ("line 3", "invalid DOI", "skipped"),
        ("line 4", "malformed JSON", "skipped"),
        ("line 5", "expected a JSON object, got str", "skipped"),
        ("line 6", "invalid DOI", "skipped"),
        ("line 7", "wrong field type", "warning"),
        ("line 7", "wrong field type", "warning"),
        ("line 8", "wrong encoding", "warning"),
    ]
    assert all(p.file == str(path) for p in report.problems)


def test_sniff_accepts_unpaywall_lines(tmp_path):
    assert unpaywall.sniff(orjson.dumps(STATE_OF_OA)[:8192], Path("x")) is True
    assert unpaywall.sniff(orjson.dumps(CLOSED), Path("x")) is True
    path = write_lines(tmp_path / "snapshot.jsonl.gz", [CLOSED, STATE_OF_OA], compress=True)
    assert formats.detect(path) is unpaywall.READER


@pytest.mark.parametrize("head", [
    b'{"id": "W1", "title": "generic jsonl", "doi": "10.1234/x"}',
    b'{"doi": "10.1234/x", "title": "only is_oa", "is_oa": true}',
    b'{"items": [{"DOI": "10.1/x", "reference-count": 0, "is-referenced-by-count": 1}]}',
    b"oci,citing,cited,creation,timespan,journal_sc,author_sc\n",
    b'{"id": "https://openalex.org/W2741809807", "doi": "https://doi.org/10.7717/peerj.4375", '
    b'"best_oa_location": {"is_oa": true}, "open_access": {"is_oa": true, "oa_status": "gold"}}',
])
def test_sniff_rejects_other_formats(head):
    assert unpaywall.sniff(head, Path("x")) is False


def test_sniff_rejects_the_real_files_of_other_formats(shared_data):
    files = [*shared_data.glob("unarxive-sample/*.jsonl"), shared_data / "taln/papers.jsonl",
             shared_data / "s2orc-sample/metadata_sample.jsonl"]
    assert len(files) >= 3
    for path in files:
        with path.open("rb") as handle:
            assert unpaywall.sniff(handle.read(8192), path) is False, path
