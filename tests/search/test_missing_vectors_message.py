"""A fusion member without vectors names the ``embed`` that stores them under the key it
reads (its backend included): running the command it names makes the fusion work."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import orjson
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.ingest import ingest

runner = CliRunner()


def test_the_named_embed_is_the_one_that_helps(tmp_path: Path) -> None:
    papers = tmp_path / "p.jsonl"
    papers.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": f"Parsing paper {i}",
                                              "abstract": "A study of parsing."}) + b"\n"
                                for i in range(6)))
    ingest([papers], tmp_path / "corpus")
    corpus = str(tmp_path / "corpus")
    # minilm-en's own backend is ONNX: an embed without --backend stores minilm-en@onnx
    assert runner.invoke(app, ["embed", corpus, "--model", "minilm-en"]).exit_code == 0
    failed = runner.invoke(app, ["related", corpus, "p1", "--model", "bm25+minilm-en"])
    assert failed.exit_code == 2
    named = re.search(r"run '(openmsd embed [^']+)'", failed.output)
    assert named and "--backend torch" in named.group(1), failed.output
    assert "minilm-en:onnx" in failed.output  # or rank with the vectors it has
    assert runner.invoke(app, shlex.split(named.group(1))[1:]).exit_code == 0
    done = runner.invoke(app, ["related", corpus, "p1", "--model", "bm25+minilm-en", "--json"])
    assert done.exit_code == 0, done.output
    also = runner.invoke(app, ["related", corpus, "p1", "--model", "bm25+minilm-en:onnx"])
    assert also.exit_code == 0, also.output
