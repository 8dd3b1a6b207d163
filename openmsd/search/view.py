"""Search results for a terminal: the results table of ``related`` and ``search``, and the
citation locations of ``recommend`` (Rich renderables; user text escaped, so a title is never
read as markup)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from openmsd.search.related import Result

__all__ = ["recommendations_view", "results_table", "shorten"]


def shorten(text: str, width: int = 110) -> str:
    """``text`` on one line, cut at a word with an ellipsis when longer than ``width``.

    >>> shorten("one two three", 9)
    'one two…'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[:width - 1].rsplit(" ", 1)[0] + "…"


def results_table(results: list[Result]) -> Table | None:
    """Score, paper, language, year, title (with its English title when it has another
    language) and why related, one row a result; None for no results."""
    if not results:
        return None
    table = Table()
    for column in ("score", "paper", "lang", "year"):
        table.add_column(column, no_wrap=True)
    table.add_column("title", overflow="fold", ratio=3)
    table.add_column("why related", overflow="fold", ratio=1)
    for r in results:
        title = r.title or r.english_title or ""
        if r.english_title and r.english_title != title:
            title += f"\n[dim]{r.english_title}[/]"
        table.add_row(f"{r.score:.3f}", r.paper_id, r.language or "?", str(r.year or ""), title,
                      "; ".join(r.why))
    return table


def recommendations_view(found: list[dict[str, Any]]) -> Group:
    """Each citation location (its sentence and markers), then its papers: score, id,
    language, year, title, the sentence that points to it most and what it is co-cited with."""
    lines: list[str] = []
    for location in found:
        lines.append(f"[bold]sentence {location['sentence_number']}[/] "
                     f"{escape(' '.join(location['markers']))}: {escape(location['sentence'])}")
        for r in location["results"]:
            title = r["title"] or r["english_title"] or ""
            lines.append(escape(f"  {r['score']:.3f}  {r['paper_id']}  [{r['language'] or '?'}] "
                                f"{r['year'] or ''}  {title}"))
            if r.get("drivers"):
                lines.append(f"[dim]         ← {escape(shorten(r['drivers'][0]['sentence']))}[/]")
            if r.get("co_cited_with"):
                lines.append(f"[dim]         co-cited with "
                             f"{escape(', '.join(r['co_cited_with'][:3]))} in the corpus[/]")
        if location.get("cocited_set"):
            lines.append(escape(f"  cite together ({location['cites']} works): "
                                f"{', '.join(location['cocited_set'])}"))
    return Group(*lines)
