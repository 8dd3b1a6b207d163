"""The one "build once, stamp, rename" of the backends."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from openmsd.models.backends.build import ensure_built


def _stamped(directory: Path) -> bool:
    return (directory / "stamp").is_file()


def test_built_once_then_reused(tmp_path):
    builds: list[Path] = []

    def build(target: Path) -> None:
        target.mkdir()
        (target / "stamp").write_text("1")
        builds.append(target)

    assert ensure_built(tmp_path / "m", _stamped, build) == tmp_path / "m"
    assert ensure_built(tmp_path / "m", _stamped, build) == tmp_path / "m"
    assert builds == [tmp_path / "m"]


def test_a_failed_rename_is_forgiven_only_when_another_build_is_in_place(tmp_path):
    def lost_the_race(target: Path) -> None:
        target.mkdir()
        (target / "stamp").write_text("theirs")
        raise OSError("rename: directory not empty")

    assert ensure_built(tmp_path / "a", _stamped, lost_the_race) == tmp_path / "a"

    def failed(target: Path) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        ensure_built(tmp_path / "b", _stamped, failed)


def _slow_build(target: Path) -> None:
    """A build of three named stages, a little over a second long."""
    import time

    from openmsd.models.backends.build import build_stage

    target.mkdir()
    for stage in ("reading", "writing", "checking"):
        build_stage(stage)
        time.sleep(0.4)
    (target / "stamp").write_text("1")


def test_a_build_says_what_it_builds_and_how_far_it_is_in_a_log(tmp_path) -> None:
    import functools
    import io

    from openmsd.cli.output import SafeConsole, build_notice
    from openmsd.models import announcing_builds

    log = io.StringIO()
    notice = functools.partial(build_notice, console=SafeConsole(file=log), heartbeat=0.3)
    with announcing_builds(notice):
        ensure_built(tmp_path / "m", _stamped, _slow_build, what="building the model once",
                     seconds=2)
        ensure_built(tmp_path / "m", _stamped, _slow_build, what="building it again")
    lines = log.getvalue().splitlines()
    assert lines[0] == "building the model once..."
    assert [line.split(": ")[1] for line in lines if line.startswith("  ")][:1] == ["reading"]
    assert {"reading", "writing", "checking"} <= {line.split(": ")[1] for line in lines[1:-1]}
    assert len(lines) >= 2 + 3 + 2  # the stages, and the time between them
    assert lines[-1].startswith("building the model once: done in ")
    assert "again" not in log.getvalue()  # current: not rebuilt, nothing said


def test_a_build_fills_a_bar_on_a_terminal(tmp_path) -> None:
    import functools
    import io

    from openmsd.cli.output import SafeConsole, build_notice
    from openmsd.models import announcing_builds

    screen = io.StringIO()
    console = SafeConsole(file=screen, force_terminal=True, width=100, color_system=None)
    with announcing_builds(functools.partial(build_notice, console=console)):
        ensure_built(tmp_path / "m", _stamped, _slow_build, what="building the model once",
                     seconds=2)
    shown = screen.getvalue()
    assert "building the model once" in shown and "writing" in shown
    bars = re.findall(r"━+", shown)
    assert len(set(bars)) >= 2  # the bar was drawn at more than one length
    assert shown.rstrip().endswith("building the model once: done in 1 s")
