"""A BibTeX library read block by block: each ``@type{...}`` (or ``@type(...)``) block is cut
out by brace matching and parsed by bibtexparser's ``BibTexParser``, so a broken block is
found with its line and the entries around it are kept (bibtexparser alone drops it silently).

A block ends at its closing brace; a line that starts a new ``@type{`` block before then, or
the end of the text, means the block is not closed. ``@string`` definitions hold for the
blocks after them; ``@comment`` blocks and text between blocks are comments.

>>> entries, problems = bibtex_entries("@article{a, title = {One}}\\n@article{b, title = {x\\n"
...                                    "@article{c, title = {Three}}\\n")
>>> [e["ID"] for e in entries], [line for line, _ in problems]
(['a', 'c'], [2])
>>> problems[0][1]
"broken BibTeX block '@article{b, title = {x' (its braces do not close before line 3)"
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from bibtexparser.bibdatabase import UndefinedString
from bibtexparser.bparser import BibTexParser

__all__ = ["BibtexBlock", "bibtex_blocks", "bibtex_entries"]

_START = re.compile(r"@[ \t]*([A-Za-z][\w-]*)[ \t]*([{(])")
_NEXT_START = re.compile(r"\n[ \t]*@[ \t]*[A-Za-z][\w-]*[ \t]*[{(]")
_NOT_ENTRIES = ("string", "preamble", "comment")


@dataclass(frozen=True)
class BibtexBlock:
    """One ``@type{...}`` block: its first ``line`` (1-based), ``kind`` (lower case), its
    ``text``, and ``closed``: whether its closing brace (or parenthesis) was found."""

    line: int
    kind: str
    text: str
    closed: bool


def _end(text: str, start: int, limit: int, close: str) -> int | None:
    """The index just past the delimiter ``close`` that ends a block whose body starts at
    ``start``, looking no further than ``limit``; None when braces do not balance first."""
    depth = 0
    for index in range(start, limit):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return index + 1 if close == "}" else None
            depth -= 1
        elif char == ")" and close == ")" and depth == 0:
            return index + 1
    return None


def bibtex_blocks(text: str) -> list[BibtexBlock]:
    """The ``@type{...}`` blocks of a BibTeX text, in order; an unclosed block runs to the
    line that starts the next block (or to the end of the text)."""
    blocks = []
    position, line = 0, 1
    while match := _START.search(text, position):
        line += text.count("\n", position, match.start())
        following = _NEXT_START.search(text, match.end())
        limit = following.start() + 1 if following else len(text)
        end = _end(text, match.end(), limit, "}" if match.group(2) == "{" else ")")
        stop = end if end is not None else limit
        blocks.append(BibtexBlock(line, match.group(1).lower(), text[match.start():stop],
                                  end is not None))
        line += text.count("\n", match.start(), stop)
        position = stop
    return blocks


def _first_line(block: BibtexBlock) -> str:
    return block.text.strip().splitlines()[0][:60] if block.text.strip() else ""


def bibtex_entries(text: str) -> tuple[list[dict[str, str]], list[tuple[int, str]]]:
    """The entries of a BibTeX text (bibtexparser's dicts: fields, ``ID`` and ``ENTRYTYPE``)
    and its problems: ``(line, what is wrong)`` for each block that is not closed, does not
    parse, or uses an entry key again; the valid entries around them are kept."""
    parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
    parser.expect_multiple_parse = True  # each block adds to the one library (its @strings)
    database = parser.bib_database
    entries: list[dict[str, str]] = []
    problems: list[tuple[int, str]] = []
    first_line: dict[str, int] = {}
    quiet = logging.getLogger("bibtexparser")  # it logs each failed parse: told here instead
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        for block in bibtex_blocks(text):
            if block.kind == "comment":
                continue
            if not block.closed:
                following = block.line + block.text.count("\n")
                where = (f"line {following}" if block.text.endswith("\n")
                         else "the end of the file")
                problems.append((block.line, f"broken BibTeX block {_first_line(block)!r} "
                                             f"(its braces do not close before {where})"))
                continue
            before = len(database.entries)
            try:
                parser.parse(block.text)
                error = ""
            except UndefinedString as failure:
                error = f"@string {failure} is not defined before it"
            except Exception as failure:  # pyparsing's ParseException
                error = str(failure).strip().splitlines()[0][:200] if str(failure).strip() \
                    else type(failure).__name__
            added = database.entries[before:]
            del database.entries[before:]
            wanted = 0 if block.kind in _NOT_ENTRIES else 1
            if error or len(added) != wanted:
                why = error or ("not a BibTeX entry" if wanted else "not readable")
                problems.append((block.line, f"broken BibTeX block {_first_line(block)!r} "
                                             f"({why})"))
                continue
            for entry in added:
                key = entry.get("ID", "")
                if key in first_line:
                    problems.append((block.line, f"entry key {key!r} used again (first at "
                                                 f"line {first_line[key]})"))
                    continue
                first_line[key] = block.line
                entries.append(entry)
    finally:
        quiet.setLevel(level)
    return entries, problems
