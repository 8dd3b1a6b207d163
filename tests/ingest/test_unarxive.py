"""The unarXive reader: the real 49-paper sample, hand-written records, bad input, sniffing."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from openmsd.ingest import unarxive
from openmsd.ingest.reader import head
from openmsd.report import Report
from tests.conftest import SHARED_DATA
from tests.ingest.records import by_kind, write_lines

SAMPLE = "unarxive-sample/arXiv_src_2212_086.jsonl"


@pytest.fixture(scope="module")
def real() -> tuple[dict[str, list[dict[str, Any]]], Report]:
    path = SHARED_DATA / SAMPLE
    if not path.is_file():
        pytest.skip("../shared/data is not present")
    report = Report()
    return by_kind(list(unarxive.read(path, report))), report


# --- (a) the real sample --------------------------------------------------------------------


def test_real_counts(real: tuple[dict[str, list[dict[str, Any]]], Report]) -> None:
    records, report = real
    assert len(records["paper"]) == 49
    assert len(records["reference"]) == 1786
    assert len(records["context"]) == 3042
    assert report.problems == []
    assert report.counts["unarxive.references_linked"] == 740
    assert report.counts["unarxive.references_unlinked"] == 1046
    namespaces = Counter(t.split(":", 1)[0] for r in records["reference"] for t in r["targets"])
    # The README's "633 linked" are the entries linked to OpenAlex.
    assert namespaces == {"openalex": 633, "doi": 517, "arxiv": 255, "pmid": 68, "pmcid": 21}


def test_real_paper(real: tuple[dict[str, list[dict[str, Any]]], Report]) -> None:
    papers = {p["key"]: p for p in real[0]["paper"]}
    paper = papers["arxiv:2212.11867"]
    assert paper["title"] == ("Zeros of a growing number of derivatives of random polynomials "
                              "with independent roots")
    assert paper["categories"] == ["math.PR", "math.CA", "math.CV"]
    assert paper["year"] == 2022
    assert paper["authors"] == ["Marcus Michelen", "Xuan-Truong Vu"]
    assert paper["aliases"] == ["arxiv:2212.11867"]
    assert paper["abstract"].startswith("Let $X_1,X_2,\\ldots$ be independent and identically")
    assert paper["full_text"].startswith("Let [FORMULA] be a probability measure on [FORMULA]")
    assert "{{" not in paper["full_text"]
    assert paper["source"] == "unarxive" and paper["loc"] == "arXiv_src_2212_086.jsonl:1"
    # The two papers with a DOI are keyed on it; one has a journal reference.
    doi_paper = papers["10.1088/1674-1137/ac600c"]
    assert doi_paper["aliases"] == ["arxiv:2212.11861", "doi:10.1088/1674-1137/ac600c"]
    assert doi_paper["venue"] == "Chinese Physics C46, (2022) 073106"
    assert "10.18452/25593" in papers
    assert sum(p["doi"] is not None for p in papers.values()) == 2
    # authors_parsed carries the decoded accents the authors string writes in LaTeX.
    assert papers["arxiv:2212.11791"]["authors"][1] == "Eyyüb Sari"
    # A paper first submitted in November 2022 (v1 date), announced in 2212.
    assert papers["arxiv:2212.11783"]["year"] == 2022


def test_real_references_and_contexts(real: tuple[dict[str, list[dict[str, Any]]],
                                                  Report]) -> None:
    records = real[0]
    refs = [r for r in records["reference"] if r["citing"] == "arxiv:2212.11867"]
    assert len(refs) == 17
    assert [r["position"] for r in refs] == list(range(17))
    pemantle = refs[13]
    assert pemantle["ref_id"] == "b9a0ebd270d67144ab9dc65179a9fbab756141e3"
    assert pemantle["targets"] == ["doi:10.1007/978-3-642-30979-3_14", "openalex:W1890931827",
                                   "arxiv:1109.5975"]
    assert pemantle["raw"].startswith("R. Pemantle and I. Rivin. The distribution of zeros")
    contexts = [c for c in records["context"] if c["citing"] == "arxiv:2212.11867"]
    assert len(contexts) == 26
    first = contexts[0]
    assert first["ref_id"] == pemantle["ref_id"]
    assert first["position"] == 264
    assert first["text"][first["position"]:].startswith("[CITE] conjectured that the same")
    # Every context points at a [CITE] of its text and at a reference of its paper.
    ref_ids = {(r["citing"], r["ref_id"]) for r in records["reference"]}
    for context in records["context"]:
        assert context["text"][context["position"]:].startswith("[CITE]")
        assert (context["citing"], context["ref_id"]) in ref_ids
    assert Counter(c["citing"] for c in records["context"]).most_common(1) == [
        ("arxiv:2212.11899", 243)]


# --- (b) hand-written records in the documented layout ----------------------------------------

CITE = "{{cite:aaa111}}"
LINE_FULL = {
    "paper_id": "2301.00001",
    "_pdf_hash": None,
    "_source_hash": "0123abcd",
    "_source_name": "2301.00001.gz",
    "metadata": {
        "id": "2301.00001",
        "submitter": "Ada Lovelace",
        "authors": "Ada Lovelace and Charles Babbage",
        "title": "On the\n  Analytical Engine",
        "comments": "10 pages",
        "journal-ref": "J. Eng. 1, (1843)  1-10",
        "doi": "https://doi.org/10.1234/AE.1843",
        "report-no": None,
        "categories": "cs.AI math.HO",
        "license": "http://creativecommons.org/licenses/by/4.0/",
        "abstract": "  The metadata abstract.\n",
        "versions": [{"version": "v1", "created": "Mon, 26 Dec 2022 10:00:00 GMT"},
                     {"version": "v2", "created": "Tue, 3 Jan 2023 10:00:00 GMT"}],
        "update_date": "2023-01-04",
        "authors_parsed": [["Lovelace", "Ada", ""], ["Babbage", "Charles", "Jr"]],
    },
    "discipline": "Computer Science",
    "abstract": {"section": "Abstract", "text": "  We describe\n the engine.  ",
                 "cite_spans": [], "ref_spans": []},
    "body_text": [
        {"section": "Introduction", "sec_number": "1", "sec_type": "section",
         "content_type": "paragraph",
         "text": f"The engine {{{{formula:f-1}}}} was  proposed {CITE}.\n",
         "cite_spans": [{"start": 41, "end": 56, "text": CITE, "ref_id": "aaa111"}],
         "ref_spans": [{"start": 11, "end": 26, "text": "{{formula:f-1}}", "ref_id": "f-1"}]},
        {"section": "Results", "sec_number": "2", "sec_type": "section",
         "content_type": "paragraph",
         "text": "See {{figure:g-1}} and {{table:t-1}}; both follow {{cite:bbb222}}.",
         "cite_spans": [{"start": 50, "end": 66, "text": "{{cite:bbb222}}",
                         "ref_id": "bbb222"}],
         "ref_spans": []},
    ],
    "bib_entries": {
        "aaa111": {"bib_entry_raw": "L. Menabrea. Sketch of the\n Analytical Engine. 1842.",
                   "contained_arXiv_ids": [{"id": "0801.00001", "text": "arXiv:0801.00001",
                                            "start": 40, "end": 56}],
                   "contained_links": [], "discipline": "Computer Science",
                   "ids": {"open_alex_id": "https://openalex.org/W42",
                           "sem_open_alex_id": "https://semopenalex.org/work/W42",
                           "pubmed_id": "123", "pmc_id": "PMC9", "doi": "10.5555/Menabrea",
                           "arxiv_id": ""}},
        "bbb222": {"bib_entry_raw": "An unlinked note.", "contained_arXiv_ids": [],
                   "contained_links": [], "discipline": "Computer Science",
                   "ids": {"open_alex_id": "", "sem_open_alex_id": "", "pubmed_id": "",
                           "pmc_id": "", "doi": "", "arxiv_id": ""}},
    },
    "ref_entries": {"f-1": {"latex": "x^2", "type": "formula"}},
}
LINE_BARE = {
    "paper_id": "math/0610659",
    "_source_hash": "ffff",
    "metadata": {"id": "math/0610659", "authors": "A. One, B. Two, and C. Three and\n D. Four",
                 "title": "Old style", "categories": "math.CO", "doi": None,
                 "journal-ref": None},
    "abstract": None,
    "body_text": [],
    "bib_entries": {},
}


def test_field_mapping(tmp_path: Path, report: Report) -> None:
    path = write_lines(tmp_path / "part.jsonl.gz",
                       [orjson.dumps(LINE_FULL), orjson.dumps(LINE_BARE)], compress=True)
    records = list(unarxive.read(path, report))
    assert [kind for kind, _ in records] == ["paper", "reference", "reference", "context",
                                             "context", "paper"]
    assert report.problems == []
    paper = records[0][1]
    assert paper == {
        "key": "10.1234/ae.1843", "aliases": ["arxiv:2301.00001", "doi:10.1234/ae.1843"],
        "doi": "10.1234/ae.1843", "title": "On the Analytical Engine",
        "abstract": "We describe the engine.", "declared_language": None, "year": 2022,
        "venue": "J. Eng. 1, (1843) 1-10", "authors": ["Ada Lovelace", "Charles Babbage Jr"],
        "keywords": [], "categories": ["cs.AI", "math.HO"], "translations": [],
        "full_text": "The engine [FORMULA] was proposed [CITE].\n\n"
                     "See [FIGURE] and [TABLE]; both follow [CITE].",
        "source": "unarxive", "loc": "part.jsonl.gz:1",
    }
    first, second = records[1][1], records[2][1]
    assert first == {
        "citing": "10.1234/ae.1843", "position": 0, "ref_id": "aaa111",
        "targets": ["doi:10.5555/menabrea", "openalex:W42", "pmid:123", "pmcid:PMC9",
                    "arxiv:0801.00001"],
        "title": None, "authors": [], "year": None, "venue": None,
        "raw": "L. Menabrea. Sketch of the Analytical Engine. 1842.",
        "source": "unarxive", "loc": "part.jsonl.gz:1",
    }
    assert (second["position"], second["ref_id"], second["targets"]) == (1, "bbb222", [])
    context = records[3][1]
    assert context == {"citing": "10.1234/ae.1843", "ref_id": "aaa111",
                       "text": "The engine [FORMULA] was proposed [CITE].", "position": 34,
                       "source": "unarxive", "loc": "part.jsonl.gz:1"}
    assert records[4][1]["ref_id"] == "bbb222"
    assert records[4][1]["text"][records[4][1]["position"]:] == "[CITE]."
    bare = records[5][1]
    assert bare["key"] == "arxiv:math/0610659"
    assert bare["year"] == 2006  # from the arXiv id: no versions
    assert bare["authors"] == ["A. One", "B. Two", "C. Three", "D. Four"]
    assert bare["abstract"] is None and bare["full_text"] is None
    assert bare["loc"] == "part.jsonl.gz:2"
    assert report.counts["unarxive.references_linked"] == 1
    assert report.counts["unarxive.references_unlinked"] == 1
    assert report.counts["unarxive.contexts"] == 2


def test_helpers() -> None:
    text, offsets = unarxive.clean_text("  a {{cite:x}}\n\n b{{formula:y}} ")
    assert text == "a [CITE] b[FORMULA]"
    assert offsets == {4: 2, 18: 10}
    assert unarxive.arxiv_year("2212.11867") == 2022
    assert unarxive.arxiv_year("hep-th/9901001") == 1999
    assert unarxive.arxiv_year("math.CO/0501001") == 2005
    assert unarxive.arxiv_year("nonsense") is None
    assert unarxive._version_year([{"created": "not a date"}]) is None
    assert unarxive._version_year([{"created": "Wed, 7 Dec 2022 13:44:49 GMT"}]) == 2022


# --- (c) bad input -----------------------------------------------------------------------------


def test_bad_input_is_reported_and_good_lines_kept(tmp_path: Path, report: Report) -> None:
    no_id = {**LINE_BARE, "paper_id": None, "metadata": {"title": "No id"}}
    wrong_types = {**LINE_BARE, "paper_id": "2301.00003", "metadata": "not an object",
                   "bib_entries": ["x"], "body_text": "text"}
    unknown_cite = {**LINE_BARE, "paper_id": "2301.00004",
                    "bib_entries": {"bad": {"bib_entry_raw": "X", "ids": {"doi": "10.5/x"}}},
                    "body_text": [{"text": "As in {{cite:zzz}}.", "cite_spans": [
                        {"start": 6, "end": 18, "text": "{{cite:zzz}}", "ref_id": "zzz"},
                        {"start": 0, "end": 1, "text": "A"}]},
                                  {"text": None, "cite_spans": []}]}
    lines = [
        orjson.dumps(LINE_BARE),
        b'{"paper_id": "2301.00002", "metadata": {',  # malformed JSON
        b'["a", "list"]',  # not an object
        orjson.dumps(no_id),
        b'{"paper_id": "2301.0000\xff"}',  # not UTF-8: read as Windows-1252, reported
        orjson.dumps(wrong_types),
        orjson.dumps(unknown_cite),
        orjson.dumps(LINE_FULL),
    ]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    records = by_kind(list(unarxive.read(path, report)))
    assert [p["key"] for p in records["paper"]] == [
        "arxiv:math/0610659", "arxiv:2301.0000\xff", "arxiv:2301.00003", "arxiv:2301.00004",
        "10.1234/ae.1843"]
    wrong = records["paper"][2]
    assert wrong["title"] is None and wrong["year"] == 2023
    # The context whose bibliography entry is missing is kept, with a warning.
    assert [c["ref_id"] for c in records["context"]][:1] == ["zzz"]
    assert records["context"][0]["position"] == 6
    assert records["reference"][0]["ref_id"] == "bad"
    assert records["reference"][0]["targets"] == []
    found = {(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems}
    assert found == {
        ("line 2", "malformed JSON", "skipped"),
        ("line 3", "expected a JSON object, got list", "skipped"),
        ("line 4", "missing required field", "skipped"),
        ("line 5", "wrong encoding", "warning"),
        ("line 6", "field 'metadata'", "warning"),
        ("line 6", "field 'bib_entries'", "warning"),
        ("line 6", "field 'body_text'", "warning"),
        ("line 7, body_text[0]", "cite span without bib entry", "warning"),
        ("line 7, body_text[0]", "cite span without ref_id", "warning"),
        ("line 7, body_text[1]", "paragraph without text", "warning"),
        ("line 7", "invalid DOI in bib entry bad", "warning"),
    }
    assert all(p.file == str(path) for p in report.problems)
    assert report.counts["problems.skipped"] == 3
    assert report.counts["problems.warning"] == 8
    assert report.counts["unarxive.contexts_without_bib_entry"] == 1


def test_truncated_gzip_is_reported(tmp_path: Path, report: Report) -> None:
    data = gzip.compress(orjson.dumps(LINE_BARE) + b"\n" + orjson.dumps(LINE_FULL) + b"\n")
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) - 30])
    list(unarxive.read(path, report))
    assert report.by_reason()["unreadable compressed data"] == 1


def test_strict_mode_raises(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "bad.jsonl", [b"{broken"])
    with pytest.raises(ValueError, match="malformed JSON"):
        list(unarxive.read(path, Report(strict=True)))


# --- (d) sniffing ------------------------------------------------------------------------------


def test_sniff(tmp_path: Path, shared_data: Path) -> None:
    real_path = shared_data / SAMPLE
    assert unarxive.sniff(head(real_path), real_path)
    ours = write_lines(tmp_path / "a.jsonl.gz", [orjson.dumps(LINE_FULL)], compress=True)
    assert unarxive.sniff(head(ours), ours)
    generic = b'{"id": "taln-2002-1", "title": "Une", "abstract": "..."}\n'
    s2orc_line = b'{"paper_id": "77490025", "title": "T", "outbound_citations": []}\n'
    pdf_parse = b'{"paper_id": "1", "_pdf_hash": "x", "body_text": [], "bib_entries": {}}\n'
    for other in (generic, s2orc_line, pdf_parse, b"<article/>", b"oci,citing,cited\n"):
        assert not unarxive.sniff(other, Path("x.jsonl"))
