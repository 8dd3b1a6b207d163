"""OpenCitations COCI citations: CSV (``.csv`` or ``.csv.gz``), one DOI-to-DOI citation a row.

Columns, by position: ``oci,citing,cited,creation,timespan,journal_sc,author_sc``. The first row
is skipped only when it is exactly that header (or the newer Index header, which names the
first column ``id``). ``citing`` and ``cited`` are bare DOIs in COCI; in the newer OpenCitations
Index shape they hold space-separated prefixed ids (``omid:br/061... doi:10.1/x pmid:123``), of
which the ``doi:`` one is used (and a ``pmid:`` one is kept as an extra target).

Each row becomes one reference record: ``citing`` is the citing DOI (the paper key), ``targets``
``["doi:<cited>"]``, ``ref_id`` the oci (without an ``oci:`` prefix), ``position`` the 0-based
data row. Self-citations are counted (``coci.journal_self_citations``,
``coci.author_self_citations``).

Example::

    oci,citing,cited,creation,timespan,journal_sc,author_sc
    06101801781-06180334099,10.7717/peerj-cs.421,10.1108/jd-12-2013-0166,2021-03-10,P6Y0M1D,no,no
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from openmsd.corpus.identifiers import alias, normalize_doi
from openmsd.corpus.schema import Record
from openmsd.ingest.reader import Reader, text_stream
from openmsd.report import Report

FORMAT = "coci"

COLUMNS = ["oci", "citing", "cited", "creation", "timespan", "journal_sc", "author_sc"]
HEADERS = (COLUMNS, ["id", *COLUMNS[1:]])
_OCI = re.compile(r"^(?:oci:)?\d+-\d+$")


def _ids(cell: str) -> dict[str, str]:
    """``'omid:br/06 doi:10.1/x'`` -> ``{'omid': 'br/06', 'doi': '10.1/x'}``; a bare DOI -> doi."""
    cell = cell.strip()
    if " " not in cell and not cell.startswith(("omid:", "doi:", "pmid:", "pmcid:")):
        return {"doi": cell}
    out: dict[str, str] = {}
    for token in cell.split():
        prefix, _, value = token.partition(":")
        if value and prefix not in out:
            out[prefix] = value
    return out


def cell_doi(cell: str) -> str | None:
    """The normalised DOI of a citing/cited cell (bare DOI or prefixed ids), or None."""
    return normalize_doi(_ids(cell).get("doi"))


def _is_header(row: list[str]) -> bool:
    cells = [c.strip().lstrip("\ufeff").lower() for c in row]
    return cells in HEADERS


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield one reference record per citation row; bad rows are reported with their line."""
    counts = {"coci.citations": 0, "coci.journal_self_citations": 0,
              "coci.author_self_citations": 0}
    try:
        yield from _rows(path, report, counts)
    finally:
        for name, number in counts.items():
            report.count(name, number)


def _rows(path: Path, report: Report, counts: dict[str, int]) -> Iterator[Record]:
    with text_stream(path) as stream:
        rows = csv.reader(stream)
        data_row = -1
        first = True
        while True:
            try:
                row = next(rows)
            except StopIteration:
                break
            except csv.Error as error:
                report.problem(path, f"line {rows.line_num}", f"unreadable CSV: {error}")
                first = False
                data_row += 1
                continue
            except (OSError, EOFError) as error:
                report.problem(path, f"after line {rows.line_num}",
                               f"unreadable compressed data: {error}")
                first = False
                break
            where = f"line {rows.line_num}"
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
                report.problem(path, where, "invalid UTF-8: undecodable bytes in a DOI cell")
                continue
            citing = cell_doi(citing_cell)
            cited_ids = _ids(cited_cell)
            cited = normalize_doi(cited_ids.get("doi"))
            if citing is None or cited is None:
                side, cell = ("citing", citing_cell) if citing is None else ("cited", cited_cell)
                report.problem(path, where, f"invalid DOI: {side} {cell.strip()!r}")
                continue
            targets = ["doi:" + cited]
            if "pmid" in cited_ids:
                pmid = alias("pmid", cited_ids["pmid"])
                if pmid:
                    targets.append(pmid)
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
                "targets": targets, "source": FORMAT, "loc": f"{path.name}:{rows.line_num}",
            }
    if first:
        report.problem(path, "file", "empty file: no records", kind="warning")


def sniff(head: bytes, path: Path) -> bool:
    """The first line is the COCI header, or a row ``oci,DOI,DOI,...`` of seven cells."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    line = text.split("\n", 1)[0].rstrip("\r")
    try:
        row = next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return False
    if _is_header(row):
        return True
    return (len(row) == len(COLUMNS) and _OCI.match(row[0].strip()) is not None
            and cell_doi(row[1]) is not None and cell_doi(row[2]) is not None)


READER = Reader(FORMAT, sniff, read,
                "OpenCitations COCI CSV: oci,citing,cited,creation,timespan,journal_sc,author_sc")
