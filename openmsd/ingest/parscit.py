"""ParsCit XML output: the parsed reference list of one citing paper, with citation contexts.

One file per citing paper, named ``X.parscit.xml`` (or ``X.xml``; gzip allowed) where ``X`` is
the citing paper's id in a generic source without namespace (``taln/papers.jsonl``), so the
citing key is ``paper_key(None, None, X)``. A file named otherwise is read with its stem as the
id, and a warning. ParsCit's header metadata for the citing paper (``ParsHed``/``SectLabel``
``<variant>`` elements) is unreliable and never becomes a paper record: the paper's metadata
comes from its own source; such variants are only counted.

Each ``citation`` of ``algorithm[@name='ParsCit']/citationList`` becomes a ``reference``:
``position`` its 0-based index, ``ref_id`` ``str(position)``, ``title`` (trailing ``.,;:``
cut), ``authors`` (``authors/author``), ``year`` (``date``), ``venue`` (``journal``, else
``booktitle``), ``raw`` (``rawString``) and ``targets`` the DOIs written in the raw string.
Citations ParsCit marks ``valid="false"`` are kept and counted. Each ``contexts/context``
becomes a ``context`` with the citation's ``ref_id``, its text, and ``position`` = the
``@position`` attribute: ParsCit's character offset of the marker in the paper's full text
(-1 when missing). Example (abridged)::

    <algorithms version="110505"><algorithm name="ParsCit" version="110505"><citationList>
      <citation valid="true">
        <authors><author>O Christ</author></authors>
        <title>A Modular and Flexible Architecture for an Integrated Corpus Query System.</title>
        <date>1994</date><booktitle>Proceedings of COMPLEX'94 ...,</booktitle>
        <contexts><context position="3049" citStr="Christ, 1994" startWordPosition="433"
          endWordPosition="434">... par exemple par (Christ, 1994), le ...</context></contexts>
        <marker>Christ, 1994</marker>
        <rawString>Christ, O. (1994). A Modular and Flexible Architecture ...</rawString>
      </citation>
    </citationList></algorithm></algorithms>

The XML is parsed strictly first; a file that is not well-formed (bad bytes in the declared
UTF-8 included) is reported with lxml's line number and parsed again in lxml's recover mode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openmsd.corpus.identifiers import dois_in_text, paper_key
from openmsd.corpus.schema import Record
from openmsd.ingest.reader import Reader, as_year, parse_xml
from openmsd.report import Report

FORMAT = "parscit"

SUFFIXES = (".parscit.xml", ".xml")


def citing_id(path: Path, report: Report) -> str:
    """The citing paper's id from a file name ``X.parscit.xml`` / ``X.xml`` (``.gz`` allowed)."""
    name = path.name.removesuffix(".gz")
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    report.problem(path, "file name",
                   "unexpected file name: expected X.parscit.xml, using the stem as paper id",
                   kind="warning")
    return Path(name).stem


def _text(element: Any) -> str | None:
    """The element's text with whitespace collapsed, None when empty or absent."""
    if element is None:
        return None
    return " ".join("".join(element.itertext()).split()) or None


def _clean(value: str | None) -> str | None:
    """Cut the punctuation ParsCit leaves at the end of fields: ``'Langues,'`` -> ``'Langues'``."""
    if value is None:
        return None
    return value.rstrip(" .,;:") or None


def _reference(citation: Any, citing: str, position: int, loc: str) -> dict[str, Any]:
    raw = _text(citation.find("rawString"))
    return {
        "citing": citing,
        "position": position,
        "ref_id": str(position),
        "targets": [f"doi:{doi}" for doi in dois_in_text(raw)],
        "title": _clean(_text(citation.find("title"))),
        "authors": [a for a in (_text(x) for x in citation.iterfind("authors/author")) if a],
        "year": as_year(_text(citation.find("date"))),
        "venue": _clean(_text(citation.find("journal")) or _text(citation.find("booktitle"))),
        "raw": raw,
        "source": FORMAT,
        "loc": loc,
    }


def _position(context: Any, path: Path, report: Report) -> int:
    value = context.get("position")
    if value is not None and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    report.problem(path, f"line {context.sourceline}",
                   f"context without position: position={value!r}, using -1", kind="warning")
    return -1


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield the references and citation contexts of one ParsCit file (no paper record)."""
    root = parse_xml(path, report, recover=True)
    if root is None:
        return
    citing = paper_key(None, None, citing_id(path, report))
    if citing is None:  # an empty stem: nothing can be attached to it
        report.problem(path, "file name", "missing required field: citing paper id")
        return
    variants = root.xpath("//algorithm[@name!='ParsCit']//variant")
    if variants:
        report.count("parscit.header_variants_ignored", len(variants))
    lists = root.xpath("//algorithm[@name='ParsCit']/citationList")
    if not lists:
        report.problem(path, f"line {root.sourceline}",
                       "not ParsCit output: no algorithm[@name='ParsCit']/citationList")
        return
    citations = [c for group in lists for c in group.iterfind("citation")]
    report.count("parscit.files")
    if not citations:
        report.count("parscit.files_without_citations")
    for position, citation in enumerate(citations):
        reference = _reference(citation, citing, position, f"{path.name}:{citation.sourceline}")
        report.count("parscit.references")
        if citation.get("valid") == "false":
            report.count("parscit.references_invalid")
        if reference["targets"]:
            report.count("parscit.references_with_doi")
        if not reference["title"]:
            report.count("parscit.references_without_title")
        yield "reference", reference
        for context in citation.iterfind("contexts/context"):
            report.count("parscit.contexts")
            yield "context", {
                "citing": citing, "ref_id": reference["ref_id"], "text": _text(context),
                "position": _position(context, path, report), "source": FORMAT,
                "loc": f"{path.name}:{context.sourceline}",
            }


def sniff(head: bytes, path: Path) -> bool:
    """An ``<algorithms>`` document with a ParsCit algorithm or a ``<citationList>``."""
    return b"<algorithms" in head and (b'name="ParsCit"' in head or b"<citationList" in head)


READER = Reader(FORMAT, sniff, read, "ParsCit XML: references and contexts of one citing paper")
