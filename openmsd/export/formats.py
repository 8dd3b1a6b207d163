"""Exports of paper records (as :func:`openmsd.search.papers.papers_by_id` gives them) that
reference managers read: BibTeX (bibtexparser), RIS (rispy), CSL-JSON (citeproc-py).

>>> paper = {"paper_id": "taln-2009-long-004", "title": "L'analyse {syntaxique}",
...          "authors": ["Anne Abeillé", "Murphy Fd"], "year": 2009, "venue": "TALN",
...          "doi": None}
>>> print(bibtex([paper]))
@article{abeille2009analyse,
 author = {Abeillé, Anne and Murphy, Fd},
 journal = {TALN},
 note = {openmsd:taln-2009-long-004},
 title = {L'analyse syntaxique},
 year = {2009}
}
<BLANKLINE>
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bibtexparser
import orjson
import rispy
from bibtexparser.bibdatabase import BibDatabase
from bibtexparser.bwriter import BibTexWriter
from citeproc.source.json import CiteProcJSON

from openmsd.export.names import ascii_word, clean, key_suffix, split_name
from openmsd.io import atomic_path

__all__ = ["EXPORTS", "Export", "bibtex", "csl_items", "csl_json", "export", "ris"]

_STOP = {"a", "an", "the", "on", "of", "for", "in", "and", "la", "le", "les", "l", "de", "des",
         "du", "un", "une", "el", "los", "las", "o", "os", "der", "die", "das", "d"}


def _braced(value: Any) -> str:
    """A value safe inside BibTeX ``{...}``: no braces, backslashes or control characters."""
    return clean(re.sub(r"[{}\\]", "", str(value)))


def _key(paper: dict[str, Any]) -> str:
    """``family`` of the first author + year + first significant title word."""
    authors = paper.get("authors") or []
    family = ascii_word(split_name(authors[0])[0]) if authors else ""
    words = [ascii_word(w) for w in re.split(r"[\s'’]+", clean(paper.get("title") or ""))]
    word = next((w for w in words if w and w not in _STOP), "")
    return (f"{family or 'anon'}{paper.get('year') or ''}{word}"
            or ascii_word(paper["paper_id"]) or "paper")


def _bib_entry(paper: dict[str, Any]) -> dict[str, str]:
    authors = [", ".join(p for p in split_name(a) if p) for a in paper.get("authors") or []]
    fields = {"title": paper.get("title"), "author": " and ".join(authors) or None,
              "year": str(paper["year"]) if paper.get("year") else None,
              "journal": paper.get("venue"), "doi": paper.get("doi"),
              "abstract": paper.get("abstract"), "language": paper.get("language"),
              "note": f"openmsd:{paper['paper_id']}"}
    return {name: _braced(value) for name, value in fields.items() if value}


def bibtex(papers: list[dict[str, Any]], abstracts: bool = False) -> str:
    """BibTeX ``@article`` entries (fields in name order, written by bibtexparser), keys made
    unique with ``a``, ``b``, ... ``aa`` suffixes, in the papers' (ranked) order."""
    database = BibDatabase()
    seen: dict[str, int] = {}
    for paper in papers:
        entry = _bib_entry(paper)
        if not abstracts:
            entry.pop("abstract", None)
            entry.pop("language", None)
        key = _key(paper)
        count = seen.get(key, 0)
        seen[key] = count + 1
        database.entries.append({"ENTRYTYPE": "article",
                                 "ID": key + (key_suffix(count - 1) if count else ""), **entry})
    writer = BibTexWriter()  # fields in name order
    writer.indent = " "
    writer.order_entries_by = None  # keep the papers in their ranked order
    return bibtexparser.dumps(database, writer) if database.entries else ""


class _RisWriter(rispy.RisWriter):
    """rispy's writer without its ``1.`` line before each record: a record starts at TY."""

    def set_header(self, count: int) -> str:
        return ""


def ris(papers: list[dict[str, Any]]) -> str:
    """RIS references (``TY  - JOUR`` ... ``ER  -``), written by rispy."""
    entries = []
    for paper in papers:
        entry: dict[str, Any] = {"type_of_reference": "JOUR", "id": clean(paper["paper_id"])}
        authors = [", ".join(p for p in split_name(a) if p) for a in paper.get("authors") or []]
        for name, value in (("title", paper.get("title")), ("authors", authors),
                            ("year", str(paper["year"]) if paper.get("year") else None),
                            ("journal_name", paper.get("venue")), ("doi", paper.get("doi")),
                            ("abstract", paper.get("abstract")),
                            ("language", paper.get("language"))):
            if value:
                entry[name] = [clean(a) for a in value] if isinstance(value, list) \
                    else clean(str(value))
        entries.append(entry)
    return rispy.dumps(entries, implementation=_RisWriter) if entries else ""


def csl_items(papers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CSL-JSON items of paper records."""
    items = []
    for paper in papers:
        item: dict[str, Any] = {"id": clean(paper["paper_id"]), "type": "article-journal"}
        authors = []
        for name in paper.get("authors") or []:
            family, given = split_name(name)
            authors.append({"family": family, "given": given} if given else {"literal": family})
        for name, value in (("title", paper.get("title")), ("author", authors or None),
                            ("container-title", paper.get("venue")), ("DOI", paper.get("doi")),
                            ("abstract", paper.get("abstract")),
                            ("language", paper.get("language"))):
            if value:
                item[name] = value if isinstance(value, list) else clean(str(value))
        if paper.get("year"):
            item["issued"] = {"date-parts": [[int(paper["year"])]]}
        items.append(item)
    return items


def csl_json(papers: list[dict[str, Any]]) -> str:
    """CSL-JSON (the citation-style language's data format), checked by citeproc-py's
    reader."""
    items = csl_items(papers)
    CiteProcJSON(items)  # raises on an item citeproc-py cannot read
    return orjson.dumps(items, option=orjson.OPT_INDENT_2).decode() + "\n"


Export = tuple[Callable[[list[dict[str, Any]]], str], str, str]
EXPORTS: dict[str, Export] = {
    "bib": (bibtex, "application/x-bibtex", "openmsd.bib"),
    "ris": (ris, "application/x-research-info-systems", "openmsd.ris"),
    "csl": (csl_json, "application/vnd.citationstyles.csl+json", "openmsd.json"),
}


def export(papers: list[dict[str, Any]], fmt: str) -> str:
    """``papers`` in format ``fmt`` (``bib``, ``ris`` or ``csl``)."""
    if fmt not in EXPORTS:
        raise ValueError(f"export format {fmt!r}: expected one of {', '.join(EXPORTS)}")
    return EXPORTS[fmt][0](papers)


def save(papers: list[dict[str, Any]], fmt: str, path: Path) -> None:
    """Write ``papers`` in format ``fmt`` to ``path`` atomically (a temporary file, then a
    rename: never half written)."""
    text = export(papers, fmt)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
