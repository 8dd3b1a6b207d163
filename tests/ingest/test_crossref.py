"""The Crossref reader, on work items shaped as the Crossref REST API documents them.

No Crossref public data file is available here; the items below follow the REST API work
message (``DOI``, ``title``, ``abstract`` as JATS, ``language``, ``issued.date-parts``,
``container-title``, ``author[].given/family``, ``subject``, ``reference[]`` with ``key``,
``DOI``, ``article-title``, ``volume-title``, ``author``, ``year``, ``journal-title``,
``unstructured``) inside the two documented envelopes: the public data file's
``{"items": [...]}`` and the API's ``{"status": "ok", "message": {"items": [...]}}``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from openmsd.ingest import crossref, formats
from openmsd.ingest.crossref import strip_jats
from openmsd.report import Report
from tests.ingest.records import by_kind

ARTICLE = {
    "indexed": {"date-parts": [[2024, 3, 2]], "date-time": "2024-03-02T10:11:12Z",
                "timestamp": 1709374272000},
    "reference-count": 4,
    "publisher": "FapUNIFESP (SciELO)",
    "issue": "1",
    "license": [{"start": {"date-parts": [[2013, 1, 1]]}, "content-version": "vor",
                 "delay-in-days": 0, "URL": "http://creativecommons.org/licenses/by/4.0/"}],
    "content-domain": {"domain": [], "crossmark-restriction": False},
    "short-container-title": ["Cad. Saúde Pública"],
    "abstract": "<jats:title>Resumo</jats:title><jats:p>Este artigo discute a relação entre "
                "saúde e ambiente.</jats:p>\n<jats:p>Os resultados indicam "
                "H<jats:sub>2</jats:sub>O <jats:italic>contaminada</jats:italic>.</jats:p>",
    "DOI": "10.1590/S0102-311X2013000100002",
    "type": "journal-article",
    "created": {"date-parts": [[2013, 2, 5]], "date-time": "2013-02-05T12:00:00Z",
                "timestamp": 1360065600000},
    "page": "9-21",
    "source": "Crossref",
    "is-referenced-by-count": 12,
    "title": ["Saúde e ambiente: uma relação necessária"],
    "prefix": "10.1590",
    "volume": "29",
    "author": [
        {"given": "Ana Maria", "family": "Silva", "sequence": "first", "affiliation": []},
        {"given": "João", "family": "Souza", "sequence": "additional", "affiliation": [],
         "ORCID": "http://orcid.org/0000-0002-1825-0097", "authenticated-orcid": False},
        {"name": "Grupo de Pesquisa em Saúde Ambiental", "sequence": "additional",
         "affiliation": []},
    ],
    "member": "530",
    "reference": [
        {"key": "ref1", "doi-asserted-by": "crossref",
         "DOI": "10.1590/S0102-311X2006000100002",
         "unstructured": "Minayo MCS. Saúde e ambiente. Cad Saúde Pública 2006; 22:9-20."},
        {"key": "ref2", "first-page": "123", "article-title": "Environmental health indicators",
         "volume": "12", "author": "Briggs", "year": "2003", "journal-title": "Bull WHO"},
        {"key": "ref3", "volume-title": "O desafio do conhecimento", "author": "Minayo",
         "year": "2010", "edition": "12"},
        {"key": "ref4", "unstructured": "Brasil. Ministério da Saúde. Relatório. Brasília; 2001."},
    ],
    "container-title": ["Cadernos de Saúde Pública"],
    "original-title": [],
    "language": "pt",
    "link": [{"URL": "http://www.scielo.br/pdf/csp/v29n1/02.pdf", "content-type": "unspecified",
              "content-version": "vor", "intended-application": "similarity-checking"}],
    "deposited": {"date-parts": [[2020, 5, 1]], "date-time": "2020-05-01T00:00:00Z",
                  "timestamp": 1588291200000},
    "score": 1,
    "resource": {"primary": {"URL": "http://www.scielo.br/scielo.php?pid=S0102"}},
    "subtitle": [],
    "short-title": [],
    "issued": {"date-parts": [[2013, 1]]},
    "references-count": 4,
    "journal-issue": {"issue": "1", "published-print": {"date-parts": [[2013, 1]]}},
    "URL": "http://dx.doi.org/10.1590/s0102-311x2013000100002",
    "relation": {},
    "ISSN": ["0102-311X"],
    "issn-type": [{"value": "0102-311X", "type": "print"}],
    "subject": ["Public Health, Environmental and Occupational Health"],
    "published": {"date-parts": [[2013, 1]]},
    "published-print": {"date-parts": [[2013, 1]]},
}

# An English book chapter: no `issued` year (only published-online), an "Abstract" heading.
CHAPTER = {
    "DOI": "10.1007/978-3-030-12345-6_7",
    "type": "book-chapter",
    "title": ["Citation <i>Recommendation</i> in Practice"],
    "abstract": "<jats:sec><jats:title>Abstract</jats:title><jats:p>We review methods."
                "</jats:p></jats:sec>",
    "language": "en",
    "issued": {"date-parts": [[None]]},
    "published-online": {"date-parts": [[2019, 11, 3]]},
    "container-title": ["Lecture Notes in Computer Science", "LNCS"],
    "author": [{"given": "Jane", "family": "Doe", "sequence": "first", "affiliation": []}],
    "subject": ["Theoretical Computer Science", "General Computer Science"],
    "reference-count": 0,
}


def write_document(path: Path, document: object, compress: bool = True) -> Path:
    data = json.dumps(document, ensure_ascii=False).encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def read_all(path: Path, report: Report) -> tuple[list[dict], list[dict]]:
    records = by_kind(crossref.read(path, report))
    return records["paper"], records["reference"]


def test_public_data_file_items_map_every_field(tmp_path, report):
    path = write_document(tmp_path / "0.json.gz", {"items": [ARTICLE, CHAPTER]})
    papers, references = read_all(path, report)
    assert report.problems == []
    article, chapter = papers
    assert article == {
        "key": "10.1590/s0102-311x2013000100002",
        "aliases": ["doi:10.1590/s0102-311x2013000100002"],
        "doi": "10.1590/s0102-311x2013000100002",
        "title": "Saúde e ambiente: uma relação necessária",
        "abstract": "Este artigo discute a relação entre saúde e ambiente. Os resultados "
                    "indicam H2O contaminada.",
        "declared_language": "pt", "year": 2013, "venue": "Cadernos de Saúde Pública",
        "authors": ["Ana Maria Silva", "João Souza", "Grupo de Pesquisa em Saúde Ambiental"],
        "keywords": [], "categories": ["Public Health, Environmental and Occupational Health"],
        "translations": [], "full_text": None, "type": "journal-article", "source": "crossref",
        "loc": "0.json.gz:items[0]",
    }
    assert chapter["abstract"] == "We review methods."
    assert chapter["title"] == "Citation Recommendation in Practice"  # <i> markup removed
    assert chapter["year"] == 2019  # issued is [[null]]: published-online is used
    assert chapter["venue"] == "Lecture Notes in Computer Science"
    assert chapter["declared_language"] == "en"
    assert chapter["categories"] == ["Theoretical Computer Science", "General Computer Science"]

    assert [r["position"] for r in references] == [0, 1, 2, 3]
    assert [r["ref_id"] for r in references] == ["ref1", "ref2", "ref3", "ref4"]
    assert all(r["citing"] == article["key"] and r["loc"] == "0.json.gz:items[0]"
               for r in references)
    doi_ref, journal_ref, book_ref, raw_ref = references
    assert doi_ref["targets"] == ["doi:10.1590/s0102-311x2006000100002"]
    assert doi_ref["raw"].startswith("Minayo MCS. Saúde e ambiente.")
    assert journal_ref == {
        "citing": "10.1590/s0102-311x2013000100002", "position": 1, "ref_id": "ref2",
        "targets": [], "title": "Environmental health indicators", "authors": ["Briggs"],
        "year": 2003, "venue": "Bull WHO", "raw": None, "source": "crossref",
        "loc": "0.json.gz:items[0]",
    }
    assert (book_ref["title"], book_ref["authors"], book_ref["year"]) == (
        "O desafio do conhecimento", ["Minayo"], 2010)
    assert raw_ref["targets"] == [] and raw_ref["title"] is None
    assert raw_ref["raw"] == "Brasil. Ministério da Saúde. Relatório. Brasília; 2001."
    assert report.counts["crossref.references"] == 4
    assert report.counts["crossref.references_without_doi"] == 3


def test_rest_api_envelopes(tmp_path, report):
    listing = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
               "message": {"facets": {}, "total-results": 2, "items": [CHAPTER, ARTICLE],
                           "items-per-page": 20, "query": {"start-index": 0,
                                                           "search-terms": None}}}
    single = {"status": "ok", "message-type": "work", "message-version": "1.0.0",
              "message": CHAPTER}
    papers, _ = read_all(write_document(tmp_path / "list.json", listing, compress=False), report)
    assert [p["doi"] for p in papers] == ["10.1007/978-3-030-12345-6_7",
                                          "10.1590/s0102-311x2013000100002"]
    papers, references = read_all(write_document(tmp_path / "one.json", single), report)
    assert [p["title"] for p in papers] == ["Citation Recommendation in Practice"]
    assert references == [] and report.problems == []


def test_jats_abstracts_are_stripped():
    assert strip_jats("<jats:p>Plain.</jats:p>") == ("Plain.", None)
    assert strip_jats("No tags at all") == ("No tags at all", None)
    # only a leading abstract heading goes; section titles stay
    assert strip_jats("<jats:sec><jats:title>Background</jats:title><jats:p>A.</jats:p>"
                      "</jats:sec><jats:sec><jats:title>Results</jats:title><jats:p>B."
                      "</jats:p></jats:sec>") == ("Background A. Results B.", None)
    assert strip_jats("<jats:title>Abstract:</jats:title><jats:p>x</jats:p>") == ("x", None)
    assert strip_jats("<jats:p>E = mc<mml:msup><mml:mi>2</mml:mi></mml:msup></jats:p>") == (
        "E = mc2", None)
    assert strip_jats("<jats:p> </jats:p>") == (None, None)
    text, error = strip_jats("<p>a&nbsp;b &lt; c</p><p>d < e</p>")
    assert text == "a b < c d < e"
    assert error.startswith("Entity 'nbsp' not defined (abstract line 1")


def test_bad_items_are_reported_and_the_good_ones_kept(tmp_path, report):
    items = [
        ARTICLE,
        "not an object",
        {"title": ["No DOI here"]},
        {"DOI": "not-a-doi", "title": ["Bad DOI"]},
        {**CHAPTER, "DOI": "10.1000/abc1", "abstract": "<jats:p>R&D costs</jats:p>",
         "author": "Doe, J.", "reference": [{"key": "r1", "DOI": "10.1000/xyz"}, "raw string",
                                            {"key": "r3", "first-page": "5"}]},
        {**CHAPTER, "DOI": "10.1000/abc2", "reference": {"key": "r1"}},
    ]
    path = write_document(tmp_path / "bad.json.gz", {"items": items})
    papers, references = read_all(path, report)
    assert [p["doi"] for p in papers] == ["10.1590/s0102-311x2013000100002", "10.1000/abc1",
                                          "10.1000/abc2"]
    assert papers[1]["abstract"] == "R&D costs" and papers[1]["authors"] == []
    assert [(r["citing"], r["ref_id"]) for r in references][-1] == ("10.1000/abc1", "r1")
    found = [(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems]
    assert found == [
        ("items[1]", "expected a JSON object, got str", "skipped"),
        ("items[2]", "missing required field", "skipped"),
        ("items[3]", "invalid DOI", "skipped"),
        ("items[4]", "abstract is not well-formed XML", "warning"),
        ("items[4]", "wrong field type", "warning"),
        ("items[4].reference[1]", "expected a JSON object, got str", "warning"),
        ("items[4].reference[2]", "empty reference", "warning"),
        ("items[5]", "wrong field type", "warning"),
    ]
    assert all(p.file == str(path) for p in report.problems)


@pytest.mark.parametrize(("content", "where", "reason"), [
    (b'{"items": [\n{"DOI": "10.1000/a"},\n{"DOI": }]}', "line 3 column 9", "malformed JSON"),
    (b'["10.1000/a"]', "file", "expected a JSON object, got list"),
    (b'{"status": "ok"}', "file", "missing required field"),
    (b'{"items": {"DOI": "10.1000/a"}}', "file", "wrong field type"),
    (b"   \n", "file", "empty file"),
])
def test_broken_files_are_reported_with_the_error_position(tmp_path, report, content, where,
                                                           reason):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    assert list(crossref.read(path, report)) == []
    assert [(p.where, p.reason.split(":", 1)[0]) for p in report.problems] == [(where, reason)]


def test_malformed_json_reason_gives_the_character_offset(tmp_path, report):
    path = tmp_path / "broken.json"
    path.write_bytes(b'{"items": [\n{"DOI": "10.1000/a"},\n{"DOI": }]}')
    list(crossref.read(path, report))
    assert report.problems[0].reason.endswith("(char 42)")


def test_invalid_utf8_is_replaced_with_a_warning(tmp_path, report):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"items": [\n{"DOI": "10.1000/a", "title": ["Sa\xfade"]}]}')
    (paper,), _ = read_all(path, report)
    assert paper["title"] == "Sa\ufffdde"
    assert [(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems] == [
        ("line 2", "invalid UTF-8", "warning")]


def test_truncated_gzip_is_reported(tmp_path, report):
    data = gzip.compress(json.dumps({"items": [ARTICLE] * 50}).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    assert list(crossref.read(path, report)) == []
    assert [p.reason.split(":", 1)[0] for p in report.problems] == ["unreadable compressed data"]


def test_sniff_accepts_both_envelopes(tmp_path):
    data_file = json.dumps({"items": [ARTICLE, CHAPTER]}).encode()
    assert crossref.sniff(data_file[:8192], Path("0.json")) is True
    rest = json.dumps({"status": "ok", "message-type": "work-list",
                       "message": {"items": [CHAPTER]}}, indent=2).encode()
    assert crossref.sniff(rest, Path("page.json")) is True
    path = write_document(tmp_path / "17.json.gz", {"items": [ARTICLE]})
    assert formats.detect(path) is crossref.READER


@pytest.mark.parametrize("head", [
    b'{"id": "W1", "title": "generic jsonl", "DOI": "10.1/x"}',
    b'{"id": "https://openalex.org/W1", "doi": "https://doi.org/10.1/x", "publication_year": 1}',
    b'{"doi": "10.1/x", "is_oa": true, "oa_status": "gold", "z_authors": []}',
    b"oci,citing,cited,creation,timespan,journal_sc,author_sc\n",
    b'{"items": []}',
])
def test_sniff_rejects_other_formats(head):
    assert crossref.sniff(head, Path("x")) is False


def test_sniff_rejects_the_real_files_of_other_formats(shared_data):
    files = [*shared_data.glob("unarxive-sample/*.jsonl"), shared_data / "taln/papers.jsonl",
             shared_data / "s2orc-sample/metadata_sample.jsonl",
             *sorted(shared_data.glob("scielo-jats/*.xml"))[:5],
             *sorted(shared_data.glob("specter-sample/**/*.json"))]
    assert len(files) >= 8
    for path in files:
        with path.open("rb") as handle:
            assert crossref.sniff(handle.read(8192), path) is False, path
