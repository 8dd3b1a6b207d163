"""The command line, on the sample shipped in the package (no ../shared needed)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app

runner = CliRunner()


def test_ingest_json_report_and_query(tmp_path):
    corpus = tmp_path / "c"
    result = runner.invoke(app, ["ingest", str(SAMPLE / "scielo-jats"), "--out", str(corpus),
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["counts"]["papers"] == 51 and report["problems"] == 0
    query = runner.invoke(app, ["corpus", "query", str(corpus),
                                "SELECT count(*) AS n FROM \"references\""])
    assert query.exit_code == 0 and "│" in query.output


def test_errors_name_the_problem_and_exit_2(tmp_path):
    result = runner.invoke(app, ["corpus", "stats", str(tmp_path)])
    assert result.exit_code == 2 and "not a corpus directory" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "title": "x"}\n{"id": \n')
    result = runner.invoke(app, ["ingest", str(bad), "--out", str(tmp_path / "c"), "--strict"])
    assert result.exit_code == 2 and "bad.jsonl: line 2: malformed JSON" in result.output
    result = runner.invoke(app, ["ingest", str(bad), "--out", str(tmp_path / "c"),
                                 "--format", "nope"])
    assert result.exit_code == 2 and "unknown format 'nope'" in result.output
    query = runner.invoke(app, ["corpus", "query", str(tmp_path / "c"), "SELEC 1"])
    assert query.exit_code == 2
