"""The generated reference pages (command line, HTTP API, benchmarks) are current."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_reference  # noqa: E402

PAGES = docs_reference.pages()


@pytest.mark.parametrize("path", sorted(PAGES), ids=lambda p: str(p.relative_to(ROOT)))
def test_generated_page_is_current(path: Path) -> None:
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing: run scripts/docs_reference.py"
    assert path.read_text(encoding="utf-8") == PAGES[path], (
        f"{path.relative_to(ROOT)} is stale: run python scripts/docs_reference.py")


def test_cli_reference_names_every_command_and_option() -> None:
    import typer

    from openmsd.cli import app

    page = PAGES[ROOT / "docs" / "reference" / "cli.md"]
    root = typer.main.get_command(app)
    for name in ("demo", "ingest", "embed", "related", "search", "recommend", "serve", "train"):
        assert f"## openmsd {name} " in page
    related = root.get_command(None, "related")
    for param in related.params:
        for option in param.opts:
            if option.startswith("-"):
                assert f"`{option}`" in page, option


def test_api_reference_says_which_routes_are_post() -> None:
    page = PAGES[ROOT / "docs" / "reference" / "api.md"]
    assert "## POST `/api/recommend`" in page
    assert "## POST `/api/related`" in page
    assert "## GET `/api/search`" in page
