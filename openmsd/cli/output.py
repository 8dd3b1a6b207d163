"""What every command prints through: the two consoles, errors, progress bars and the one
"table or JSON" function (:func:`emit`).

On a terminal, tables and text keep Rich's layout. In a pipe or a file (:func:`piped`),
nothing is wrapped at a width: a line of text stays one line, and a table becomes
tab-separated values (:func:`tsv_lines`): its title as a ``# title`` line, a header line, then
one line per row, a cell of several lines joined with `` / ``."""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NoReturn

import orjson
import typer
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

__all__ = [
    "HEARTBEAT",
    "SafeConsole",
    "build_notice",
    "emit",
    "emit_each",
    "err",
    "fail",
    "flat",
    "json_text",
    "out",
    "piped",
    "plain",
    "progress",
    "say_left_out",
    "tsv_lines",
    "warn",
]

# control characters, and the bidirectional-text controls (U+061C, U+200E/F, U+202A-E, U+2066-9)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_text(data: Any, option: int = 0) -> str:
    """``data`` as JSON text, bidirectional-text controls written as ``\\uXXXX`` escapes (the
    same JSON value, but nothing reordered on a terminal).

    >>> json_text({"t": "a\u202eb"})
    '{"t":"a\\\\u202eb"}'
    """
    text = orjson.dumps(data, default=str, option=option).decode()
    return _BIDI.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def plain(text: str) -> str:
    """``text`` without control characters (an escape sequence in a title must not reach the
    terminal); newlines and tabs are kept.

    >>> plain("a\\x1b[2Jb\\tc")
    'a[2Jb\\tc'
    """
    return _CONTROL.sub("", text)


def _cell(value: Any) -> str:
    """A table cell as one line of plain text: markup dropped, its lines joined with `` / ``,
    tabs made spaces."""
    if isinstance(value, Text):
        text = value.plain
    elif isinstance(value, str):
        text = Text.from_markup(value).plain
    else:
        text = "" if value is None else str(value)
    return flat(text)


def flat(text: str) -> str:
    """``text`` as one line of plain text: its lines joined with `` / ``, tabs made spaces."""
    lines = (" ".join(line.split()) for line in plain(text).splitlines())
    return " / ".join(line for line in lines if line)


def tsv_lines(table: Table) -> list[str]:
    """``table`` as tab-separated lines: ``# title`` (when it has one), the header, one line
    per row, ``# caption`` (when it has one).

    >>> from openmsd.corpus import query_view
    >>> tsv_lines(query_view(["n", "title"], [{"n": 1, "title": "Florestas\\nForests"},
    ...                                        {"n": 2, "title": "[b]x\\ty", "z": 0}]))
    ['n\\ttitle', '1\\tFlorestas / Forests', '2\\t[b]x y']
    """
    lines = [f"# {_cell(table.title)}"] if table.title else []
    if table.show_header:
        lines.append("\t".join(_cell(column.header) for column in table.columns))
    cells = [list(column.cells) for column in table.columns]
    for row in range(table.row_count):
        lines.append("\t".join(_cell(column[row]) if row < len(column) else ""
                               for column in cells))
    if table.caption:
        lines.append(f"# {_cell(table.caption)}")
    return lines


class _Lines(str):
    """Lines of text to write as they are (Rich would expand their tabs)."""


def _unwrapped(shown: Any) -> list[Any]:
    """What to print in a pipe for ``shown``: a table as its TSV lines, a group item by item
    (a blank line after each table but the last), anything else as it is."""
    if isinstance(shown, Table):
        return [_Lines("\n".join(tsv_lines(shown)))]
    if isinstance(shown, Group):
        parts: list[Any] = []
        for item in shown.renderables:
            if parts and isinstance(parts[-1], _Lines):
                parts.append(_Lines(""))
            parts.extend(_unwrapped(item))
        return parts
    return [shown]


class SafeConsole(Console):
    """A console that strips control characters from every string it renders (printed
    strings, table cells, lines of a group), and that wraps nothing when it writes to a pipe
    or a file: text stays on its lines, tables become TSV (:func:`tsv_lines`)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(plain(text), **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """Rich's ``print``; in a pipe or a file, soft-wrapped, tables as TSV lines."""
        if self.is_terminal or not any(isinstance(o, Table | Group) for o in objects):
            if not self.is_terminal:
                kwargs["soft_wrap"] = True
            super().print(*objects, **kwargs)
            return
        for part in (part for item in objects for part in _unwrapped(item)):
            if isinstance(part, _Lines):
                self.file.write(part + "\n")
            else:
                super().print(part, **{**kwargs, "soft_wrap": True})
        self.file.flush()


out = SafeConsole(emoji=False)
err = SafeConsole(stderr=True, emoji=False)


