"""The unarXive format: one arXiv paper a line, full text with citation markers resolved to links.

unarXive (Saier, Krause & Färber, 2023) keeps the S2ORC layout: ``paper_id`` (the arXiv id),
``metadata`` (the arXiv metadata record: ``title``, ``authors``, ``authors_parsed``,
``abstract``, ``doi``, ``journal-ref``, ``categories``, ``versions``), ``abstract``
(``{text, cite_spans, ref_spans}``), ``body_text`` (paragraphs ``{section, text, cite_spans,
ref_spans}``), ``bib_entries`` (bibliography hash -> ``{bib_entry_raw, contained_arXiv_ids,
ids: {open_alex_id, doi, arxiv_id, pubmed_id, pmc_id}}``) and ``ref_entries`` (formulas, figures,
tables). Paragraph text carries markers ``{{cite:<bib hash>}}``, ``{{formula:<uuid>}}``,
``{{figure:<uuid>}}`` and ``{{table:<uuid>}}``.

Mapping: a paper record keyed on the DOI or ``arxiv:<paper_id>``; one reference per
bibliography entry (in the entries' order, ``ref_id`` = the hash, targets from its linked ids,
``raw`` = the reference string); one context per ``cite_span`` of the body text. In the full text
and in context texts every marker is replaced by ``[CITE]``, ``[FORMULA]``, ``[FIGURE]`` or
``[TABLE]`` and runs of whitespace by one space; a context's ``position`` is the offset of its
``[CITE]`` in its (cleaned) paragraph. Authors come from ``authors_parsed`` (``[last, first,
suffix]``, accents already decoded) or else from the ``authors`` string split on commas and
"and".

Example line (shortened)::

    {"paper_id": "2212.11867", "_source_hash": "1b58...", "metadata": {"id": "2212.11867",
     "title": "Zeros of a growing number ...", "authors": "Marcus Michelen, Xuan-Truong Vu",
     "doi": null, "journal-ref": null, "categories": "math.PR math.CA math.CV",
     "versions": [{"version": "v1", "created": "Thu, 22 Dec 2022 17:01:56 GMT"}],
     "authors_parsed": [["Michelen", "Marcus", ""], ["Vu", "Xuan-Truong", ""]]},
     "abstract": {"text": "Let $X_1,X_2,\\ldots$ be ..."},
     "body_text": [{"section": "Introduction", "text": "Pemantle and Rivin
       {{cite:b9a0eb...}} conjectured ...", "cite_spans": [{"start": 19, "end": 68,
       "text": "{{cite:b9a0eb...}}", "ref_id": "b9a0eb..."}]}],
     "bib_entries": {"b9a0eb...": {"bib_entry_raw": "R. Pemantle and I. Rivin. ...",
       "contained_arXiv_ids": [{"id": "1109.5975"}], "ids": {"open_alex_id":
       "https://openalex.org/W1", "doi": "", "arxiv_id": "1109.5975", "pubmed_id": ""}}}}
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from openmsd.corpus.identifiers import alias, aliases, normalize_doi, paper_key
from openmsd.corpus.schema import Record
from openmsd.ingest.reader import Reader, as_str, as_str_list, as_year, json_lines
from openmsd.report import Report

FORMAT = "unarxive"

_MARKER_OR_SPACE = re.compile(r"\{\{(\w+):[^{}]*\}\}|\s+")
_AUTHOR_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")
_NEW_ARXIV_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}")
_OLD_ARXIV_ID = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?/(\d{2})(\d{2})\d{3}")
# ``ids`` keys of a bibliography entry -> alias namespaces.
_BIB_IDS = {"doi": "doi", "open_alex_id": "openalex", "arxiv_id": "arxiv", "pubmed_id": "pmid",
            "pmc_id": "pmcid"}


def clean_text(text: str) -> tuple[str, dict[int, int]]:
    """Replace ``{{kind:id}}`` markers by ``[KIND]`` and whitespace runs by one space, stripped.

    Returns the clean text and, for every marker, its start offset in ``text`` -> its start
    offset in the clean text.
    """
    parts: list[str] = []
    offsets: dict[int, int] = {}
    length = last = 0
    for match in _MARKER_OR_SPACE.finditer(text):
        chunk = text[last:match.start()]
        parts.append(chunk)
        length += len(chunk)
        if match.group(1):
            offsets[match.start()] = length
            replacement = f"[{match.group(1).upper()}]"
        else:
            replacement = " "
        parts.append(replacement)
        length += len(replacement)
        last = match.end()
    parts.append(text[last:])
    joined = "".join(parts)
    lead = len(joined) - len(joined.lstrip())
    return joined.strip(), {start: at - lead for start, at in offsets.items()}


def _collapse(value: Any) -> str | None:
    """A string with whitespace runs collapsed to one space, or None."""
    text = as_str(value)
    return " ".join(text.split()) if text else None


def arxiv_year(arxiv_id: str | None) -> int | None:
    """The submission year in an arXiv id: ``2212.11867`` -> 2022, ``math/0610659`` -> 2006."""
    if not arxiv_id:
        return None
    match = _NEW_ARXIV_ID.match(arxiv_id) or _OLD_ARXIV_ID.match(arxiv_id)
    if not match:
        return None
    year = int(match.group(1))
    return 1900 + year if year >= 91 else 2000 + year


def _version_year(versions: Any) -> int | None:
    """The year of the first version's RFC 2822 ``created`` date."""
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], dict):
        return None
    created = as_str(versions[0].get("created"))
    if not created:
        return None
    try:
        return as_year(parsedate_to_datetime(created).year)
    except (TypeError, ValueError):
        return None


