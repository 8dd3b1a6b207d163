"""OpenCitations citations: the OpenCitations Index CSV dump (v2) and the retired COCI dump
(v1), ``.csv`` or ``.csv.gz``, one citation a row.

Columns, by position: ``oci,citing,cited,creation,timespan,journal_sc,author_sc``. The first row
is skipped only when it is exactly that header (or the same header naming the first column
``id``). How ``citing`` and ``cited`` are written depends on the release:

* the Index dump: the OMID of each side (``omid:br/06101801781``);
* the Index REST API (v2) and its CSV: space-separated prefixed ids, the OMID first
  (``omid:br/06101801781 doi:10.7717/peerj-cs.421 pmid:33817056``);
* COCI: a bare DOI.

Each row becomes one reference record: ``citing`` is the citing DOI (the paper key) when the
cell gives one, else its OMID alias (``omid:br/061...``); ``targets`` are the cited side's
aliases, DOI first (``doi:...``, ``pmid:...``, ``omid:br/...``); ``ref_id`` the oci (without an
``oci:`` prefix); ``position`` the 0-based data row. An OMID joins a corpus paper that carries
it: OpenCitations Meta's dump (:mod:`openmsd.ingest.ocmeta`) gives each OMID its DOI, so
ingesting the Meta files of the cited works beside the Index dump resolves OMID-only rows.
Counts: ``coci.citations``, ``coci.omid_only`` (a side with no DOI), and the self-citations
(``coci.journal_self_citations``, ``coci.author_self_citations``).

Example (Index dump, then COCI)::

    oci,citing,cited,creation,timespan,journal_sc,author_sc
    06101801781-06180334099,omid:br/06101801781,omid:br/06180334099,2021-03-10,P6Y0M1D,no,no
    06101801781-06180334099,10.7717/peerj-cs.421,10.1108/jd-12-2013-0166,2021-03-10,P6Y0M1D,no,no
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from openmsd.corpus import Record
from openmsd.identifiers import alias, normalize_doi, omid
from openmsd.ingest.reader import Reader, counting, csv_rows, first_csv_row
from openmsd.report import Report

FORMAT = "coci"

COLUMNS = ["oci", "citing", "cited", "creation", "timespan", "journal_sc", "author_sc"]
HEADERS = (COLUMNS, ["id", *COLUMNS[1:]])
_OCI = re.compile(r"^(?:oci:)?\d+-\d+$")


_PREFIXES = ("omid:", "meta:", "doi:", "pmid:", "pmcid:")


def _ids(cell: str) -> dict[str, str]:
    """``'omid:br/06 doi:10.1/x'`` -> ``{'omid': 'br/06', 'doi': '10.1/x'}``; a bare DOI -> doi."""
    cell = cell.strip()
    if " " not in cell and not cell.startswith(_PREFIXES) and omid(cell) is None:
        return {"doi": cell}
    out: dict[str, str] = {}
    for token in cell.split():
        prefix, _, value = token.partition(":")
        if omid(token):  # omid:br/..., Meta API v1's meta:br/..., or the OMID's URL
            prefix, value = "omid", token
        if value and prefix not in out:
            out[prefix] = value
    return out


def cell_doi(cell: str) -> str | None:
    """The normalised DOI of a citing/cited cell (bare DOI or prefixed ids), or None."""
    return normalize_doi(_ids(cell).get("doi"))


def cell_aliases(cell: str) -> list[str]:
    """The aliases a citing/cited cell names, DOI first, then PMID, PMCID and OMID:
    ``'omid:br/06 doi:10.1/X'`` -> ``['doi:10.1/x', 'omid:br/06']``; ``[]`` when it names
    neither a valid DOI nor an OMID."""
    ids = _ids(cell)
    found = [alias("doi", ids.get("doi")), alias("pmid", ids.get("pmid")),
             alias("pmcid", ids.get("pmcid")), omid(ids.get("omid"))]
    if found[0] is None and found[3] is None:
        return []
    return [a for a in found if a]


def _is_header(row: list[str]) -> bool:
    cells = [c.strip().lstrip("\ufeff").lower() for c in row]
    return cells in HEADERS


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one reference record per citation row; bad rows are reported with their line."""
    with counting(report, ["coci.citations", "coci.omid_only", "coci.journal_self_citations",
                           "coci.author_self_citations"]) as counts:
        yield from _rows(path, report, counts)


def _rows(path: Path, report: Report, counts: dict[str, int]) -> Iterator[Record]:
    first, data_row = True, -1
    for line, row in csv_rows(path, report):
        where = f"line {line}"
        if first:
            first = False
            if row:
                row[0] = row[0].lstrip("\ufeff")
            if _is_header(row):
                continue
        if not row or not any(cell.strip() for cell in row):
            continue
        data_row += 1
        if len(row) != len(COLUMNS):
            report.problem(path, where, f"wrong number of columns: expected "
                           f"{len(COLUMNS)}, got {len(row)}")
            continue
        oci, citing_cell, cited_cell, _, _, journal_sc, author_sc = row
        if "\ufffd" in citing_cell or "\ufffd" in cited_cell:
            report.problem(path, where, "invalid UTF-8: undecodable bytes in an id cell")
            continue
        citing_aliases = cell_aliases(citing_cell)
        targets = cell_aliases(cited_cell)
        if not citing_aliases or not targets:
            side, cell = (("citing", citing_cell) if not citing_aliases
                          else ("cited", cited_cell))
            report.problem(path, where, f"invalid id: {side} {cell.strip()!r} (expected a "
                           "DOI or an OMID such as omid:br/061...)")
            continue
        lead = citing_aliases[0]
        citing = lead[4:] if lead.startswith("doi:") else lead
        if not lead.startswith("doi:") or not targets[0].startswith("doi:"):
            counts["coci.omid_only"] += 1
        oci = oci.strip()
        counts["coci.citations"] += 1
        if journal_sc.strip() == "yes":
            counts["coci.journal_self_citations"] += 1
        if author_sc.strip() == "yes":
            counts["coci.author_self_citations"] += 1
        # Lean records (absent keys are null): a COCI dump has billions of rows.
        yield "reference", {
            "citing": citing, "position": data_row,
            "ref_id": oci[4:] if oci.startswith("oci:") else (oci or None),
            "targets": targets, "source": FORMAT, "loc": f"{path.name}:{line}",
        }
    if first:
        report.problem(path, "file", "empty file: no records", kind="warning")


def sniff(head: bytes, path: Path) -> bool:
    """The first line is the citations header, or a row ``oci,ID,ID,...`` of seven cells (an
    ID: a DOI, or prefixed ids with a DOI or an OMID)."""
    row = first_csv_row(head)
    if row is None:
        return False
    if _is_header(row):
        return True
    return (len(row) == len(COLUMNS) and _OCI.match(row[0].strip()) is not None
            and bool(cell_aliases(row[1])) and bool(cell_aliases(row[2])))


READER = Reader(FORMAT, sniff, read,
                "OpenCitations Index CSV (v2 dump, API, or COCI v1): oci,citing,cited,creation,"
                "timespan,journal_sc,author_sc")
