"""The command line starts without the heavy libraries: a command imports what it needs when it
runs. Checked on what a fresh process has loaded, not on time (the start-up time is
``benchmarks/cli_start.py``'s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import openmsd
import openmsd.eval
import openmsd.index
import openmsd.ingest
import openmsd.models
import openmsd.rank
import openmsd.relations
from openmsd.cli import app, options

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ["numpy", "pandas", "pyarrow", "duckdb", "torch", "scipy"]

LOADED = """
import sys
from typer.main import get_command
import openmsd.cli
command = get_command(openmsd.cli.app)
for args in ([], ["--help"], ["--version"], ["search", "--help"], ["ingest", "--help"]):
    try:
        command.main(args, prog_name="openmsd", standalone_mode=False)
    except (SystemExit, Exception):  # a command that fails still ran
        pass
print(" ".join(sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))))
"""


def test_the_cli_and_its_help_load_no_heavy_library() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", LOADED, *HEAVY], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True)
    assert "openmsd" in done.stdout  # the help was printed
    assert done.stdout.splitlines()[-1] == ""  # and none of HEAVY is loaded


def test_a_command_still_loads_what_it_needs() -> None:
    """The check above could pass by loading nothing at all: a command that reads the corpus
    does load DuckDB."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = LOADED.replace('["--version"]', '["corpus", "stats", "no-such-corpus"]')
    done = subprocess.run([sys.executable, "-c", code, *HEAVY], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True)
    assert "duckdb" in done.stdout.splitlines()[-1].split()


def test_the_defaults_the_help_shows_are_the_packages() -> None:
    assert options.CUTOFF == openmsd.eval.CUTOFF
    assert options.DEFAULT_MAX_GROUP == openmsd.relations.DEFAULT_MAX_GROUP
    assert options.DEFAULT_MODEL == openmsd.models.DEFAULT_MODEL
    assert options.FORMATS == openmsd.ingest.FORMATS
    assert options.HNSW_THRESHOLD == openmsd.index.HNSW_THRESHOLD
    assert options.HYBRID == openmsd.rank.HYBRID


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"openmsd {openmsd.__version__}\n"