def _authors(metadata: dict[str, Any]) -> list[str]:
    """``Given Family Suffix`` names from ``authors_parsed``, else split from ``authors``."""
    parsed = metadata.get("authors_parsed")
    if isinstance(parsed, list) and parsed and all(isinstance(a, list) for a in parsed):
        names = []
        for parts in parsed:
            family, given, suffix = ([as_str(p) or "" for p in parts[:3]] + ["", "", ""])[:3]
            name = " ".join(p for p in (given, family, suffix) if p)
            if name:
                names.append(name)
        return names
    text = _collapse(metadata.get("authors"))
    return [a for a in _AUTHOR_SEPARATOR.split(text) if a] if text else []


def _categories(value: Any) -> list[str]:
    """arXiv categories from their space-separated string (``"math.PR math.CA"``) or a list."""
    return value.split() if isinstance(value, str) else as_str_list(value)


def _paper(obj: dict[str, Any], metadata: dict[str, Any], key: str, loc: str,
           full_text: str | None) -> dict[str, Any]:
    """The paper record of one unarXive line."""
    arxiv_id = as_str(obj.get("paper_id")) or as_str(metadata.get("id"))
    doi = as_str(metadata.get("doi"))
    abstract = obj.get("abstract")
    abstract_text = abstract.get("text") if isinstance(abstract, dict) else None
    return {
        "key": key, "aliases": aliases(doi, {"arxiv": arxiv_id}), "doi": normalize_doi(doi),
        "title": _collapse(metadata.get("title")),
        "abstract": _collapse(abstract_text) or _collapse(metadata.get("abstract")),
        "declared_language": None,
        "year": _version_year(metadata.get("versions")) or arxiv_year(arxiv_id),
        "venue": _collapse(metadata.get("journal-ref")), "authors": _authors(metadata),
        "keywords": [], "categories": _categories(metadata.get("categories")),
        "translations": [], "full_text": full_text, "source": FORMAT, "loc": loc,
    }


def _targets(entry: dict[str, Any]) -> list[str]:
    """The aliases of the paper a bibliography entry was linked to."""
    ids = entry.get("ids") if isinstance(entry.get("ids"), dict) else {}
    found = [alias(namespace, as_str(ids.get(field))) for field, namespace in _BIB_IDS.items()]
    contained = entry.get("contained_arXiv_ids")
    for item in contained if isinstance(contained, list) else []:
        value = item.get("id") if isinstance(item, dict) else item
        found.append(alias("arxiv", as_str(value)))
    return list(dict.fromkeys(t for t in found if t))


