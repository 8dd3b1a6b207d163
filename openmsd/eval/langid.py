"""Accuracy of language identification on data whose language is known.

* TALN (``taln/papers.jsonl``): a paper whose own fields are empty and whose English
  translation is filled is English; every other paper with text is French (the truth the data
  carries). The text is the paper's own title, abstract and keywords, or its English ones.
* SciELO JATS: the language each article declares (``<article xml:lang>``) is the truth, and
  detection runs with that declaration hidden, on title, abstract and keywords.

:func:`accuracy` scores any :class:`openmsd.corpus.langid.LanguageIdentifier` on those rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from openmsd.corpus.langid import LanguageIdentifier, identify, paper_text

__all__ = ["Labelled", "accuracy", "scielo_rows", "taln_rows"]


@dataclass(frozen=True)
class Labelled:
    """A paper's text and title, and its true language."""

    paper_id: str
    text: str
    title: str | None
    language: str


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
    from openmsd.ingest import jats
    from openmsd.ingest.report import Report

    for path in sorted(folder.glob("*.xml*")):
        for kind, record in jats.read(path, Report()):
            declared = record.get("declared_language") if kind == "paper" else None
            text = paper_text(record.get("title"), record.get("abstract"),
                              record.get("keywords")) if declared else ""
            if text:
                yield Labelled(record["key"], text, record.get("title"), declared)


def accuracy(rows: list[Labelled], identifier: LanguageIdentifier | None = None
             ) -> dict[str, object]:
    """Share of ``rows`` identified as their true language (declarations hidden), the
    count, and the errors as ``(paper_id, truth, found)``."""
    found = identify([r.text for r in rows], None, identifier, [r.title for r in rows])
    errors = [(r.paper_id, r.language, language)
              for r, (language, _) in zip(rows, found, strict=True) if language != r.language]
    return {"papers": len(rows), "correct": len(rows) - len(errors),
            "accuracy": round(1 - len(errors) / len(rows), 4) if rows else None,
            "truth": dict(Counter(r.language for r in rows)), "errors": errors}
