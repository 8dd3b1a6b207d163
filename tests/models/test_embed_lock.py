"""``embed`` is a writer of the corpus: it holds the corpus's lock, so a second writer (another
embed, an ingest, an index build) is refused at once and no two runs write the same part."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.ingest import ingest

runner = CliRunner()


def test_a_second_embed_is_refused_while_one_writes(tmp_path: Path, tiny_model: Path) -> None:
    papers = tmp_path / "p.jsonl"
    papers.write_bytes(b"".join(orjson.dumps({"id": f"p{i}", "title": f"Paper {i} on parsing",
                                              "abstract": "A study."}) + b"\n"
                                for i in range(12)))
    root = tmp_path / "corpus"
    ingest([papers], root)
    holder = subprocess.Popen(  # an embed holding the corpus until told to stop
        [sys.executable, "-c", "import sys; from openmsd.corpus import corpus_lock\n"
         f"with corpus_lock({str(root)!r}):\n print('locked', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        second = runner.invoke(app, ["embed", str(root), "--model", str(tiny_model),
                                     "--backend", "torch"])
        assert second.exit_code == 2, second.output
        assert "another ingest, embed or index build is writing to this corpus" in second.output
        assert "Traceback" not in second.output
        assert not list(Corpus(root).layout.vectors.rglob("part-*.parquet"))  # nothing written
    finally:
        holder.communicate("")
    done = runner.invoke(app, ["embed", str(root), "--model", str(tiny_model), "--backend",
                               "torch", "--json"])
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.stdout)["embedded"] == 12
