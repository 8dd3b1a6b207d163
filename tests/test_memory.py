"""DuckDB's memory limit: the variable when set (and a size), else a quarter of the machine's
memory; a bad size is an error naming where it came from, before anything is written."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.memory import ENV, checked_size, memory_limit, physical_memory


@pytest.mark.parametrize(("physical_gib", "limit"), [(64, "16GB"), (16, "4GB"), (6, "1GB"),
                                                     (0.5, "1GB")])
def test_a_quarter_of_the_machine_in_whole_gigabytes(physical_gib: float, limit: str) -> None:
    assert memory_limit({}, physical_bytes=int(physical_gib * 2**30)) == limit


def test_the_variable_wins_and_this_machine_has_a_size() -> None:
    assert memory_limit({ENV: " 512MB "}) == "512MB"
    assert physical_memory() and memory_limit({}) == f"{max(1, physical_memory() // 4 // 2**30)}GB"


@pytest.mark.parametrize("bad", ["lots", "4 G", "-1GB", "4GB; DROP TABLE papers", "GB"])
def test_a_bad_size_names_its_source(bad: str) -> None:
    with pytest.raises(ValueError, match=f"{ENV}: expected a size such as 4GB"):
        memory_limit({ENV: bad})
    assert checked_size("1.5GiB", "--memory-limit") == "1.5GiB"


def test_ingest_with_a_bad_variable_fails_before_writing(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    papers = tmp_path / "papers.jsonl"
    papers.write_bytes(orjson.dumps({"id": "a", "title": "A paper", "year": 2020}) + b"\n")
    monkeypatch.setenv(ENV, "plenty")
    result = CliRunner().invoke(app, ["ingest", str(papers), "--out", str(tmp_path / "c")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{ENV}: expected a size such as 4GB or 512MB, got 'plenty'" in result.output
    assert not (tmp_path / "c").exists()
    monkeypatch.delenv(ENV)
    result = CliRunner().invoke(app, ["ingest", str(papers), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["relations", str(tmp_path / "c"), "--memory-limit", "lots"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--memory-limit: expected a size such as 4GB or 512MB, got 'lots'" in result.output