def _references(path: Path, number: int, citing: str, bib: dict[str, Any], loc: str,
                report: Report) -> Iterator[Record]:
    """One reference record per bibliography entry, in the entries' order."""
    for position, (ref_id, entry) in enumerate(bib.items()):
        if not isinstance(entry, dict):
            report.problem(path, f"line {number}", f"bib entry not an object: {ref_id}",
                           kind="warning")
            entry = {}
        targets = _targets(entry)
        ids = entry.get("ids")
        doi = as_str(ids.get("doi")) if isinstance(ids, dict) else None
        if doi and not normalize_doi(doi):
            report.problem(path, f"line {number}", f"invalid DOI in bib entry {ref_id}: {doi}",
                           kind="warning")
        report.count(f"{FORMAT}.references")
        report.count(f"{FORMAT}.references_linked" if targets else
                     f"{FORMAT}.references_unlinked")
        yield "reference", {
            "citing": citing, "position": position, "ref_id": ref_id, "targets": targets,
            "title": None, "authors": [], "year": None, "venue": None,
            "raw": _collapse(entry.get("bib_entry_raw")), "source": FORMAT, "loc": loc,
        }


def _contexts(path: Path, number: int, citing: str, body: list[Any], bib: dict[str, Any],
              loc: str, report: Report, texts: list[str]) -> Iterator[Record]:
    """One context per cite span of the body text; the clean paragraph texts go to ``texts``."""
    for index, paragraph in enumerate(body):
        where = f"line {number}, body_text[{index}]"
        text = paragraph.get("text") if isinstance(paragraph, dict) else None
        if not isinstance(text, str):
            report.problem(path, where, "paragraph without text", kind="warning")
            continue
        clean, offsets = clean_text(text)
        if clean:
            texts.append(clean)
        spans = paragraph.get("cite_spans") or []
        if not isinstance(spans, list):
            report.problem(path, where, "field 'cite_spans': expected a list", kind="warning")
            continue
        for span in spans:
            ref_id = as_str(span.get("ref_id"), "ref_id") if isinstance(span, dict) else None
            if ref_id is None:
                report.problem(path, where, f"cite span without ref_id: {span!r:.80}",
                               kind="warning")
                continue
            if ref_id not in bib:
                report.problem(path, where, f"cite span without bib entry: {ref_id}",
                               kind="warning")
                report.count(f"{FORMAT}.contexts_without_bib_entry")
            start = span.get("start")
            position = offsets.get(start, -1) if isinstance(start, int) else -1
            if position < 0:
                marker = as_str(span.get("text"), "text")
                found = text.find(marker) if marker else -1
                position = offsets.get(found, -1)
            if position < 0:
                report.count(f"{FORMAT}.contexts_without_position")
            report.count(f"{FORMAT}.contexts")
            yield "context", {"citing": citing, "ref_id": ref_id, "text": clean,
                              "position": position, "source": FORMAT, "loc": loc}


def read(path: Path, report: Report) -> Iterator[Record]:
    """Yield per line a paper, then its references, then its citation contexts."""
    for number, obj in json_lines(path, report):
        loc = f"{path.name}:{number}"
        metadata = obj.get("metadata")
        if not isinstance(metadata, dict):
            if metadata is not None:
                report.problem(path, f"line {number}", "field 'metadata': expected an object",
                               kind="warning")
            metadata = {}
        arxiv_id = as_str(obj.get("paper_id")) or as_str(metadata.get("id"))
        key = paper_key(as_str(metadata.get("doi")), "arxiv", arxiv_id)
        if key is None:
            report.problem(path, f"line {number}",
                           "missing required field: 'paper_id' or 'metadata.doi'")
            continue
        bib = obj.get("bib_entries")
        if not isinstance(bib, dict):
            if bib is not None:
                report.problem(path, f"line {number}",
                               "field 'bib_entries': expected an object", kind="warning")
            bib = {}
        body = obj.get("body_text")
        if not isinstance(body, list):
            if body is not None:
                report.problem(path, f"line {number}", "field 'body_text': expected a list",
                               kind="warning")
            body = []
        # Contexts are collected first: the full text is built from the same clean paragraphs.
        texts: list[str] = []
        contexts = list(_contexts(path, number, key, body, bib, loc, report, texts))
        report.count(f"{FORMAT}.papers")
        yield "paper", _paper(obj, metadata, key, loc, "\n\n".join(texts) or None)
        yield from _references(path, number, key, bib, loc, report)
        yield from contexts


def sniff(head: bytes, path: Path) -> bool:
    """A JSON line with unarXive's top-level ``paper_id`` and ``_source_hash``/``_source_name``."""
    return (head.lstrip().startswith(b"{") and b'"paper_id"' in head
            and (b'"_source_hash"' in head or b'"_source_name"' in head))


READER = Reader(FORMAT, sniff, read,
                "unarXive JSONL: arXiv full text with citation markers and linked references")
