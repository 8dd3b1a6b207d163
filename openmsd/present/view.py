"""Search results for a terminal: the results table of ``related`` and ``search``, and the
citation locations of ``recommend`` (Rich renderables; user text escaped, so a title is never
read as markup)."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from openmsd.present.columns import ResultsView, rows_of
from openmsd.present.relevance import percent
from openmsd.search import Result

__all__ = ["context_driver", "driver_position", "recommendations_table", "recommendations_view",
           "relevance_texts", "results_table", "results_view", "shorten"]


def shorten(text: str, width: int = 110) -> str:
    """``text`` on one line, cut at a word with an ellipsis when longer than ``width``.

    >>> shorten("one two three", 9)
    'one two…'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[:width - 1].rsplit(" ", 1)[0] + "…"


def relevance_texts(results: list[Any]) -> list[str]:
    """Each result's relevance as a terminal shows it: the calibrated probability a result
    carries as a percentage, :data:`~openmsd.present.relevance.UNRATED` where it has none
    (:func:`~openmsd.present.relevance.percent`).

    >>> relevance_texts([{"score": 0.4, "relevance": 0.31}, {"score": 0.2}])
    ['31%', '–']
    """
    def field(r: Any, name: str) -> Any:
        return r.get(name) if isinstance(r, dict) else getattr(r, name, None)

    return [percent(field(r, "relevance")) for r in results]


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
    """Rank, relevance (:func:`~openmsd.present.relevance.percent`), paper, language, year,
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


def results_view(results: list[Result]) -> ResultsView | None:
    """Results as a terminal shows them (:class:`~openmsd.present.columns.ResultsView`): titles
    wrapped at words, the identifier on a dim line, why in short words, each result in at
    most three lines; None for no results."""
    if not results:
        return None
    return ResultsView(rows_of(results, relevance_texts(results)))


def driver_position(location: dict[str, Any], result: dict[str, Any]) -> str | None:
    """Where the sentence that points to ``result`` most stands: "this sentence", "sentence
    before" or "sentence after" (None when nothing was explained).

    >>> loc = {"sentence": "B.", "context": ["A.", "B.", "C."]}
    >>> driver_position(loc, {"drivers": [{"sentence": "A."}]})
    'sentence before'
    """
    drivers = result.get("drivers") or []
    if not drivers:
        return None
    sentence, context = drivers[0]["sentence"], location.get("context") or []
    if sentence == location["sentence"]:
        return "this sentence"
    if sentence in context and location["sentence"] in context:
        before = context.index(sentence) < context.index(location["sentence"])
        return "sentence before" if before else "sentence after"
    return "nearby sentence"


def recommendations_view(found: list[dict[str, Any]]) -> Group:
    """Each citation location (its sentence and markers), then its papers as
    :func:`results_view` lays them out, why saying which sentence points to each most and
    how many of the others it is co-cited with."""
    parts: list[Any] = []
    for location in found:
        parts.append(f"\n[bold]sentence {location['sentence_number']}[/] "
                     f"{escape(' '.join(location['markers']))}: {escape(location['sentence'])}")
        results = location["results"]
        rows = []
        for row, r in zip(rows_of([_Found(r) for r in results], relevance_texts(results)),
                          results, strict=True):
            position = driver_position(location, r)
            cocited = r.get("co_cited_with") or []
            row.why = [*([position] if position else []),
                       *([f"co-cited with {len(cocited)}"] if cocited else [])]
            rows.append(row)
        if rows:
            parts.append(ResultsView(rows, why_header="pointed to by"))
        if location.get("cocited_set"):
            parts.append(escape(f"  cite together ({location['cites']} works): "
                                f"{', '.join(location['cocited_set'])}"))
    return Group(*parts)


class _Found:
    """A result dict read as a :class:`Result` is (attributes)."""

    def __init__(self, found: dict[str, Any]) -> None:
        self.__dict__.update(found)


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
