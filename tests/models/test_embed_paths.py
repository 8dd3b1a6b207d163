"""A corpus path holding glob characters (``[``, ``*``) is read as it is named: a second
``embed`` (which reads the parts the first wrote) and the commands after it never take the
path for a pattern."""

from __future__ import annotations

from pathlib import Path

import orjson
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.ingest import ingest

runner = CliRunner()


def test_a_corpus_under_a_folder_named_like_a_pattern(tmp_path: Path, tiny_model: Path) -> None:
    papers = tmp_path / "p.jsonl"
    rows = [{"id": f"p{i}", "title": f"Paper {i} on parsing", "abstract": "A study."}
            for i in range(8)]
    papers.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    root = tmp_path / "gl" / "br[1]" / "c*"
    ingest([papers], root)
    model = ["--model", str(tiny_model), "--backend", "torch", "--json"]
    first = runner.invoke(app, ["embed", str(root), *model])
    assert first.exit_code == 0, first.output
    more = tmp_path / "q.jsonl"
    more.write_bytes(orjson.dumps({"id": "q", "title": "Another paper", "abstract": "B."})
                     + b"\n")
    ingest([papers, more], root)
    second = runner.invoke(app, ["embed", str(root), *model])
    assert second.exit_code == 0, second.output
    assert orjson.loads(second.stdout)["embedded"] == 1  # the parts before were read
    built = runner.invoke(app, ["index", "build", str(root), "--model", str(tiny_model),
                                "--backend", "torch"])
    assert built.exit_code == 0, built.output
    related = runner.invoke(app, ["related", str(root), "p1", "--model", str(tiny_model),
                                  "--json"])
    assert related.exit_code == 0, related.output
