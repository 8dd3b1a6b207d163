"""The S2ORC metadata format: one Semantic Scholar paper a line with its citation ids.

S2ORC (Lo et al., ACL 2020) metadata records carry ``paper_id`` (the S2 corpus id), ``title``,
``authors`` (``{first, middle: [...], last, suffix}``), ``abstract`` (or null), ``year``,
``arxiv_id``, ``acl_id``, ``pmc_id``, ``pubmed_id``, ``doi``, ``venue``, ``journal``,
``mag_id`` (sometimes several, comma-separated), ``mag_field_of_study`` (a list or null),
``outbound_citations`` and ``inbound_citations`` (lists of S2 paper ids), ``has_*`` flags and
``s2_url``.

Mapping: a paper record keyed on the DOI or ``s2:<paper_id>`` with every id as an alias,
``venue`` = ``venue`` or else ``journal``, ``categories`` = ``mag_field_of_study``. Each outbound
citation is a reference of this paper (``ref_id`` = the cited id, targets ``["s2:<id>"]``). Each
inbound citation is a reference *of the citing paper* (``citing`` = ``s2:<other id>``,
``ref_id`` = ``"inbound"``, ``position`` -1) whose targets are this paper's aliases, so it
resolves to this paper whichever key it ends up with.

Example line (shortened)::

    {"paper_id": "18980380", "title": "Distributionally Robust Counterpart in Markov Decision
     Processes", "authors": [{"first": "Pengqian", "middle": [], "last": "Yu", "suffix": ""}],
     "abstract": "This technical note studies ...", "year": 2016, "arxiv_id": "1501.07418",
     "acl_id": null, "pmc_id": null, "pubmed_id": null, "doi": "10.1109/TAC.2015.2495174",
     "venue": "IEEE Transactions on Automatic Control", "journal": "IEEE Transactions on
     Automatic Control", "mag_id": "2952813233,1849856029", "mag_field_of_study":
     ["Mathematics", "Computer Science"], "outbound_citations": ["7229756", "57464058"],
     "inbound_citations": ["2557260"], "has_outbound_citations": true,
     "s2_url": "https://api.semanticscholar.org/CorpusID:18980380"}
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openmsd.corpus.identifiers import alias, normalize_doi, paper_key
from openmsd.corpus.schema import Record
from openmsd.ingest.reader import Reader, as_str, as_str_list, as_year, json_lines
from openmsd.report import Report

FORMAT = "s2orc"

# Record fields -> alias namespaces of the paper's identifiers.
_ID_FIELDS = {"doi": "doi", "paper_id": "s2", "arxiv_id": "arxiv", "acl_id": "acl",
              "pubmed_id": "pmid", "pmc_id": "pmcid"}
# Fields whose presence in a JSON line's first bytes marks S2ORC metadata.
_SNIFF_FIELDS = (b'"outbound_citations"', b'"inbound_citations"', b'"mag_field_of_study"',
                 b'"has_pdf_parse"', b'"s2_url"', b'"acl_id"')


def _aliases(obj: dict[str, Any]) -> list[str]:
    """Every identifier of the record as an alias (several ``mag:`` ids when listed)."""
    found = [alias(namespace, as_str(obj.get(field))) for field, namespace in _ID_FIELDS.items()]
    mag = as_str(obj.get("mag_id"))
    found += [alias("mag", m) for m in mag.split(",")] if mag else []
    return sorted({a for a in found if a})


def _author(value: Any) -> str | None:
    """``First Middle Last Suffix`` from an S2ORC author object (a plain string is kept)."""
    if isinstance(value, str):
        return as_str(value)
    if not isinstance(value, dict):
        return None
    parts = [as_str(value.get("first"), "first"), *as_str_list(value.get("middle"), "middle"),
             as_str(value.get("last"), "last"), as_str(value.get("suffix"), "suffix")]
    return " ".join(p for p in parts if p) or None


def _authors(path: Path, number: int, value: Any, report: Report) -> list[str]:
    """The author names of a record; malformed entries are reported and left out."""
    if value is None:
        return []
    if not isinstance(value, list):
        report.problem(path, f"line {number}", "field 'authors': expected a list",
                       kind="warning")
        return []
    names = []
    for index, author in enumerate(value):
        name = _author(author)
        if name is None:
            report.problem(path, f"line {number}",
                           f"authors[{index}]: expected an author object: {author!r:.80}",
                           kind="warning")
            continue
        names.append(name)
    return names


def _id_list(path: Path, number: int, obj: dict[str, Any], field: str,
             report: Report) -> list[str]:
    """The S2 ids of a citation list; a non-list or a non-id entry is reported."""
    value = obj.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        report.problem(path, f"line {number}", f"field '{field}': expected a list",
                       kind="warning")
        return []
    ids = []
    for index, item in enumerate(value):
        found = as_str(item)
        if found is None:
            report.problem(path, f"line {number}",
                           f"{field}[{index}]: expected a paper id: {item!r:.80}", kind="warning")
            continue
        ids.append(found)
    return ids


def _paper(path: Path, number: int, obj: dict[str, Any], key: str, loc: str,
           report: Report) -> dict[str, Any]:
    """The paper record of one S2ORC metadata line."""
    doi = as_str(obj.get("doi"))
    return {
        "key": key, "aliases": _aliases(obj), "doi": normalize_doi(doi),
        "title": as_str(obj.get("title"), "title"),
        "abstract": as_str(obj.get("abstract"), "abstract"),
        "declared_language": None, "year": as_year(obj.get("year"), "year"),
        "venue": as_str(obj.get("venue"), "venue") or as_str(obj.get("journal"), "journal"),
        "authors": _authors(path, number, obj.get("authors"), report), "keywords": [],
        "categories": as_str_list(obj.get("mag_field_of_study"), "mag_field_of_study"),
        "translations": [],
        "full_text": None, "source": FORMAT, "loc": loc,
    }


def _reference(citing: str, position: int, ref_id: str, targets: list[str],
               loc: str) -> dict[str, Any]:
    return {"citing": citing, "position": position, "ref_id": ref_id, "targets": targets,
            "title": None, "authors": [], "year": None, "venue": None, "raw": None,
            "source": FORMAT, "loc": loc}


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield per line a paper, its outbound references, then the inbound ones pointing to it."""
    for number, obj in json_lines(path, report):
        loc = f"{path.name}:{number}"
        key = paper_key(as_str(obj.get("doi")), "s2", as_str(obj.get("paper_id")))
        if key is None:
            report.problem(path, f"line {number}", "missing required field: 'paper_id' or 'doi'")
            continue
        paper = _paper(path, number, obj, key, loc, report)
        report.count(f"{FORMAT}.papers")
        if paper["abstract"] is None:
            report.count(f"{FORMAT}.papers_without_abstract")
        yield "paper", paper
        for position, cited in enumerate(_id_list(path, number, obj, "outbound_citations",
                                                  report)):
            report.count(f"{FORMAT}.outbound_citations")
            yield "reference", _reference(key, position, cited, [f"s2:{cited}"], loc)
        for citing in _id_list(path, number, obj, "inbound_citations", report):
            report.count(f"{FORMAT}.inbound_citations")
            other = paper_key(None, "s2", citing) or citing
            yield "reference", _reference(other, -1, "inbound", paper["aliases"], loc)


def sniff(head: bytes, path: Path) -> bool:
    """A JSON line with a ``paper_id`` and an S2ORC metadata field (citation lists, s2_url...)."""
    line = head.lstrip()
    return (line.startswith(b"{") and b'"paper_id"' in line
            and any(field in line for field in _SNIFF_FIELDS))


READER = Reader(FORMAT, sniff, read,
                "S2ORC metadata JSONL: Semantic Scholar papers with citation id lists")