def piped() -> bool:
    """Whether standard output goes to a pipe or a file rather than a terminal."""
    return not out.is_terminal


def warn(message: str) -> None:
    """Print ``warning: message`` on stderr (one line; the command goes on)."""
    err.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with status 2."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def say_left_out(left_out: Mapping[str, int]) -> None:
    """Say on stderr how many records that are not papers were left out, by kind, and how to
    include them (nothing when none was)."""
    from openmsd.rank import left_out_line  # lazy: rank loads numpy (openmsd --help time)

    line = left_out_line(left_out)
    if line:
        err.print(f"[dim]note[/]: {escape(line)}", highlight=False, soft_wrap=True)


def emit(data: Any, as_json: bool,
         view: Callable[[Any], RenderableType | None] | None = None, *,
         indent: bool = True) -> None:
    """Print ``data``: with ``as_json`` as JSON on stdout (indented unless ``indent`` is
    False), else ``view(data)`` (a table, a line, a group of them) on the console."""
    if as_json:
        sys.stdout.write(json_text(data, orjson.OPT_INDENT_2 if indent else 0) + "\n")
        return
    shown = view(data) if view is not None else None
    if shown is not None:
        out.print(shown, highlight=False)


def emit_each(batches: Iterable[list[Any]], as_json: bool,
              view: Callable[[list[Any]], RenderableType | None] | None = None) -> None:
    """Print list ``batches`` as they come, in the memory of one: with ``as_json`` the one
    JSON array :func:`emit` writes of them all (the same text), else ``view(batch)`` per
    batch, a table's header only once in a pipe."""
    if as_json:
        write = sys.stdout.write
        first = True
        for batch in batches:
            for item in batch:
                text = json_text(item, orjson.OPT_INDENT_2)
                write(("[\n  " if first else ",\n  ") + text.replace("\n", "\n  "))
                first = False
        write("[]\n" if first else "\n]\n")
        sys.stdout.flush()
        return
    header = True
    for batch in batches:
        shown = view(batch) if view is not None else None
        if isinstance(shown, Table) and not out.is_terminal:
            shown.show_header, header = header, False
        if shown is not None:
            out.print(shown, highlight=False)


@contextlib.contextmanager
def progress() -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
    """Progress bars on stderr: ``start(label, total)`` gives ``advance(n)``; none when
    stderr is not a terminal (a log gets no blank lines from them)."""
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed:,} records"), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True,
                  disable=not err.is_terminal) as bars:
        def start(label: str, total: int | None) -> Callable[[int], None]:
            task = bars.add_task(label, total=total)
            return lambda n: bars.advance(task, n)
        yield start


HEARTBEAT = 15.0
"""Seconds between the lines a build writes to a log while it runs."""


@contextlib.contextmanager
def build_notice(what: str, seconds: float, console: Console | None = None,
                 heartbeat: float = HEARTBEAT) -> Iterator[Callable[[str], None]]:
    """Show that ``what`` is being built (about ``seconds`` long) on ``console`` (default:
    stderr) while the block runs, and give the function that names its stage. On a terminal:
    a bar that fills with the time spent, beside the stage; in a log: a line at the start, a
    line at each stage, a line every ``heartbeat`` seconds, and one at the end (what
    :func:`openmsd.models.announcing_builds` installs for the command line)."""
    console = console or err
    started = time.perf_counter()
    stage = ["starting"]
    done = threading.Event()

    def elapsed() -> float:
        return time.perf_counter() - started

    if console.is_terminal:
        bars = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                        TextColumn("{task.fields[stage]}"), TimeElapsedColumn(),
                        console=console, transient=True)
        task = bars.add_task(what, total=max(seconds, 1.0), stage=stage[0])

        def tick() -> None:
            while not done.wait(0.25):  # the bar moves with time; it is full at the end
                bars.update(task, completed=min(elapsed(), 0.97 * max(seconds, 1.0)),
                            stage=stage[0])
        with bars:
            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
            try:
                yield lambda name: stage.__setitem__(0, name)
            finally:
                done.set()
                ticker.join()
        console.print(f"{what}: done in {elapsed():.0f} s", highlight=False, markup=False)
        return

    def say(line: str) -> None:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
        with contextlib.suppress(Exception):
            console.file.flush()

    def beat() -> None:
        while not done.wait(heartbeat):
            say(f"  {elapsed():.0f} s: {stage[0]}")

    def named(name: str) -> None:
        new = name.split(" (")[0] != stage[0].split(" (")[0]  # not just its count, "(3/9)"
        stage[0] = name
        if new:
            say(f"  {elapsed():.0f} s: {name}")

    say(f"{what}...")
    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    try:
        yield named
    finally:
        done.set()
        beater.join()
    say(f"{what}: done in {elapsed():.0f} s")
