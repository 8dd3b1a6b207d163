"""``openmsd relations`` over a folder that is not a corpus: one line, nothing made in it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from openmsd.cli import app


def test_relations_of_an_empty_folder_leaves_it_empty(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    result = CliRunner().invoke(app, ["relations", str(folder)])
    assert result.exit_code == 2 and "not a corpus directory" in result.output
    assert list(folder.iterdir()) == []
