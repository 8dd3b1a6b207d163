"""The registered models as rows (``openmsd models list --json``) and as a table."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from openmsd.models.registry import DEFAULT_MODEL, MODELS

__all__ = ["model_rows", "models_table"]


def model_rows() -> list[dict[str, Any]]:
    """One row per registered model: name, dim, multilingual, description, default."""
    return [{"name": m.name, "dim": m.dim, "multilingual": m.multilingual,
             "description": m.description, "default": m.name == DEFAULT_MODEL}
            for m in MODELS.values()]


def models_table(rows: list[dict[str, Any]]) -> Table:
    """:func:`model_rows` for a terminal."""
    table = Table(title="Models")
    for column in ("name", "dim", "languages", "description"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"] + (" (default)" if row["default"] else ""),
                      str(row["dim"] or "sparse"),
                      "multilingual" if row["multilingual"] else "English",
                      row["description"])
    return table
