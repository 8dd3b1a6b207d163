"""The result of SQL over a corpus (``openmsd corpus query``) as a table: one row a result row,
every cell literal text."""

from __future__ import annotations

from typing import Any

import orjson
from rich.table import Table
from rich.text import Text

__all__ = ["cell_text", "query_view"]


def cell_text(value: Any) -> str:
    """A value as a cell: nothing for None, JSON for a list or a struct, else its text.

    >>> cell_text(None), cell_text(["x", 1]), cell_text(2.5)
    ('', '["x",1]', '2.5')
    """
    if value is None:
        return ""
    if isinstance(value, list | dict | tuple):
        return orjson.dumps(value, default=str).decode()
    return str(value)


def query_view(columns: list[str], rows: list[dict[str, Any]]) -> Table:
    """A table of ``rows`` (dicts keyed by ``columns``), every cell literal text (a value
    such as ``[b]`` is never read as markup)."""
    table = Table()
    for column in columns:
        table.add_column(Text(column))
    for row in rows:
        table.add_row(*(Text(cell_text(row.get(column))) for column in columns))
    return table
