"""The OpenAlex works reader, on Work objects shaped as the OpenAlex documentation describes them.

No OpenAlex snapshot is available here; the records below follow the documented Work object
(``id``, ``doi``, ``ids``, ``display_name``, ``abstract_inverted_index``, ``authorships[].author``,
``primary_location.source``, ``keywords``, ``primary_topic``/``topics``, ``concepts``,
``referenced_works``) and use the documentation's own example work, W2741809807.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from openmsd.ingest import formats, openalex
from openmsd.ingest.openalex import MalformedIndexError, rebuild_abstract
from openmsd.report import Report
from tests.ingest.records import by_kind, write_lines

STATE_OF_OA = {
    "id": "https://openalex.org/W2741809807",
    "doi": "https://doi.org/10.7717/peerj.4375",
    "title": "The state of OA: a large-scale analysis of the prevalence and impact of Open "
             "Access articles",
    "display_name": "The state of OA: a large-scale analysis of the prevalence and impact of "
                    "Open Access articles",
    "publication_year": 2018,
    "publication_date": "2018-02-13",
    "language": "en",
    "type": "article",
    "ids": {
        "openalex": "https://openalex.org/W2741809807",
        "doi": "https://doi.org/10.7717/peerj.4375",
        "mag": 2741809807,
        "pmid": "https://pubmed.ncbi.nlm.nih.gov/29456894",
        "pmcid": "https://www.ncbi.nlm.nih.gov/pmc/articles/5815332",
    },
    "primary_location": {
        "is_oa": True,
        "landing_page_url": "https://doi.org/10.7717/peerj.4375",
        "pdf_url": "https://peerj.com/articles/4375.pdf",
        "source": {
            "id": "https://openalex.org/S1983995261",
            "display_name": "PeerJ",
            "issn_l": "2167-8359",
            "issn": ["2167-8359"],
            "host_organization": "https://openalex.org/P4310320104",
            "type": "journal",
        },
        "license": "cc-by",
        "version": "publishedVersion",
    },
    "authorships": [
        {"author_position": "first",
         "author": {"id": "https://openalex.org/A5048491430", "display_name": "Heather Piwowar",
                    "orcid": "https://orcid.org/0000-0003-1613-5981"},
         "institutions": [], "raw_author_name": "Heather Piwowar"},
        {"author_position": "middle",
         "author": {"id": "https://openalex.org/A5023888391", "display_name": "Jason Priem",
                    "orcid": "https://orcid.org/0000-0001-6187-6610"},
         "institutions": [], "raw_author_name": "Jason Priem"},
        {"author_position": "last",
         "author": {"id": "https://openalex.org/A5085171399",
                    "display_name": "Juan Pablo Alperin",
                    "orcid": "https://orcid.org/0000-0002-9344-7439"},
         "institutions": [{"id": "https://openalex.org/I18014758",
                           "display_name": "Simon Fraser University"}],
         "raw_author_name": "Juan Pablo Alperin"},
    ],
    "abstract_inverted_index": {
        "Despite": [0], "growing": [1], "interest": [2], "in": [3], "Open": [4],
        "Access": [5], "(OA)": [6], "to": [7], "scholarly": [8], "literature,": [9],
        "there": [10], "is": [11], "an": [12], "unmet": [13], "need": [14],
    },
    "primary_topic": {
        "id": "https://openalex.org/T10102", "display_name": "scientometrics and bibliometrics "
        "research", "score": 0.9996,
        "subfield": {"id": "https://openalex.org/subfields/1804", "display_name": "Statistics"},
        "field": {"id": "https://openalex.org/fields/18", "display_name": "Decision Sciences"},
        "domain": {"id": "https://openalex.org/domains/2", "display_name": "Social Sciences"},
    },
    "topics": [
        {"id": "https://openalex.org/T10102",
         "display_name": "scientometrics and bibliometrics research", "score": 0.9996},
        {"id": "https://openalex.org/T12508", "display_name": "Open Access and Scholarly "
         "Publishing", "score": 0.98},
    ],
    "keywords": [
        {"id": "https://openalex.org/keywords/open-access", "display_name": "Open Access",
         "score": 0.61},
        {"id": "https://openalex.org/keywords/citation-advantage",
         "display_name": "Citation Advantage", "score": 0.4},
    ],
    "concepts": [
        {"id": "https://openalex.org/C2778805511", "wikidata": "https://www.wikidata.org/wiki/Q",
         "display_name": "Citation", "level": 2, "score": 0.62},
    ],
    "referenced_works": [
        "https://openalex.org/W1964141474",
        "https://openalex.org/W1971434823",
        "https://openalex.org/W2035584187",
    ],
    "related_works": ["https://openalex.org/W2062934281"],
    "cited_by_count": 1029,
    "is_retracted": False,
}

# A Portuguese work of the same shape: OpenAlex's deprecated host_venue, concepts only,
# old-style keywords, no DOI (so the key is the OpenAlex id).
PORTUGUESE = {
    "id": "https://openalex.org/W3000000001",
    "doi": None,
    "title": None,
    "display_name": "Avaliação de sistemas de recomendação de artigos científicos",
    "publication_year": 2020,
    "language": "pt",
    "ids": {"openalex": "https://openalex.org/W3000000001"},
    "host_venue": {"id": "https://openalex.org/V1", "display_name": "Em Questão"},
    "primary_location": None,
    "authorships": [{"author": {"id": None, "display_name": "Maria da Silva"}},
                    {"author": {}, "raw_author_name": "João Souza"}],
    "abstract_inverted_index": {"Este": [0], "artigo": [1], "avalia": [2], "sistemas": [3],
                                "de": [4, 6], "recomendação": [5], "artigos.": [7]},
    "keywords": [{"keyword": "recomendação", "score": 0.5}, "bibliometria"],
    "concepts": [{"id": "https://openalex.org/C41008148", "display_name": "Computer science",
                  "level": 0, "score": 0.4},
                 {"id": "https://openalex.org/C1", "display_name": "Recommender system",
                  "level": 2, "score": 0.3}],
    "referenced_works": [],
}


def read_all(path: Path, report: Report) -> tuple[list[dict], list[dict]]:
    records = by_kind(openalex.read(path, report))
    return records["paper"], records["reference"]


def test_documented_work_maps_every_field(tmp_path, report):
    path = write_lines(tmp_path / "works.jsonl.gz", [STATE_OF_OA, PORTUGUESE], compress=True)
    papers, references = read_all(path, report)
    assert report.problems == []
    assert len(papers) == 2
    paper = papers[0]
    assert paper["key"] == "10.7717/peerj.4375"
    assert paper["aliases"] == ["doi:10.7717/peerj.4375", "mag:2741809807",
                                "openalex:W2741809807", "pmcid:PMC5815332", "pmid:29456894"]
    assert paper["doi"] == "10.7717/peerj.4375"
    assert paper["title"].startswith("The state of OA: a large-scale analysis")
    assert paper["abstract"] == ("Despite growing interest in Open Access (OA) to scholarly "
                                 "literature, there is an unmet need")
    assert paper["declared_language"] == "en"
    assert paper["year"] == 2018
    assert paper["venue"] == "PeerJ"
    assert paper["authors"] == ["Heather Piwowar", "Jason Priem", "Juan Pablo Alperin"]
    assert paper["keywords"] == ["Open Access", "Citation Advantage"]
    # primary_topic and topics win over concepts; the repeated primary topic appears once
    assert paper["categories"] == ["scientometrics and bibliometrics research",
                                   "Open Access and Scholarly Publishing"]
    assert paper["translations"] == [] and paper["full_text"] is None
    assert paper["source"] == "openalex" and paper["loc"] == "works.jsonl.gz:1"

    assert [r["position"] for r in references] == [0, 1, 2]
    assert [r["ref_id"] for r in references] == ["W1964141474", "W1971434823", "W2035584187"]
    assert references[0] == {  # the other reference fields are absent, i.e. null
        "citing": "10.7717/peerj.4375", "position": 0, "ref_id": "W1964141474",
        "targets": ["openalex:W1964141474"], "source": "openalex", "loc": "works.jsonl.gz:1",
    }
    assert report.counts["openalex.referenced_works"] == 3


def test_work_without_doi_falls_back_to_display_name_host_venue_and_concepts(tmp_path, report):
    path = write_lines(tmp_path / "works.jsonl", [PORTUGUESE])
    (paper,), references = read_all(path, report)
    assert report.problems == []
    assert references == []
    assert paper["key"] == "openalex:W3000000001"
    assert paper["aliases"] == ["openalex:W3000000001"]
    assert paper["doi"] is None
    assert paper["title"] == "Avaliação de sistemas de recomendação de artigos científicos"
    assert paper["abstract"] == "Este artigo avalia sistemas de recomendação de artigos."
    assert paper["declared_language"] == "pt"
    assert paper["venue"] == "Em Questão"
    assert paper["authors"] == ["Maria da Silva", "João Souza"]
    assert paper["keywords"] == ["recomendação", "bibliometria"]
    assert paper["categories"] == ["Computer science", "Recommender system"]


def test_identifiers_in_other_spellings(tmp_path, report):
    """The id only under ``ids``, a PMC id with its prefix, short W ids in referenced_works."""
    work = {"ids": {"openalex": "https://openalex.org/W77", "pmcid": "PMC123",
                    "pmid": "https://pubmed.ncbi.nlm.nih.gov/456"},
            "display_name": "Short ids", "referenced_works": ["W12", " https://openalex.org/w13"]}
    (paper,), references = read_all(write_lines(tmp_path / "w.jsonl", [work]), report)
    assert report.problems == []
    assert paper["key"] == "openalex:W77"
    assert paper["aliases"] == ["openalex:W77", "pmcid:PMC123", "pmid:456"]
    assert [r["targets"] for r in references] == [["openalex:W12"], ["openalex:W13"]]


def test_abstract_is_rebuilt_by_position():
    assert rebuild_abstract({"world": [1], "hello": [0, 2]}) == "hello world hello"
    assert rebuild_abstract({"b": [5], "a": [2]}) == "a b"  # gaps are closed
    assert rebuild_abstract({"b": [1], "a": [0], "c": [1]}) == "a c"  # a repeated position
    assert rebuild_abstract({"a": [0], "b": []}) == "a"
    assert rebuild_abstract({}) is None and rebuild_abstract(None) is None
    assert rebuild_abstract({"": [0]}) is None
    for bad in ({"a": 0}, {"a": "0"}, {"a": ["0"]}, {"a": [1.5]}, {"a": [-5]}, {"a": [[0]]},
                {"a": [0, 1], "b": [-2]}, {"a": [None]}, ["a"], "a b"):
        with pytest.raises(MalformedIndexError):
            rebuild_abstract(bad)


def test_bad_lines_are_reported_and_the_good_ones_kept(tmp_path, report):
    good2 = {**STATE_OF_OA, "id": "https://openalex.org/W2", "doi": "10.1234/two",
             "ids": {}, "referenced_works": []}
    lines = [
        STATE_OF_OA,                                                      # 1
        b'{"id": "https://openalex.org/W9", "title": "cut',               # 2 malformed JSON
        b"[1, 2]",                                                        # 3 not an object
        {"title": "no identifier", "publication_year": 2020},             # 4 no id, no doi
        {"id": "https://openalex.org/W5", "abstract_inverted_index": {"a": "0"}},  # 5
        {"id": "https://openalex.org/W6", "abstract_inverted_index": {"a": [0.5]},
         "authorships": "Ana", "referenced_works": ["https://openalex.org/W7", 12, ""]},  # 6
        b'{"id": "https://openalex.org/W8", "title": "caf\xe9"}',        # 7 Windows-1252
        good2,                                                            # 8
    ]
    path = write_lines(tmp_path / "works.jsonl", lines)
    papers, references = read_all(path, report)
    assert [p["key"] for p in papers] == ["10.7717/peerj.4375", "openalex:W5", "openalex:W6",
                                          "openalex:W8", "10.1234/two"]
    assert papers[3]["title"] == "café"
    assert papers[1]["abstract"] is None and papers[2]["abstract"] is None
    assert papers[2]["authors"] == []
    assert [r["ref_id"] for r in references if r["citing"] == "openalex:W6"] == ["W7"]
    found = {(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems}
    assert found == {
        ("line 2", "malformed JSON", "skipped"),
        ("line 3", "expected a JSON object, got list", "skipped"),
        ("line 4", "missing required field", "skipped"),
        ("line 5", "malformed abstract_inverted_index", "warning"),
        ("line 6", "malformed abstract_inverted_index", "warning"),
        ("line 6", "wrong field type", "warning"),
        ("line 6", "invalid referenced work", "warning"),
        ("line 7", "wrong encoding", "warning"),
    }
    assert all(p.file == str(path) for p in report.problems)
    assert report.counts["problems.skipped"] == 3
    assert report.counts["problems.warning"] == 6  # two invalid referenced works on line 6


def test_truncated_gzip_is_reported_after_the_records_read(tmp_path, report):
    data = gzip.compress(b"\n".join(orjson.dumps({**STATE_OF_OA, "id": f"W{i}", "doi": None})
                                    for i in range(200)))
    path = tmp_path / "works.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    papers, _ = read_all(path, report)
    assert 0 < len(papers) < 200
    assert [p.reason.split(":", 1)[0] for p in report.problems] == ["unreadable compressed data"]


def test_sniff_accepts_openalex_lines_even_cut_at_8_kb(tmp_path):
    line = orjson.dumps({**STATE_OF_OA, "abstract_inverted_index":
                         {f"w{i}": [i] for i in range(3000)}})
    assert len(line) > 8192
    assert openalex.sniff(line[:8192], Path("x")) is True
    pretty_spacing = b'{"id": "https://openalex.org/W1", "doi": null, "publication_year": 2001}'
    assert openalex.sniff(pretty_spacing, Path("x")) is True
    # keys in alphabetical order: the id may lie beyond the first 8 KB
    for work in (snapshot_work(1), {**snapshot_work(1), "abstract_inverted_index": None},
                 {**STATE_OF_OA, "abstract_inverted_index": {f"w{i}": [i] for i in range(3000)}}):
        ordered = orjson.dumps(work, option=orjson.OPT_SORT_KEYS)
        assert openalex.sniff(ordered[:8192], Path("x")) is True
    assert b'"id":"https://openalex.org/W' not in ordered[:8192]
    path = write_lines(tmp_path / "part_000.gz", [STATE_OF_OA], compress=True)
    assert formats.detect(path) is openalex.READER


@pytest.mark.parametrize("head", [
    b'{"id": "W1", "title": "generic jsonl"}',
    b'{"doi": "10.1/x", "is_oa": true, "oa_status": "gold", "z_authors": []}',
    b'{"items": [{"DOI": "10.1/x", "reference-count": 0}]}',
    b'{"paper_id": "1", "bib_entries": {"b0": {"ids": {"open_alex_id": '
    b'"https://openalex.org/W4225968159"}}}}',
    b"oci,citing,cited,creation,timespan,journal_sc,author_sc\n",
    b"<article></article>",
])
def test_sniff_rejects_other_formats(head):
    assert openalex.sniff(head, Path("x")) is False


def test_sniff_rejects_the_real_files_of_other_formats(shared_data):
    """Real unarXive lines cite works by OpenAlex URL; they must not pass for OpenAlex works."""
    files = [*shared_data.glob("unarxive-sample/*.jsonl"), shared_data / "taln/papers.jsonl",
             shared_data / "s2orc-sample/metadata_sample.jsonl"]
    assert len(files) >= 3
    unarxive = next(shared_data.glob("unarxive-sample/*.jsonl")).read_bytes()[:8192]
    assert b"https://openalex.org/W" in next(
        shared_data.glob("unarxive-sample/*.jsonl")).read_bytes()
    assert openalex.sniff(unarxive, Path("x")) is False
    for path in files:
        with path.open("rb") as handle:
            assert openalex.sniff(handle.read(8192), path) is False, path


def snapshot_work(number: int) -> dict:
    """A work as large as a typical snapshot line: 9 authors with institutions, locations,
    counts by year, concepts, topics, a 200-word abstract and 40 referenced works."""
    institution = {"id": "https://openalex.org/I18014758", "display_name": "Simon Fraser "
                   "University", "ror": "https://ror.org/0213rcc28", "country_code": "CA",
                   "type": "education", "lineage": ["https://openalex.org/I18014758"]}
    source = STATE_OF_OA["primary_location"]["source"]
    location = {"is_oa": True, "landing_page_url": "https://doi.org/10.7717/peerj.4375",
                "pdf_url": None, "source": source, "license": "cc-by", "license_id":
                "https://openalex.org/licenses/cc-by", "version": "publishedVersion",
                "is_accepted": True, "is_published": True}
    words = ["despite", "growing", "interest", "in", "open", "access", "to", "scholarly",
             "literature", "there", "is", "an", "unmet", "need", "for", "large", "scale", "up",
             "to", "date", "evidence", "on", "the", "prevalence", "of", "oa"]
    index: dict[str, list[int]] = {}
    for position in range(200):
        index.setdefault(f"{words[position % len(words)]}{position % 37}", []).append(position)
    return {
        **STATE_OF_OA,
        "id": f"https://openalex.org/W{number}", "doi": f"https://doi.org/10.1234/w{number}",
        "authorships": [{"author_position": "middle",
                         "author": {"id": f"https://openalex.org/A{i}",
                                    "display_name": f"Author Number {i}", "orcid": None},
                         "institutions": [institution], "countries": ["CA"],
                         "is_corresponding": False, "raw_author_name": f"Author Number {i}",
                         "raw_affiliation_strings": ["Simon Fraser University, Vancouver"],
                         "affiliations": [{"raw_affiliation_string": "Simon Fraser University",
                                           "institution_ids": [institution["id"]]}]}
                        for i in range(9)],
        "locations": [location, location, location], "best_oa_location": location,
        "open_access": {"is_oa": True, "oa_status": "gold", "oa_url": "https://peerj.com/x",
                        "any_repository_has_fulltext": True},
        "counts_by_year": [{"year": 2024 - i, "cited_by_count": 40 + i} for i in range(10)],
        "concepts": STATE_OF_OA["concepts"] * 12,
        "topics": [STATE_OF_OA["primary_topic"]] * 3,
        "abstract_inverted_index": index,
        "referenced_works": [f"https://openalex.org/W{1000000 + i}" for i in range(40)],
        "related_works": [f"https://openalex.org/W{2000000 + i}" for i in range(10)],
        "biblio": {"volume": "6", "issue": None, "first_page": "e4375", "last_page": "e4375"},
        "updated_date": "2024-05-01T00:00:00.000000", "created_date": "2017-08-08",
    }
