"""What ``openmsd train ranker`` says of a corpus it cannot learn from yet: one line naming the
command that helps, and nothing written."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.ingest import ingest


def test_a_corpus_without_vectors_is_told_to_embed_first(shared_data: Path,
                                                          tmp_path: Path) -> None:
    root = tmp_path / "jats"
    ingest([shared_data / "scielo-jats"], root)
    runner = CliRunner()
    assert runner.invoke(app, ["relations", str(root)]).exit_code == 0
    failed = runner.invoke(app, ["train", "ranker", str(root)])
    assert failed.exit_code == 2
    lines = failed.output.strip().splitlines()
    assert lines == [f"error: {root}: no paper vectors; run 'openmsd embed {root}' first: the "
                     "ranker learns how far to trust each model's scores"], failed.output
    assert not (root / "index" / "ranker.json").exists()
    assert not (root / "adapters").exists()
