"""The S2ORC metadata reader: the real 1,000-record sample, hand-written records, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from openmsd.ingest import s2orc
from openmsd.ingest.reader import head
from openmsd.report import Report
from tests.ingest.records import by_kind, write_lines

SAMPLE = "s2orc-sample/metadata_sample.jsonl"


# --- (a) the real sample --------------------------------------------------------------------


def test_real_sample(shared_data: Path, report: Report) -> None:
    path = shared_data / SAMPLE
    records = by_kind(list(s2orc.read(path, report)))
    papers = records["paper"]
    assert len(papers) == 1000
    assert records["context"] == []
    assert report.problems == []
    assert sum(p["abstract"] is not None for p in papers) == 488
    assert sum(p["doi"] is not None for p in papers) == 587
    outbound = [r for r in records["reference"] if r["ref_id"] != "inbound"]
    inbound = [r for r in records["reference"] if r["ref_id"] == "inbound"]
    assert len(outbound) == report.counts["s2orc.outbound_citations"] == 3107
    assert len(inbound) == report.counts["s2orc.inbound_citations"] == 2974
    assert report.counts["s2orc.papers_without_abstract"] == 512

    # Outbound citations into the sample, computed from the raw records: only 4, all of them
    # papers citing themselves; the reader's targets resolve to the same papers.
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    sample_ids = {r["paper_id"] for r in raw}
    internal = [(r["paper_id"], c) for r in raw for c in r["outbound_citations"]
                if c in sample_ids]
    assert len(internal) == 4 and all(a == b for a, b in internal)
    known = {a for p in papers for a in p["aliases"]}
    assert sum(r["targets"][0] in known for r in outbound) == 4

    # A record with every identifier: keyed on its DOI, three MAG ids, venue and categories.
    paper = next(p for p in papers if "s2:18980380" in p["aliases"])
    assert paper["key"] == "10.1109/tac.2015.2495174"
    assert paper["aliases"] == ["arxiv:1501.07418", "doi:10.1109/tac.2015.2495174",
                                "mag:1849856029", "mag:2952813233", "mag:2962850106",
                                "s2:18980380"]
    assert paper["title"] == "Distributionally Robust Counterpart in Markov Decision Processes"
    assert paper["year"] == 2016
    assert paper["venue"] == "IEEE Transactions on Automatic Control"
    assert paper["authors"] == ["Pengqian Yu", "Huan Xu"]
    assert paper["categories"] == ["Mathematics", "Computer Science"]
    assert paper["abstract"].startswith("This technical note studies Markov decision processes")
    assert paper["loc"] == "metadata_sample.jsonl:221"
    own = [r for r in outbound if r["citing"] == paper["key"]]
    assert len(own) == 21
    assert own[0]["targets"] == ["s2:7229756"] and own[0]["ref_id"] == "7229756"
    assert own[17]["targets"] == ["s2:18980380"]  # the self-citation
    cited_by = [r for r in inbound if r["targets"] == paper["aliases"]]
    assert len(cited_by) == 18
    assert cited_by[1]["citing"] == "s2:2557260" and cited_by[1]["position"] == -1

    # The first line: no DOI, venue from "journal", MEDLINE-style names kept as given.
    first = papers[0]
    assert first["key"] == "s2:77490025"
    assert first["aliases"] == ["mag:2426173123", "s2:77490025"]
    assert first["venue"] == "Oftalmologicheski\u012d zhurnal"  # i + breve, NFC-composed
    assert first["authors"] == ["Pen'kov Ma", "Konstantinovskaia Ke", "Zhukova Sv"]
    assert first["year"] == 1975 and first["abstract"] is None
    # Suffixes are appended.
    burke = next(p for p in papers if "s2:2874584" in p["aliases"])
    assert "T R Burke Jr" in burke["authors"]


# --- (b) hand-written records in the documented layout ----------------------------------------

RECORD = {
    "paper_id": "1000",
    "title": "A Paper",
    "authors": [{"first": "Ada", "middle": ["King", "B."], "last": "Lovelace", "suffix": ""},
                {"first": "Charles", "middle": [], "last": "Babbage", "suffix": "Jr"}],
    "abstract": "An abstract.",
    "year": 2019,
    "arxiv_id": "1901.00001",
    "acl_id": "P19-1001",
    "pmc_id": "PMC123",
    "pubmed_id": "3456",
    "doi": "10.18653/V1/P19-1001",
    "venue": None,
    "journal": "Proc. ACL",
    "mag_id": "111,222",
    "mag_field_of_study": ["Computer Science"],
    "outbound_citations": ["2000", "3000"],
    "inbound_citations": ["4000"],
    "has_outbound_citations": True,
    "has_inbound_citations": True,
    "has_pdf_parse": False,
    "s2_url": "https://api.semanticscholar.org/CorpusID:1000",
}
BARE = {"paper_id": "5000", "title": "Bare", "authors": [], "abstract": None, "year": None,
        "arxiv_id": None, "acl_id": None, "pmc_id": None, "pubmed_id": None, "doi": None,
        "venue": "Venue", "journal": "Journal", "mag_id": None, "mag_field_of_study": None,
        "outbound_citations": [], "inbound_citations": []}


def test_field_mapping(tmp_path: Path, report: Report) -> None:
    path = write_lines(tmp_path / "meta.jsonl.gz", [orjson.dumps(RECORD), orjson.dumps(BARE)],
                       compress=True)
    records = list(s2orc.read(path, report))
    assert [kind for kind, _ in records] == ["paper", "reference", "reference", "reference",
                                             "paper"]
    assert report.problems == []
    aliases = ["acl:P19-1001", "arxiv:1901.00001", "doi:10.18653/v1/p19-1001", "mag:111",
               "mag:222", "pmcid:PMC123", "pmid:3456", "s2:1000"]
    assert records[0][1] == {
        "key": "10.18653/v1/p19-1001", "aliases": aliases, "doi": "10.18653/v1/p19-1001",
        "title": "A Paper", "abstract": "An abstract.", "declared_language": None,
        "year": 2019, "venue": "Proc. ACL",
        "authors": ["Ada King B. Lovelace", "Charles Babbage Jr"], "keywords": [],
        "categories": ["Computer Science"], "translations": [], "full_text": None,
        "source": "s2orc", "loc": "meta.jsonl.gz:1",
    }
    empty = {"title": None, "authors": [], "year": None, "venue": None, "raw": None,
             "source": "s2orc", "loc": "meta.jsonl.gz:1"}
    assert records[1][1] == {"citing": "10.18653/v1/p19-1001", "position": 0, "ref_id": "2000",
                             "targets": ["s2:2000"], **empty}
    assert records[2][1]["position"] == 1 and records[2][1]["targets"] == ["s2:3000"]
    assert records[3][1] == {"citing": "s2:4000", "position": -1, "ref_id": "inbound",
                             "targets": aliases, **empty}
    bare = records[4][1]
    assert bare["key"] == "s2:5000" and bare["aliases"] == ["s2:5000"]
    assert bare["venue"] == "Venue"  # venue wins over journal
    assert bare["categories"] == [] and bare["year"] is None and bare["doi"] is None
    assert bare["loc"] == "meta.jsonl.gz:2"
    assert report.counts["s2orc.papers"] == 2
    assert report.counts["s2orc.outbound_citations"] == 2
    assert report.counts["s2orc.inbound_citations"] == 1


# --- (c) bad input -----------------------------------------------------------------------------


def test_bad_input_is_reported_and_good_lines_kept(tmp_path: Path, report: Report) -> None:
    lines = [
        orjson.dumps(BARE),
        b'{"paper_id": "6000", "title": ',  # malformed JSON
        b"42",  # not an object
        orjson.dumps({**BARE, "paper_id": None, "doi": None}),  # no id
        b'{"paper_id": "7000", "title": "Caf\xe9"}',  # Latin-1, not UTF-8: read as cp1252
        orjson.dumps({**BARE, "paper_id": "8000", "authors": "Ada Lovelace",
                      "outbound_citations": "2000", "inbound_citations": ["4000", None]}),
        orjson.dumps({**BARE, "paper_id": "9000", "authors": [{"first": "Ada"}, 7]}),
        orjson.dumps(RECORD),
    ]
    path = write_lines(tmp_path / "bad.jsonl", lines)
    records = by_kind(list(s2orc.read(path, report)))
    assert [p["key"] for p in records["paper"]] == ["s2:5000", "s2:7000", "s2:8000", "s2:9000",
                                                    "10.18653/v1/p19-1001"]
    assert records["paper"][1]["title"] == "Café"
    assert records["paper"][2]["authors"] == []
    assert records["paper"][3]["authors"] == ["Ada"]
    inbound_8000 = [r for r in records["reference"] if r["targets"] == ["s2:8000"]]
    assert [r["citing"] for r in inbound_8000] == ["s2:4000"]
    found = {(p.where, p.reason.split(":", 1)[0], p.kind) for p in report.problems}
    assert found == {
        ("line 2", "malformed JSON", "skipped"),
        ("line 3", "expected a JSON object, got int", "skipped"),
        ("line 4", "missing required field", "skipped"),
        ("line 5", "wrong encoding", "warning"),
        ("line 6", "field 'authors'", "warning"),
        ("line 6", "field 'outbound_citations'", "warning"),
        ("line 6", "inbound_citations[1]", "warning"),
        ("line 7", "authors[1]", "warning"),
    }
    assert all(p.file == str(path) for p in report.problems)
    assert report.counts["problems.skipped"] == 3
    assert report.counts["problems.warning"] == 5


def test_empty_file_is_reported(tmp_path: Path, report: Report) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert list(s2orc.read(path, report)) == []
    assert report.by_reason() == {"empty file": 1}


# --- (d) sniffing ------------------------------------------------------------------------------


def test_sniff(tmp_path: Path, shared_data: Path) -> None:
    real = shared_data / SAMPLE
    assert s2orc.sniff(head(real), real)
    ours = write_lines(tmp_path / "m.jsonl.gz", [orjson.dumps(RECORD)], compress=True)
    assert s2orc.sniff(head(ours), ours)
    generic = b'{"id": "taln-2002-1", "title": "Une", "abstract": "..."}\n'
    unarxive_line = b'{"paper_id": "2212.1", "_source_hash": "ab", "metadata": {"id": "x"}}\n'
    specter = b'{\n  "abc": {\n    "paper_id": "abc",\n    "abstract": "x", "title": "t"}}'
    for other in (generic, unarxive_line, specter, b"<article/>", b"oci,citing,cited\n"):
        assert not s2orc.sniff(other, Path("x.jsonl"))


@pytest.mark.parametrize("line", [b'{"paper_id": "1", "s2_url": "u"}',
                                  b'{"paper_id": "1", "inbound_citations": []}'])
def test_sniff_minimal_lines(line: bytes) -> None:
    assert s2orc.sniff(line + b"\n", Path("x"))
