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
    assert report["counts"]["papers"] == 50 and report["problems"] == 0
    query = runner.invoke(app, ["corpus", "query", str(corpus),
                                "SELECT count(*) AS n FROM \"references\""])
    assert query.exit_code == 0  # not a terminal: a header line, then one line a row
    assert query.stdout.splitlines()[0] == "n" and int(query.stdout.splitlines()[1]) > 1000


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


def test_ingest_of_a_missing_file_writes_nothing(tmp_path):
    result = runner.invoke(app, ["ingest", str(tmp_path / "nope.jsonl"), "--out",
                                 str(tmp_path / "c")])
    assert result.exit_code == 2 and "no such file or directory" in result.output
    assert not (tmp_path / "c").exists()
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "a", "title": "A title long enough to read"}\n')
    result = runner.invoke(app, ["ingest", str(good), str(tmp_path / "nope"), "--out",
                                 str(tmp_path / "c")])
    assert result.exit_code == 2 and not (tmp_path / "c").exists()


def test_a_warning_is_called_a_warning_and_listed_once(tmp_path):
    selfish = tmp_path / "s2orc.jsonl"
    record = {"paper_id": "1", "title": "A paper that cites itself", "abstract": "Text.",
              "authors": [], "year": 2020, "outbound_citations": ["1"],
              "inbound_citations": ["1"]}
    selfish.write_text(json.dumps(record) + "\n")
    result = runner.invoke(app, ["ingest", str(selfish), "--out", str(tmp_path / "c"),
                                 "--format", "s2orc"])
    assert result.exit_code == 0, result.output
    assert "Every record was read; 1 had a defect and was kept as it was (a warning)." \
        in result.output
    assert result.output.count("self-citation: ") == 1 and "- warning: " in result.output


def test_help_lists_demo_first_without_broken_sentences():
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "400"})
    panel = result.output[result.output.index("Commands"):].splitlines()[1:]
    rows = [line for line in panel if line.startswith("│")]
    assert rows[0].startswith("│ demo ")
    # wide enough for every help on one line: a row without a command is a broken sentence
    assert not [row for row in rows if row.startswith("│" + " " * 6)]
    assert any("(Tasks I, II)" in row for row in rows)


def test_help_shows_flags_without_a_type():
    """A flag takes no value: ``--json``, never ``--json <bool>``, in every command's help."""
    import typer.main

    def paths(command, prefix=()):
        yield prefix
        for name, sub in getattr(command, "commands", {}).items():
            yield from paths(sub, (*prefix, name))

    for path in paths(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, path
        assert "<bool>" not in result.output, path
        assert "--help" in result.output
