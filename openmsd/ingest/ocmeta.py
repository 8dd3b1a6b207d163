"""OpenCitations Meta: the bibliographic metadata of the works in the OpenCitations Index, as
its CSV dump (``.csv`` or ``.csv.gz``) writes it, one work a row.

The first row is the header; columns are read by name, so both orders OpenCitations uses are
read (the dump's ``id,title,author,issue,volume,venue,page,pub_date,type,publisher,editor`` and
the documented ``id,title,author,pub_date,venue,volume,issue,page,type,publisher,editor``).
``id`` holds space-separated prefixed ids: the work's OMID (``omid:br/06101801781``) and its
DOI, PMID, PMCID, arXiv or OpenAlex ids (``doi:10.7717/peerj-cs.421 openalex:W3135715233``).

Each row becomes one paper record: the key is the DOI when there is one, else the OMID alias;
the aliases are every id (``omid:br/...`` included), which is what lets the OMID-only rows of
the OpenCitations Index dump (:mod:`openmsd.ingest.coci`) resolve to the corpus paper with that
DOI. ``title``; ``author`` (``Surname, Given [orcid:...]; ...``) as ``Given Surname`` names;
``pub_date``'s year; ``venue`` without its bracketed ids; ``type`` (``journal article``...) as
the doc type. Meta has no abstracts or languages. Counts: ``ocmeta.works`` and
``ocmeta.omid_only`` (a work with no DOI, keyed by its OMID).

Example::

    id,title,author,issue,volume,venue,page,pub_date,type,publisher,editor
    omid:br/061 doi:10.1/x,A Title,"Smith, Ann [orcid:0000-0001-2345-6789]",,7,PeerJ,e1,2021,,,
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from openmsd.corpus import Record
from openmsd.identifiers import alias, normalize_doi, omid
from openmsd.ingest.reader import (
    Reader,
    as_str,
    as_year,
    counting,
    csv_rows,
    first_csv_row,
    reading_at,
)
from openmsd.report import Report

FORMAT = "ocmeta"

REQUIRED = ("id", "title", "author", "pub_date", "venue", "type")
"""The columns a Meta header must name (the others are not read)."""
_ID_NAMESPACES = {"pmid": "pmid", "pmcid": "pmcid", "arxiv": "arxiv", "openalex": "openalex"}
_BRACKETS = re.compile(r"\s*\[[^\]]*\]\s*$")


def _header(row: list[str]) -> dict[str, int] | None:
    """Column name -> position when ``row`` is a Meta header, else None."""
    names = [cell.strip().lstrip("\ufeff").lower() for cell in row]
    if not names or names[0] != "id" or not set(REQUIRED) <= set(names):
        return None
    return {name: at for at, name in enumerate(names)}


def id_aliases(cell: str) -> tuple[str | None, list[str]]:
    """The DOI and the aliases of a Meta ``id`` cell: ``'omid:br/06 doi:10.1/X pmid:12'`` ->
    ``('10.1/x', ['doi:10.1/x', 'omid:br/06', 'pmid:12'])``."""
    doi = None
    found: set[str] = set()
    for token in cell.split():
        prefix, _, value = token.partition(":")
        prefix = prefix.lower()
        if prefix == "doi" and doi is None:
            doi = normalize_doi(value)
        elif prefix in ("omid", "meta"):
            found.add(omid(value) or "")
        elif prefix in _ID_NAMESPACES:
            found.add(alias(_ID_NAMESPACES[prefix], value) or "")
    if doi:
        found.add(f"doi:{doi}")
    return doi, sorted(a for a in found if a)


def person(name: str) -> str | None:
    """``'Massari, Arcangelo [orcid:0000-0002-8420-0696]'`` -> ``'Arcangelo Massari'``."""
    name = _BRACKETS.sub("", name).strip()
    surname, comma, given = name.partition(",")
    if comma:
        name = f"{given.strip()} {surname.strip()}".strip()
    return as_str(name)


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one paper record per Meta row; bad rows are reported with their line."""
    with counting(report, ["ocmeta.works", "ocmeta.omid_only"]) as counts:
        yield from _rows(path, report, counts)


def _rows(path: Path, report: Report, counts: dict[str, int]) -> Iterator[Record]:
    columns: dict[str, int] | None = None
    for line, row in csv_rows(path, report):
        where = f"line {line}"
        if columns is None:
            columns = _header(row)
            if columns is None:
                report.problem(path, where, "not an OpenCitations Meta header: expected "
                               f"the columns {', '.join(REQUIRED)} (id first); file skipped")
                return
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            report.problem(path, where, f"wrong number of columns: expected "
                           f"{len(columns)}, got {len(row)}")
            continue
        cell = row[columns["id"]]
        if "\ufffd" in cell:
            report.problem(path, where, "invalid UTF-8: undecodable bytes in the id cell")
            continue
        doi, names = id_aliases(cell)
        key = doi or next((a for a in names if a.startswith("omid:")), None)
        if key is None:
            report.problem(path, where, f"invalid id: {cell.strip()!r} (expected a DOI or "
                           "an OMID such as omid:br/061...)")
            continue
        counts["ocmeta.works"] += 1
        if doi is None:
            counts["ocmeta.omid_only"] += 1
        with reading_at(report, path, where):
            record = _paper(row, columns, key, doi, names)
        yield "paper", record | {"loc": f"{path.name}:{line}"}
    if columns is None:
        report.problem(path, "file", "empty file: no records", kind="warning")


def _paper(row: list[str], columns: dict[str, int], key: str, doi: str | None,
           names: list[str]) -> dict[str, object]:
    """The paper record of one Meta row."""
    def cell(name: str) -> str:
        return row[columns[name]]

    return {
        "key": key, "aliases": names, "doi": doi, "title": as_str(cell("title")),
        "abstract": None, "declared_language": None,
        "year": as_year(cell("pub_date").strip() or None, "pub_date"),
        "venue": as_str(_BRACKETS.sub("", cell("venue"))),
        "authors": [p for p in map(person, cell("author").split(";")) if p],
        "keywords": [], "categories": [], "translations": [], "full_text": None,
        "doc_type": as_str(cell("type")), "source": FORMAT,
    }


def sniff(head: bytes, path: Path) -> bool:
    """The first line is a Meta header (``id`` first, with title, author, pub_date, venue and
    type)."""
    row = first_csv_row(head)
    return row is not None and _header(row) is not None


READER = Reader(FORMAT, sniff, read,
                "OpenCitations Meta CSV: id,title,author,...,pub_date,type (OMIDs with their "
                "DOIs)")
