"""A corpus built on Spark is a corpus: every command reads it and answers as it answers on
the corpus DuckDB builds from the same inputs (stats, query, relations, embed, index, related,
search, the web API, eval sdsm)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.corpus import Corpus
from tests.ingest.test_spark import openalex_snapshot

MODEL = "muse-v3"
pytestmark = pytest.mark.slow  # two ingests (one on Spark), two embeddings: minutes


def _run(*args: str | Path) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (args, result.output[-3000:])
    return result.stdout


def _json(*args: str | Path) -> object:
    return orjson.loads(_run(*args, "--json"))


def _answers(corpus: Path) -> dict[str, object]:
    """What each command says about ``corpus`` (paths taken out)."""
    from fastapi.testclient import TestClient

    from openmsd.server import create_app

    said: dict[str, object] = {"stats": _json("corpus", "stats", corpus)}
    said["query"] = _run("corpus", "query", corpus,
                         "SELECT language, count(*) AS n, sum(length(title)) AS chars "
                         "FROM papers GROUP BY ALL ORDER BY ALL")
    _run("relations", corpus, "--top-languages", "1", "--idt", "0.3", "--odt", "0",
         "--dev", "0.1")
    said["relations"] = _json("relations", "stats", corpus)
    embedded = _json("embed", corpus, "--model", MODEL)
    said["embedded"] = {k: v for k, v in embedded.items() if k != "directory"}
    said["index"] = _run("index", "build", corpus, "--model", MODEL)
    [(cited,)] = Corpus(corpus).connect().execute(  # a paper with citation links
        "SELECT min(citing_id) FROM citations").fetchall()
    said["related"] = _json("related", corpus, cited, "--model", "hybrid-graph", "-k", "8")
    said["search"] = _json("search", corpus, "treebank parsing of the lexicon", "-k", "8")
    said["sdsm"] = _json("eval", "sdsm", corpus, "--model", "bm25", "--model", MODEL,
                         "--split", "idt")
    with TestClient(create_app(corpus, [MODEL]), raise_server_exceptions=False) as client:
        said["api.search"] = client.get("/api/search", params={"q": "syntax corpus"}).json()
        said["api.related"] = client.get(f"/api/papers/{cited}/related").json()
        said["api.stats"] = client.get("/api/stats").json()
        page = client.get("/", params={"q": "morphology alignment"})
        assert page.status_code == 200
    return said


def test_every_command_reads_a_spark_built_corpus_as_the_duckdb_one(tmp_path: Path,
                                                                     spark) -> None:
    inputs = [SAMPLE / "s2orc", SAMPLE / "unarxive", openalex_snapshot(tmp_path / "openalex")]
    _run("ingest", *inputs, "--out", tmp_path / "duckdb")
    _run("ingest", *inputs, "--out", tmp_path / "spark", "--engine", "spark")
    for name in ("papers", "references", "citations", "contexts"):
        assert (tmp_path / "spark" / f"{name}.parquet").is_file()
    duck, built = _answers(tmp_path / "duckdb"), _answers(tmp_path / "spark")
    text = orjson.dumps(built).decode()
    assert str(tmp_path / "duckdb") not in text
    built = orjson.loads(text.replace(str(tmp_path / "spark"), str(tmp_path / "duckdb")))
    for name, answer in duck.items():
        assert built[name] == answer, name
    assert duck["stats"]["papers"] > 150 and duck["stats"]["citations"] > 100
    assert duck["related"] and duck["search"] and duck["api.search"]["results"]
