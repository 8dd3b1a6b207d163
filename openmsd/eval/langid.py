"""Accuracy of language identification on data whose language is known.

* TALN (``taln/papers.jsonl``): a paper whose own fields are empty and whose English
  translation is filled is English; every other paper with text is French (the truth the data
  carries). The text is the paper's own title, abstract and keywords, or its English ones.
* SciELO JATS: the language each article declares (``<article xml:lang>``) is the truth, and
  detection runs with that declaration hidden, on title, abstract and keywords.
* SciELO monolingual (BioC XML, Neves et al., LREC 2016): Spanish and Portuguese titles, some
  with abstracts, each passage labelled with its language; the group of a paper is its journal,
  the ISSN inside its SciELO PID (``S0034-77442006000200023`` → ``0034-7744``).

:func:`accuracy` scores any :class:`openmsd.corpus.langid.LanguageIdentifier` on those rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
from lxml import etree

from openmsd.corpus import LanguageIdentifier, identify, paper_text
from openmsd.ingest import get_reader
from openmsd.report import Report

__all__ = ["Labelled", "accuracy", "bioc_rows", "scielo_rows", "taln_rows"]


@dataclass(frozen=True)
class Labelled:
    """A paper's text and title, and its true language."""

    paper_id: str
    text: str
    title: str | None
    language: str
    group: str | None = None


def taln_rows(papers: Path) -> Iterator[Labelled]:
    """TALN papers with text: French, or English when only the English fields are filled."""
    for line in papers.read_bytes().splitlines():
        paper = orjson.loads(line)
        own = paper_text(paper.get("title"), paper.get("abstract"), paper.get("keywords"))
        if own:
            yield Labelled(paper["id"], own, paper.get("title"), "fr")
            continue
        english = (paper.get("translations") or {}).get("en") or {}
        text = paper_text(english.get("title"), english.get("abstract"), english.get("keywords"))
        if text:
            yield Labelled(paper["id"], text, english.get("title"), "en")


def scielo_rows(folder: Path) -> Iterator[Labelled]:
    """SciELO JATS articles that declare their language, read by openmsd's JATS reader."""
    for path in sorted(folder.glob("*.xml*")):
        for kind, record in get_reader("jats").read(path, Report()):
            declared = record.get("declared_language") if kind == "paper" else None
            text = paper_text(record.get("title"), record.get("abstract"),
                              record.get("keywords")) if declared else ""
            if text:
                yield Labelled(record["key"], text, record.get("title"), declared,
                               record.get("venue"))


def bioc_rows(path: Path) -> Iterator[Labelled]:
    """The documents of a BioC collection whose passages all carry one ``language`` infon,
    their title and abstract passages joined."""
    for _, document in etree.iterparse(str(path), tag="document"):
        paper_id = document.findtext("id") or ""
        parts: dict[str, list[str]] = {}
        languages = set()
        for passage in document.iter("passage"):
            infons = {i.get("key"): (i.text or "") for i in passage.findall("infon")}
            languages.add(infons.get("language", "").lower())
            parts.setdefault(infons.get("section", ""), []).append(
                " ".join(s.findtext("text") or "" for s in passage.iter("sentence")))
        document.clear()
        title = " ".join(parts.get("title", [])).strip() or None
        text = paper_text(title, " ".join(parts.get("abstract", [])))
        if text and len(languages) == 1 and "" not in languages:
            group = paper_id[1:10] if paper_id.startswith("S") and len(paper_id) > 10 else None
            yield Labelled(paper_id, text, title, languages.pop(), group)


def accuracy(rows: list[Labelled], identifier: LanguageIdentifier | None = None,
             groups: bool = True) -> dict[str, object]:
    """Share of ``rows`` identified as their true language (declarations hidden), the
    count, and the errors as ``(paper_id, truth, found)``; with ``groups``, each row's group
    is passed to :func:`identify` for its group prior."""
    found = identify([r.text for r in rows], None, identifier, [r.title for r in rows],
                     [r.group for r in rows] if groups else None)
    errors = [(r.paper_id, r.language, language)
              for r, (language, _) in zip(rows, found, strict=True) if language != r.language]
    return {"papers": len(rows), "correct": len(rows) - len(errors),
            "accuracy": round(1 - len(errors) / len(rows), 4) if rows else None,
            "truth": dict(Counter(r.language for r in rows)), "errors": errors}
