"""The ParsCit reader: the 1,030 real TALN files, hand-written output, broken input, sniffing."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from openmsd.ingest import parscit
from openmsd.report import Report


def records(path: Path, report: Report) -> list[tuple[str, dict[str, Any]]]:
    return list(parscit.read(path, report))


# --- (a) the real TALN ParsCit files ----------------------------------------------------------

@pytest.fixture
def taln(shared_data: Path) -> Path:
    return shared_data / "taln"


def test_all_real_files(taln: Path, report: Report) -> None:
    files = sorted((taln / "parscit").glob("*.parscit.xml"))
    assert len(files) == 1030
    kinds: Counter[str] = Counter()
    citing = set()
    for path in files:
        for kind, record in parscit.read(path, report):
            kinds[kind] += 1
            citing.add(record["citing"])
            assert record["source"] == "parscit"
    assert report.problems == []  # every file is well-formed UTF-8 and named X.parscit.xml
    assert kinds == {"reference": 14900, "context": 2041}  # no paper records
    assert report.counts["parscit.references_invalid"] == 562
    assert report.counts["parscit.files_without_citations"] == 22
    assert report.counts["parscit.references_with_doi"] == 12
    assert report.counts["parscit.references_without_title"] == 793
    assert report.counts["parscit.header_variants_ignored"] == 0  # no ParsHed/SectLabel output
    # the citing keys are the ids of taln/papers.jsonl
    with open(taln / "papers.jsonl", encoding="utf-8") as handle:
        ids = {json.loads(line)["id"] for line in handle}
    assert len(citing) == 1030 - 22 and citing <= ids


def test_real_file(taln: Path, report: Report) -> None:
    found = records(taln / "parscit" / "recital-2001-long-001.parscit.xml", report)
    assert Counter(kind for kind, _ in found) == {"reference": 7, "context": 7}
    (kind, first), (_, context) = found[:2]
    assert kind == "reference"
    assert first == {
        "citing": "recital-2001-long-001", "position": 0, "ref_id": "0", "targets": [],
        "title": "L'action GRACE d'évaluation de l'assignation des parties du discours pour "
                 "le français",
        "authors": ["G Adda", "J Mariani", "P Paroubek", "M Rajman", "J Lecomte"],
        "year": 1999, "venue": "Langues",
        "raw": "Adda, G., Mariani, J., Paroubek, P., Rajman, M., & Lecomte, J. (1999). L'action "
               "GRACE d'évaluation de l'assignation des parties du discours pour le français. "
               "Langues, 2(1), 119-129.",
        "source": "parscit", "loc": "recital-2001-long-001.parscit.xml:5",
    }
    assert context["ref_id"] == "0" and context["position"] == 3987
    assert "projet GRACE (Adda, Mariani, Paroubek, Rajman, & Lecomte, 1999)" in context["text"]
    second = found[2][1]
    assert second["venue"] == ("Proceedings of COMPLEX'94 3rd Conference on Computational "
                               "Lexicography and Text Research")  # booktitle, ',' cut


def test_real_dois(taln: Path, report: Report) -> None:
    found = records(taln / "parscit" / "taln-2011-court-021.parscit.xml", report)
    targets = [r["targets"] for kind, r in found if kind == "reference" and r["targets"]]
    assert len(targets) == 9
    assert ["doi:10.1023/a:1010933404324"] in targets  # "doi:10.1023/A:1010933404324."
    assert ["doi:10.1093/bioinformatics/btl616"] in targets  # "doi: 10.1093/..."


# --- (b) hand-written ParsCit output ----------------------------------------------------------

PARSCIT = """<?xml version="1.0" encoding="UTF-8"?>
<algorithms version="110505">
<algorithm name="SectLabel" version="110505">
<variant no="0" confidence="0.5"><title confidence="0.9">Le titre</title>
<author confidence="0.8">A. Auteur</author></variant>
</algorithm>
<algorithm name="ParsCit" version="110505">
<citationList>
<citation valid="true">
<authors>
<author>M Dupont</author>
<author>J-P Martin</author>
</authors>
<title>Analyse syntaxique robuste du français.</title>
<date>2004</date>
<journal>Traitement Automatique des Langues,</journal>
<booktitle>ignored when there is a journal</booktitle>
<contexts>
<context position="120" citStr="Dupont et Martin, 2004" startWordPosition="20"
 endWordPosition="23">comme le montrent (Dupont et Martin, 2004) les   analyseurs</context>
