"""The one "build once, stamp, rename" of the backends."""

from __future__ import annotations

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
