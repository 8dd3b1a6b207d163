"""Search results for a terminal: the results table of ``related`` and ``search``, and the
citation locations of ``recommend`` (Rich renderables; user text escaped, so a title is never
read as markup)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from openmsd.search.related import Result
from openmsd.search.relevance import percent

__all__ = ["context_driver", "recommendations_table", "recommendations_view",
           "results_table", "shorten"]


def shorten(text: str, width: int = 110) -> str:
    """``text`` on one line, cut at a word with an ellipsis when longer than ``width``.

    >>> shorten("one two three", 9)
    'one two…'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[:width - 1].rsplit(" ", 1)[0] + "…"


def context_driver(location: dict[str, Any], result: dict[str, Any]) -> str | None:
    """The sentence that points to ``result`` most, when it is a sentence around the
    location rather than the location's own sentence (printed just above it); else None.

    >>> loc = {"sentence": "A [1]."}
    >>> context_driver(loc, {"drivers": [{"sentence": "A [1]."}]}) is None
    True
    >>> context_driver(loc, {"drivers": [{"sentence": "Before."}]})
    'Before.'
    """
    drivers = result.get("drivers") or []
    if not drivers or drivers[0]["sentence"] == location["sentence"]:
        return None
    return drivers[0]["sentence"]


def results_table(results: list[Result]) -> Table | None:
    """Rank, relevance (:func:`~openmsd.search.relevance.percent`), paper, language, year,
    title (with its English title when it has another language) and why related, one row a
    result; None for no results."""
    if not results:
        return None
    table = Table()
    for column in ("rank", "relevance", "paper", "lang", "year"):
        table.add_column(column, no_wrap=True, justify="right" if column == "rank" else "left")
    table.add_column("title", overflow="fold", ratio=3)
    table.add_column("why related", overflow="fold", ratio=1)
    for rank, r in enumerate(results, 1):
        title = escape(r.title or r.english_title or "")
        if r.english_title and r.english_title != (r.title or r.english_title):
            title += f"\n[dim]{escape(r.english_title)}[/]"
        table.add_row(str(rank), percent(r.relevance), escape(r.paper_id), r.language or "?",
                      str(r.year or ""), title, escape("; ".join(r.why)))
    return table


def recommendations_view(found: list[dict[str, Any]]) -> Group:
    """Each citation location (its sentence and markers), then its papers: rank, relevance,
    id, language, year, title, the sentence
    that points to it most and what it is co-cited with."""
    lines: list[str] = []
    for location in found:
        lines.append(f"[bold]sentence {location['sentence_number']}[/] "
                     f"{escape(' '.join(location['markers']))}: {escape(location['sentence'])}")
        for rank, r in enumerate(location["results"], 1):
            title = r["title"] or r["english_title"] or ""
            lines.append(escape(f"  {rank}. {percent(r.get('relevance')):>4}  {r['paper_id']}  "
                                f"[{r['language'] or '?'}] {r['year'] or ''}  {title}"))
            driver = context_driver(location, r)
            if driver:
                lines.append(f"[dim]         ← {escape(shorten(driver))}[/]")
            if r.get("co_cited_with"):
                lines.append(f"[dim]         co-cited with "
                             f"{escape(', '.join(r['co_cited_with'][:3]))} in the corpus[/]")
        if location.get("cocited_set"):
            lines.append(escape(f"  cite together ({location['cites']} works): "
                                f"{', '.join(location['cocited_set'])}"))
    return Group(*lines)


def recommendations_table(found: list[dict[str, Any]]) -> Table | None:
    """The papers of every citation location, one row a paper: the location's sentence
    number and markers, rank, relevance, id, language, year, title and the sentence that
    points to it most (what ``recommend`` prints in a pipe); None for no results."""
    if not any(location["results"] for location in found):
        return None
    table = Table()
    for column in ("sentence", "markers", "rank", "relevance", "paper", "lang", "year", "title",
                   "because of"):
        table.add_column(column)
    for location in found:
        for rank, r in enumerate(location["results"], 1):
            drivers = r.get("drivers") or []
            table.add_row(str(location["sentence_number"]), escape(" ".join(location["markers"])),
                          str(rank), percent(r.get("relevance")), escape(r["paper_id"]),
                          r["language"] or "?", str(r["year"] or ""),
                          escape(r["title"] or r["english_title"] or ""),
                          escape(drivers[0]["sentence"]) if drivers else "")
    return table
