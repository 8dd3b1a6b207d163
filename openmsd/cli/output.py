"""What every command prints through: the two consoles, errors, progress bars and the one
"table or JSON" helper (:func:`emit`)."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import orjson
import typer
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

__all__ = ["SafeConsole", "emit", "err", "fail", "out", "plain", "progress"]

# control characters, and the bidirectional-text controls (U+200E/F, U+202A-E, U+2066-9)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """``text`` without control characters (an escape sequence in a title must not reach the
    terminal); newlines and tabs are kept.

    >>> plain("a\\x1b[2Jb\\tc")
    'a[2Jb\\tc'
    """
    return _CONTROL.sub("", text)


class SafeConsole(Console):
    """A console that strips control characters from every string it renders (printed
    strings, table cells, lines of a group)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(plain(text), **kwargs)


out = SafeConsole(emoji=False)
err = SafeConsole(stderr=True, emoji=False)


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def emit(data: Any, as_json: bool,
         view: Callable[[Any], RenderableType | None] | None = None, *,
         indent: bool = True) -> None:
    """Print ``data``: with ``as_json`` as JSON on stdout (indented unless ``indent`` is
    False), else ``view(data)`` (a table, a line, a group of them) on the console."""
    if as_json:
        option = orjson.OPT_INDENT_2 if indent else 0
        sys.stdout.write(orjson.dumps(data, option=option).decode() + "\n")
        return
    shown = view(data) if view is not None else None
    if shown is not None:
        out.print(shown, highlight=False)


@contextlib.contextmanager
def progress() -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
    """Progress bars on stderr: ``start(label, total)`` gives ``advance(n)``."""
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed:,} records"), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True) as bars:
        def start(label: str, total: int | None) -> Callable[[int], None]:
            task = bars.add_task(label, total=total)
            return lambda n: bars.advance(task, n)
        yield start
