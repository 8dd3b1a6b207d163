"""Unpaywall snapshot: JSON Lines of Unpaywall records (``.jsonl[.gz]``), one DOI a line.

The fields read (Unpaywall data format): ``doi`` (required: the paper's key), ``title``,
``year`` (else ``published_date``), ``journal_name`` as venue, ``z_authors`` (Crossref
contributor objects: ``given`` + ``family``, or ``name``). Unpaywall has no abstracts, languages
or references, so only paper records come out; ``is_oa`` and ``oa_status`` are counted in the
report (``unpaywall.open_access``, ``unpaywall.oa_status.<status>``).

Example line (shortened)::

    {"doi": "10.7717/peerj.4375", "doi_url": "https://doi.org/10.7717/peerj.4375",
     "title": "The state of OA", "genre": "journal-article", "year": 2018,
     "published_date": "2018-02-13", "journal_name": "PeerJ", "is_oa": true,
     "oa_status": "gold", "best_oa_location": {"url": "https://peerj.com/articles/4375.pdf",
     "host_type": "publisher", "license": "cc-by", "version": "publishedVersion"},
     "z_authors": [{"given": "Heather", "family": "Piwowar", "sequence": "first"}]}
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from openmsd.corpus import Record
from openmsd.identifiers import aliases, normalize_doi
from openmsd.ingest.crossref import author_names
from openmsd.ingest.reader import Reader, as_str, as_year, json_lines
from openmsd.report import Report

FORMAT = "unpaywall"


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one paper record per Unpaywall line; lines without a valid DOI are reported."""
    for number, obj in json_lines(path, report):
        where = f"line {number}"
        raw_doi = obj.get("doi")
        doi = normalize_doi(raw_doi) if isinstance(raw_doi, str) else None
        if doi is None:
            reason = (f"invalid DOI: {raw_doi!r}" if raw_doi not in (None, "")
                      else "missing required field: 'doi'")
            report.problem(path, where, reason)
            continue
        authors = obj.get("z_authors")
        if authors is not None and not isinstance(authors, list):
            report.problem(path, where, "wrong field type: 'z_authors' expected a list, "
                           f"got {type(authors).__name__}", kind="warning")
        for field in ("title", "journal_name"):
            value = obj.get(field)
            if value is not None and not isinstance(value, str):
                report.problem(path, where, f"wrong field type: {field!r} expected a string, "
                               f"got {type(value).__name__}", kind="warning")
        if obj.get("is_oa") is True:
            report.count("unpaywall.open_access")
        status = as_str(obj.get("oa_status"), "oa_status")
        if status:
            report.count(f"unpaywall.oa_status.{status}")
        yield "paper", {
            "key": doi, "aliases": aliases(doi, {}), "doi": doi,
            "title": as_str(obj.get("title")), "abstract": None, "declared_language": None,
            "year": (as_year(obj.get("year"), "year")
                     or as_year(obj.get("published_date"), "published_date")),
            "venue": as_str(obj.get("journal_name")), "authors": author_names(authors),
            "keywords": [], "categories": [], "translations": [], "full_text": None,
            "doc_type": as_str(obj.get("genre"), "genre"), "source": FORMAT,
            "loc": f"{path.name}:{number}",
        }


_MARKERS = (b'"oa_status"', b'"is_oa"', b'"z_authors"', b'"best_oa_location"',
            b'"oa_locations"', b'"journal_is_oa"')


def sniff(head: bytes, path: Path) -> bool:
    """JSON lines whose first object has ``doi`` and two Unpaywall fields, and is no OpenAlex
    work (those carry ``is_oa`` and ``best_oa_location`` too)."""
    start = head.lstrip()
    if not start.startswith(b"{"):
        return False
    line = start.split(b"\n", 1)[0]
    if b'"doi"' not in line or b"https://openalex.org/" in line:  # OpenAlex works have is_oa
        return False
    return sum(marker in line for marker in _MARKERS) >= 2


READER = Reader(FORMAT, sniff, read,
                "Unpaywall snapshot: JSON Lines of DOI records (title, year, journal, authors, "
                "open-access status)")
