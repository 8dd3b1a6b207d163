"""Crossref works: a JSON document (``.json`` or ``.json.gz``) holding a list of work items.

Two shapes are accepted: a public data file, ``{"items": [work, ...]}`` (about 5,000 works a
file), and a REST API answer, ``{"status": "ok", "message": {"items": [work, ...]}}`` (or
``{"message": work}`` for a single work). Each file is one JSON document and is parsed whole.

The fields read from each work (Crossref REST API work message): ``DOI``, ``title[0]``,
``abstract`` (a JATS XML snippet whose tags are stripped), ``language``, ``issued`` /
``published-print`` / ``published-online`` ``date-parts``, ``container-title[0]``,
``author[]`` (``given`` + ``family``, or ``name``), ``subject[]`` as categories and
``reference[]`` (``key``, ``DOI``, ``article-title`` / ``volume-title``, ``author``, ``year``,
``journal-title``, ``unstructured``), one reference record each.

Example (shortened)::

    {"items": [{"DOI": "10.1590/s0102-311x2013000100002", "title": ["Saúde e ambiente"],
                "abstract": "<jats:p>Este artigo ...</jats:p>", "language": "pt",
                "issued": {"date-parts": [[2013, 1]]}, "container-title": ["Cad. Saúde Pública"],
                "author": [{"given": "Ana", "family": "Silva", "sequence": "first"}],
                "subject": ["Public Health"],
                "reference": [{"key": "ref1", "DOI": "10.1016/j.envres.2010.01.001"},
                              {"key": "ref2", "unstructured": "Souza J. Título. 2001."}]}]}
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from lxml import etree

from openmsd.corpus import Record
from openmsd.identifiers import alias, aliases, normalize_doi, paper_key
from openmsd.ingest.reader import Reader, as_str, as_str_list, as_year, read_document
from openmsd.report import Report

FORMAT = "crossref"

JATS_NS = "http://www.ncbi.nlm.nih.gov/JATS1"
_WRAP_OPEN = (
    f'<abstract xmlns:jats="{JATS_NS}" xmlns:mml="http://www.w3.org/1998/Math/MathML" '
    'xmlns:xlink="http://www.w3.org/1999/xlink">'
).encode()
_WRAP_CLOSE = b"</abstract>"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
_BLOCKS = {"p", "title", "sec", "list-item", "label", "caption", "disp-formula", "list"}
_HEADINGS = {"abstract", "summary", "resumo", "resumen", "résumé", "resume", "zusammenfassung",
             "riassunto", "abstrakt", "аннотация"}
_TAG = re.compile(r"<[/!?]?[A-Za-z][^<>]*>")
_TYPES: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("author", list, "a list"), ("subject", list, "a list"), ("reference", list, "a list"),
    ("title", (list, str), "a list"), ("container-title", (list, str), "a list"),
    ("abstract", str, "a string"), ("language", str, "a string"),
)
_DATE_FIELDS = ("issued", "published-print", "published-online", "published")


def _local(element: etree._Element) -> str:
    tag = element.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _drop_heading(root: etree._Element) -> None:
    """Clear a leading ``<jats:title>Abstract</jats:title>`` (also inside a leading ``sec``)."""
    node = root
    while len(node) and not (node.text or "").strip():
        child = node[0]
        name = _local(child)
        if name == "title":
            heading = "".join(child.itertext()).strip(" \t\n:.").casefold()
            if heading in _HEADINGS:
                child.clear(keep_tail=True)
            return
        if name != "sec":
            return
        node = child


def strip_jats(abstract: str) -> tuple[str | None, str | None]:
    """``(plain text, None)`` of a Crossref JATS abstract, whitespace collapsed (text None when
    empty); ``(regex-stripped text, XML error)`` when the abstract is not well-formed XML.
    """
    try:
        root = etree.fromstring(_WRAP_OPEN + abstract.encode() + _WRAP_CLOSE, _PARSER)
    except etree.XMLSyntaxError as error:
        text = " ".join(html.unescape(_TAG.sub(" ", abstract)).split())
        line, column = error.position
        if line == 1:
            column -= len(_WRAP_OPEN)
        message = error.msg.rsplit(", line ", 1)[0]
        return text or None, f"{message} (abstract line {line}, column {column})"
    _drop_heading(root)
    for element in root.iter():
        if _local(element) in _BLOCKS:
            element.tail = " " + (element.tail or "")
    text = " ".join("".join(root.itertext()).split())
    return text or None, None


def author_names(contributors: Any) -> list[str]:
    """``[{given, family}]`` or ``[{name}]`` contributor objects -> ``["Given Family", ...]``."""
    if not isinstance(contributors, list):
        return []
    out = []
    for person in contributors:
        if not isinstance(person, dict):
            continue
        parts = [as_str(person.get("given"), "given"), as_str(person.get("family"), "family")]
        name = " ".join(p for p in parts if p) or as_str(person.get("name"), "name")
        if name:
            out.append(name)
    return out


def _year(item: dict[str, Any]) -> int | None:
    for field in _DATE_FIELDS:
        date = item.get(field)
        parts = date.get("date-parts") if isinstance(date, dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            year = as_year(parts[0][0])
            if year is not None:
                return year
    return None


def _first(value: Any) -> str | None:
    values = as_str_list(value)
    return values[0] if values else None


def _plain(text: str | None) -> str | None:
    """A title without the inline markup Crossref titles may carry (``<i>``, ``<sub>``)."""
    return strip_jats(text)[0] if text and "<" in text else text


def _reference(citing: str, position: int, ref: dict[str, Any], loc: str) -> dict[str, Any]:
    target = alias("doi", as_str(ref.get("DOI")))
    author = as_str(ref.get("author"), "author")
    return {
        "citing": citing, "position": position,
        "ref_id": as_str(ref.get("key")) or str(position),
        "targets": [target] if target else [],
        "title": _plain(as_str(ref.get("article-title"), "article-title")
                        or as_str(ref.get("volume-title"), "volume-title")),
        "authors": [author] if author else [], "year": as_year(ref.get("year"), "year"),
        "venue": (as_str(ref.get("journal-title"), "journal-title")
                  or as_str(ref.get("series-title"), "series-title")),
        "raw": as_str(ref.get("unstructured"), "unstructured"), "source": FORMAT, "loc": loc,
    }


def _load(path: Path, report: Report) -> tuple[bool, Any]:
    """``(True, document)`` for a parsed file; ``(False, None)`` after reporting why not."""
    data = read_document(path, report, "unreadable compressed data")
    if data is None:
        return False, None
    if not data.strip():
        report.problem(path, "file", "empty file: no records", kind="warning")
        return False, None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        report.problem(path, f"line {line}",
                       f"invalid UTF-8: byte {error.start}, replaced", kind="warning")
        data = data.decode("utf-8", errors="replace").encode()
    try:
        return True, orjson.loads(data)
    except orjson.JSONDecodeError as error:
        report.problem(path, f"line {error.lineno} column {error.colno}",
                       f"malformed JSON: {error.msg} (char {error.pos})")
        return False, None


def _items(path: Path, document: Any, report: Report) -> list[Any] | None:
    if not isinstance(document, dict):
        report.problem(path, "file", f"expected a JSON object, got {type(document).__name__}")
        return None
    message = document.get("message")
    if "items" not in document and isinstance(message, dict):
        if "items" not in message and "DOI" in message:
            return [message]
        document = message
    items = document.get("items")
    if items is None:
        report.problem(path, "file", "missing required field: 'items'")
        return None
    if not isinstance(items, list):
        report.problem(path, "file",
                       f"wrong field type: 'items' expected a list, got {type(items).__name__}")
        return None
    return items


def _paper(item: dict[str, Any], key: str, loc: str, warnings: list[str]) -> dict[str, Any]:
    abstract = as_str(item.get("abstract"), "abstract")
    if abstract:
        abstract, error = strip_jats(abstract)
        if error:
            warnings.append(f"abstract is not well-formed XML: {error}")
    for field, types, expected in _TYPES:
        value = item.get(field)
        if value is not None and not isinstance(value, types):
            warnings.append(f"wrong field type: {field!r} expected {expected}, "
                            f"got {type(value).__name__}")
    doi = as_str(item.get("DOI"))
    return {
        "key": key, "aliases": aliases(doi, {}), "doi": normalize_doi(doi),
        "title": _plain(_first(item.get("title"))), "abstract": abstract,
        "declared_language": as_str(item.get("language"), "language"), "year": _year(item),
        "venue": _first(item.get("container-title")),
        "authors": author_names(item.get("author")), "keywords": [],
        "categories": as_str_list(item.get("subject"), "subject"), "translations": [],
        "full_text": None, "type": as_str(item.get("type"), "type"),
        "source": FORMAT, "loc": loc,
    }


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield each work's paper and its references, in item order."""
    loaded, document = _load(path, report)
    items = _items(path, document, report) if loaded else None
    if items is None:
        return
    for index, item in enumerate(items):
        where = f"items[{index}]"
        loc = f"{path.name}:{where}"
        if not isinstance(item, dict):
            report.problem(path, where, f"expected a JSON object, got {type(item).__name__}")
            continue
        doi = as_str(item.get("DOI"))
        key = paper_key(doi, None, None)
        if key is None:
            reason = (f"invalid DOI: {doi!r}" if doi else "missing required field: 'DOI'")
            report.problem(path, where, reason)
            continue
        warnings: list[str] = []
        paper = _paper(item, key, loc, warnings)
        for warning in warnings:
            report.problem(path, where, warning, kind="warning")
        yield "paper", paper
        references = item.get("reference")
        if not isinstance(references, list):
            continue
        for position, ref in enumerate(references):
            if not isinstance(ref, dict):
                report.problem(path, f"{where}.reference[{position}]",
                               f"expected a JSON object, got {type(ref).__name__}",
                               kind="warning")
                continue
            reference = _reference(key, position, ref, loc)
            if not reference["targets"]:
                report.count("crossref.references_without_doi")
                if not (reference["title"] or reference["raw"] or reference["authors"]):
                    report.problem(path, f"{where}.reference[{position}]",
                                   "empty reference: no DOI, title, author or unstructured "
                                   "text", kind="warning")
                    continue
            report.count("crossref.references")
            yield "reference", reference


_MARKERS = (b'"DOI"', b'"reference-count"', b'"container-title"', b'"message-type"',
            b'"date-parts"', b'"is-referenced-by-count"')


def sniff(head: bytes, path: Path) -> bool:
    """A JSON object opening with ``items`` or ``message`` and carrying Crossref's field names."""
    start = head.lstrip()
    if not start.startswith(b"{"):
        return False
    opening = start[:256]
    if b'"items"' not in opening and b'"message"' not in opening:
        return False
    return sum(marker in start for marker in _MARKERS) >= 2


READER = Reader(FORMAT, sniff, read,
                "Crossref works JSON ({items: [...]} public data file or REST message), "
                "JATS abstracts, reference lists")
