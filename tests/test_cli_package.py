"""The shape of the ``openmsd.cli`` package: thin command modules over each package's report
code, one parser of enrichment variants, both ``python -m`` entry points."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import openmsd.cli as cli_package
import openmsd.cli.output as output_module
import openmsd.present.view as view_module
from openmsd.cli import app
from openmsd.corpus import parse_variant

CLI = Path(cli_package.__file__).parent


def test_doctests_of_the_cli_helpers() -> None:
    for module in (cli_package, output_module, view_module):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_no_command_module_builds_a_table_or_writes_json_itself() -> None:
    for path in sorted(CLI.glob("*.py")):
        source = path.read_text()
        assert "Table(" not in source, f"{path.name} builds a Rich table"
        if path.name != "output.py":
            assert "orjson.dumps" not in source, f"{path.name} prints JSON itself"


def test_enrichment_variants_are_parsed_one_way() -> None:
    assert parse_variant("llm64") == parse_variant("llm-64") == ("llm", 64)
    assert parse_variant("author-128") == ("author", 128)
    for bad in ("llm32", "llm-", "gpt-64", "llm--64"):
        with pytest.raises(ValueError, match="unknown enrichment"):
            parse_variant(bad)


def test_an_unknown_enrichment_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["embed", str(tmp_path), "--enrich", "gpt-64"])
    assert result.exit_code == 2 and "unknown enrichment 'gpt-64'" in result.output


def test_an_error_message_is_printed_as_written() -> None:
    result = CliRunner().invoke(app, ["related", "no-such-corpus[bold]", "x"])
    assert result.exit_code == 2 and "no-such-corpus[bold]" in result.output


@pytest.mark.parametrize("module", ["openmsd", "openmsd.cli"])
def test_python_dash_m_runs_the_command(module: str) -> None:
    done = subprocess.run([sys.executable, "-m", module, "formats"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "openalex:" in done.stdout and "crossref:" in done.stdout