<context position="900" citStr="Dupont et Martin (2004)">selon Dupont et Martin (2004),</context>
</contexts>
<marker>Dupont, Martin, 2004</marker>
<rawString>Dupont M., Martin J.-P. (2004). Analyse syntaxique robuste du français. TAL, 45(2).
 doi:10.1000/TAL.45.2.</rawString>
</citation>
<citation valid="false">
<authors><author>K Smith</author></authors>
<title>Parsing,</title>
<date>1999a</date>
<booktitle>Proceedings of ACL,</booktitle>
<contexts><context citStr="Smith 1999">as Smith 1999 shows</context></contexts>
<marker>Smith, 1999</marker>
<rawString>Smith K. (1999a). Parsing, In Proceedings of ACL, p. 1-8.</rawString>
</citation>
<citation valid="true">
<rawString>Notes de bas de page.</rawString>
</citation>
</citationList>
</algorithm>
</algorithms>
"""


def line_of(fragment: str) -> int:
    """The 1-based line of PARSCIT holding a fragment."""
    return next(n for n, line in enumerate(PARSCIT.splitlines(), 1) if fragment in line)


@pytest.mark.parametrize("name", ["taln-2004-long-001.parscit.xml",
                                  "taln-2004-long-001.parscit.xml.gz",
                                  "taln-2004-long-001.xml"])
def test_hand_written_output(tmp_path: Path, report: Report, name: str) -> None:
    data = PARSCIT.encode("utf-8")
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    found = records(path, report)
    assert [kind for kind, _ in found] == ["reference", "context", "context", "reference",
                                           "context", "reference"]
    refs = [r for kind, r in found if kind == "reference"]
    contexts = [r for kind, r in found if kind == "context"]
    assert refs[0] == {
        "citing": "taln-2004-long-001", "position": 0, "ref_id": "0",
        "targets": ["doi:10.1000/tal.45.2"],
        "title": "Analyse syntaxique robuste du français",
        "authors": ["M Dupont", "J-P Martin"], "year": 2004,
        "venue": "Traitement Automatique des Langues",
        "raw": "Dupont M., Martin J.-P. (2004). Analyse syntaxique robuste du français. TAL, "
               "45(2). doi:10.1000/TAL.45.2.",
        "source": "parscit", "loc": f"{name}:9",
    }
    assert (refs[1]["title"], refs[1]["year"], refs[1]["venue"], refs[1]["ref_id"]) == (
        "Parsing", 1999, "Proceedings of ACL", "1")
    assert refs[2] == {
        "citing": "taln-2004-long-001", "position": 2, "ref_id": "2", "targets": [],
        "title": None, "authors": [], "year": None, "venue": None,
        "raw": "Notes de bas de page.", "source": "parscit", "loc": f"{name}:36",
    }
    assert contexts[0] == {
        "citing": "taln-2004-long-001", "ref_id": "0",
        "text": "comme le montrent (Dupont et Martin, 2004) les analyseurs", "position": 120,
        "source": "parscit", "loc": f"{name}:20",
    }
    assert (contexts[1]["position"], contexts[1]["text"]) == (900, "selon Dupont et Martin (2004),")
    assert (contexts[2]["ref_id"], contexts[2]["position"]) == ("1", -1)
    (problem,) = report.problems  # the context without a position attribute
    assert (problem.where, problem.kind) == (f"line {line_of('as Smith 1999')}", "warning")
    assert problem.reason.startswith("context without position")
    assert report.counts["parscit.references_invalid"] == 1
    assert report.counts["parscit.header_variants_ignored"] == 1
    assert report.counts["parscit.references"] == 3
    assert report.counts["parscit.contexts"] == 3


def test_unexpected_file_name(tmp_path: Path, report: Report) -> None:
    path = tmp_path / "paper-7.parscit.txt"
    path.write_text(PARSCIT, encoding="utf-8")
    found = records(path, report)
    assert {r["citing"] for _, r in found} == {"paper-7.parscit"}
    assert report.by_reason()["unexpected file name"] == 1
    assert len(found) == 6


# --- (c) bad input -----------------------------------------------------------------------------

def test_bad_bytes_are_recovered(tmp_path: Path, report: Report) -> None:
    path = tmp_path / "latin1.parscit.xml"
    path.write_bytes(PARSCIT.replace("français.</title>", "fran\udce7ais.</title>")
                     .encode("utf-8", "surrogateescape"))
    found = records(path, report)
    refs = [r for kind, r in found if kind == "reference"]
    assert len(refs) == 3 and len(found) == 6  # nothing lost
    assert refs[0]["title"] == "Analyse syntaxique robuste du fran\ufffdais"
    recovered = [p for p in report.problems if p.reason.startswith("malformed XML, recovered")]
    assert len(recovered) == 1
    assert recovered[0].where == f"line {line_of('robuste du français.</title>')}"
    assert recovered[0].kind == "warning"
    assert "encoding" in recovered[0].reason


def test_broken_files_are_reported_and_the_next_file_is_read(tmp_path: Path,
                                                             report: Report) -> None:
    unclosed = tmp_path / "a.parscit.xml"  # a bare '&': recovered without it
    unclosed.write_text(PARSCIT.replace("<title>Parsing,", "<title>Parsing & co,"),
                        encoding="utf-8")
    garbage = tmp_path / "b.parscit.xml"
    garbage.write_bytes(b"not XML at all")
    empty = tmp_path / "c.parscit.xml"
    empty.write_bytes(b"")
    other = tmp_path / "d.parscit.xml"
    other.write_text("<algorithms><algorithm name='ParsHed'/></algorithms>", encoding="utf-8")
    truncated = tmp_path / "e.parscit.xml.gz"
    truncated.write_bytes(gzip.compress(PARSCIT.encode())[:100])
    good = tmp_path / "f.parscit.xml"
    good.write_text(PARSCIT, encoding="utf-8")
    seen: Counter[tuple[str, str]] = Counter()
    for path in (unclosed, garbage, empty, other, truncated, good):
        for kind, record in parscit.read(path, report):
            seen[(record["citing"], kind)] += 1
    assert seen == {("a", "reference"): 3, ("a", "context"): 3,
                    ("f", "reference"): 3, ("f", "context"): 3}
    where = {Path(p.file).name: p for p in report.problems if "position" not in p.reason}
    assert where["a.parscit.xml"].where == f"line {line_of('<title>Parsing,')}"
    assert where["a.parscit.xml"].kind == "warning"
    assert where["a.parscit.xml"].reason.startswith("malformed XML, recovered: ")
    assert where["b.parscit.xml"].kind == "skipped"
    assert (where["b.parscit.xml"].where, where["b.parscit.xml"].reason) == (
        "line 1", "malformed XML: Start tag expected, '<' not found, line 1, column 1")
    assert where["c.parscit.xml"].reason.startswith("malformed XML: Document is empty")
    assert where["d.parscit.xml"].reason.startswith("not ParsCit output")
    assert where["e.parscit.xml.gz"].reason.startswith("unreadable file")


# --- (d) sniffing ------------------------------------------------------------------------------

def test_sniff(taln: Path, tmp_path: Path) -> None:
    path = taln / "parscit" / "recital-2001-long-001.parscit.xml"
    assert parscit.sniff(path.read_bytes()[:8192], path)
    assert parscit.sniff(PARSCIT.encode(), tmp_path / "x.xml")
    jats_head = (b'<?xml version="1.0" encoding="utf-8"?>\n<article xml:lang="en">\n<front>'
                 b"<back><ref-list><ref id='B1'><mixed-citation>x</mixed-citation>")
    generic = b'{"id": "taln-2002-poster-006", "title": "<citationList>"}\n'
    assert not parscit.sniff(jats_head, tmp_path / "x.xml")
    assert not parscit.sniff(generic, tmp_path / "x.jsonl")
    assert not parscit.sniff((taln / "papers.jsonl").read_bytes()[:8192], tmp_path / "p.jsonl")
