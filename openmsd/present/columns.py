"""Results laid out for the width of a terminal: titles wrapped at word boundaries (never cut
inside a word), the paper's identifier on a dim line under its title, the reasons in short
words, each result in at most :data:`LINES` lines.

:class:`ResultsView` is a Rich renderable that measures the console when it is printed, so the
same results read at 80, 100 or 120 columns. In a pipe the commands print the full table
instead (:func:`openmsd.present.view.results_table`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.table import Table

__all__ = ["LINES", "ResultsView", "Row", "fit", "short_reason", "wrap_words"]

LINES = 3
"""The most lines one result takes."""
ELLIPSIS = "…"
WHY_WIDTH = 16
"""The widest the "why" column gets; its reasons are a few words each."""

_SHORT = [
    (re.compile(r"^similar text \(adapter .*\)$"), "citation-trained"),
    (re.compile(r"^similar title and abstract$"), "similar text"),
    (re.compile(r"^shared English words$"), "English words"),
    (re.compile(r"^(\d+) shared references?\b.*$"), r"\1 shared refs"),
    (re.compile(r"^cited by the query paper$"), "cited by query"),
    (re.compile(r"^cites the query paper$"), "cites query"),
    (re.compile(r"^co-cited (\d+) times?$"), r"co-cited \1×"),
    (re.compile(r"^near (\d+) of (\d+) seeds\b.*$"), r"near \1 of \2 seeds"),
]


def short_reason(reason: str) -> str:
    """A reason a result was found, in the few words a narrow column holds.

    >>> short_reason("3 shared references, 2 outside the corpus")
    '3 shared refs'
    >>> short_reason("co-cited 2 times"), short_reason("similar text")
    ('co-cited 2×', 'similar text')
    >>> short_reason("near 2 of 3 seeds: a, b")
    'near 2 of 3 seeds'
    """
    for pattern, short in _SHORT:
        if pattern.match(reason):
            return pattern.sub(short, reason)
    return reason


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken between words only (a word wider
    than ``width`` gets a line of its own).

    >>> wrap_words("Contribution to the flora of Brazil", 16)
    ['Contribution to', 'the flora of', 'Brazil']
    """
    lines: list[str] = []
    line = ""
    for word in text.split():
        joined = f"{line} {word}" if line else word
        if line and cell_len(joined) > width:
            lines.append(line)
            line = word
        else:
            line = joined
    return [*lines, line] if line else lines


def _cut(word: str, width: int) -> str:
    """A word wider than ``width`` cut to fit, with an ellipsis."""
    while word and cell_len(word) + 1 > width:
        word = word[:-1]
    return word + ELLIPSIS


def fit(text: str, width: int, lines: int) -> list[str]:
    """``text`` wrapped at words into at most ``lines`` lines of ``width`` cells; when it is
    longer, the last line ends in an ellipsis after its last whole word.

    >>> fit("Orchids of the cerrado of central Brazil", 16, 2)
    ['Orchids of the', 'cerrado of…']
    >>> fit("Orchids", 16, 2)
    ['Orchids']
    """
    width = max(width, 2)
    wrapped = [line if cell_len(line) <= width else _cut(line, width)
               for line in wrap_words(text, width)]
    if len(wrapped) <= lines:
        return wrapped
    kept = wrapped[:lines]
    last = kept[-1].rstrip(ELLIPSIS)
    while " " in last and cell_len(last) + 1 > width:
        last = last.rsplit(" ", 1)[0]
    kept[-1] = last + ELLIPSIS if cell_len(last) + 1 <= width else _cut(last, width)
    return kept


@dataclass
class Row:
    """One result as a terminal shows it: its rank, relevance (already a string), language,
    year, title, English title (when the title is in another language), identifier and
    reasons."""

    rank: int
    relevance: str
    language: str
    year: str
    title: str
    english_title: str | None
    paper_id: str
    why: list[str] = field(default_factory=list)


def _title_lines(row: Row, width: int) -> list[str]:
    """The title cell: the title (two lines, or one above a dim English title), then the
    identifier dim, in at most :data:`LINES` lines, as markup."""
    if row.english_title:
        shown = [escape(line) for line in fit(row.title, width, LINES - 2)]
        shown += [f"[dim italic]{escape(line)}[/]"
                  for line in fit(row.english_title, width, LINES - 1 - len(shown))]
    else:
        shown = [escape(line) for line in fit(row.title, width, LINES - 1)]
    identifier = row.paper_id if cell_len(row.paper_id) <= width else _cut(row.paper_id, width)
    return [*shown, f"[dim]{escape(identifier)}[/]"]


def _why_lines(reasons: Sequence[str], width: int) -> list[str]:
    """The why cell: one short reason a line, at most :data:`LINES` lines."""
    shown: list[str] = []
    for reason in reasons:
        for line in wrap_words(reason, width):
            shown.append(line if cell_len(line) <= width else _cut(line, width))
    if len(shown) > LINES:
        shown = [*shown[:LINES - 1], f"+{len(shown) - LINES + 1} more"]
    return [escape(line) for line in shown]


class ResultsView:
    """Results as a borderless table fitted to the console's width when printed: rank,
    relevance, language, year, title (with identifier) and why."""

    def __init__(self, rows: Iterable[Row], why_header: str = "why") -> None:
        self.rows = list(rows)
        self.why_header = why_header

    def table(self, width: int) -> Table:
        """The table for a console ``width`` cells wide."""
        wide = width >= 100
        headers = ["#", "relevance" if wide else "rel.", "lang", "year"]
        fixed = [max([cell_len(h), *(cell_len(c) for c in cells)]) for h, cells in zip(
            headers, ([str(r.rank) for r in self.rows], [r.relevance for r in self.rows],
                      [r.language for r in self.rows], [r.year for r in self.rows]),
            strict=True)]
        reasons = [[short_reason(w) for w in r.why] for r in self.rows]
        longest = max([cell_len(self.why_header), *(cell_len(w) for ws in reasons for w in ws)])
        why_width = min(WHY_WIDTH + (4 if wide else 0), longest)
        # one space between columns, none at the edges
        title_width = max(20, width - sum(fixed) - why_width - len(headers) - 1)
        table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False,
                      collapse_padding=True, header_style="bold")
        for header, size in zip(headers, fixed, strict=True):
            table.add_column(header, width=size, no_wrap=True,
                             justify="right" if header in ("#", "relevance", "rel.") else "left")
        table.add_column("title", width=title_width, no_wrap=True)
        table.add_column(self.why_header, width=why_width, no_wrap=True)
        for row, why in zip(self.rows, reasons, strict=True):
            table.add_row(str(row.rank), escape(row.relevance), escape(row.language),
                          escape(row.year), "\n".join(_title_lines(row, title_width)),
                          "\n".join(_why_lines(why, why_width)))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)


def rows_of(results: Sequence[Any], relevance: Sequence[str]) -> list[Row]:
    """:class:`Row` s of results (objects with ``paper_id``, ``title``, ``english_title``,
    ``language``, ``year`` and ``why``) and their relevance strings."""
    rows = []
    for rank, (r, shown) in enumerate(zip(results, relevance, strict=True), 1):
        title = r.title or r.english_title or ""
        english = r.english_title if r.english_title and r.english_title != title else None
        rows.append(Row(rank, shown, r.language or "?", str(r.year or ""), title, english,
                        r.paper_id, list(r.why)))
    return rows
