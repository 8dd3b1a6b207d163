"""Shared fixtures: the real data in ../shared/data (skipped when absent) and the shipped sample."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from openmsd.ingest import ingest
from openmsd.relations import RelationsConfig, SplitConfig
from openmsd.report import Report

# ../shared/data beside the repository (CI), or where OPENMSD_SHARED_DATA says (a worktree)
SHARED_DATA = Path(os.environ.get("OPENMSD_SHARED_DATA")
                   or Path(__file__).resolve().parents[1].parent / "shared" / "data")


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the repository; tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def report() -> Report:
    return Report()


@pytest.fixture(scope="module")
def shared_data_module() -> Path:
    """``../shared/data`` for module-scoped fixtures."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


# A 1,500-paper corpus with ~600 linked papers: few in-distribution languages, larger test shares.
SMALL = RelationsConfig(split=SplitConfig(top_languages=2, idt=0.15, odt=0.15, dev=0.1))


@pytest.fixture(scope="session")
def taln_corpus(tmp_path_factory) -> Path:
    """The TALN papers and their ParsCit references ingested once per session (read only:
    copy it before writing into it)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    out = tmp_path_factory.mktemp("taln") / "corpus"
    ingest([SHARED_DATA / "taln" / "papers.jsonl", SHARED_DATA / "taln" / "parscit"], out)
    return out


# CI runs the fuzz tests with a fixed sequence of examples (reproducible landings); locally they
# explore new inputs on every run.
if os.environ.get("CI"):
    settings.register_profile("ci", derandomize=True, database=None)
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> tuple[Path, str, dict[str, float]]:
    """``openmsd demo``'s run on the shipped sample, with muse-v3 (the same steps as the
    default model, faster): the corpus directory, what it printed on a terminal 120 columns
    wide, and its step times."""
    import contextlib
    import io

    from rich.console import Console

    from openmsd.demo import run

    @contextlib.contextmanager
    def no_bars():
        yield lambda label, total: (lambda n: None)

    root = tmp_path_factory.mktemp("demo") / "demo-corpus"
    text = io.StringIO()
    console = Console(file=text, width=120, force_terminal=True, color_system=None)
    times = run(root, console, no_bars, model="muse-v3")
    return root, text.getvalue(), times


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession (2 cores, failed tasks tried 3 times) for every Spark test."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime for Spark")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers run this interpreter
    session = (SparkSession.builder.master("local[2,3]").appName("openmsd-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    yield session
    session.stop()
