"""A folder made read-only for a test, even for root (whom permission bits do not stop)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["read_only"]


def _mount(*args: str) -> bool:
    if shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` read-only inside the block: its permission bits (and those of its folders)
    cleared of writing for a user, a read-only bind mount of it onto itself for root (the test
    is skipped where root may not mount, as in most containers)."""
    if os.geteuid() != 0:
        folders = [p for p in [folder, *folder.rglob("*")] if p.is_dir() and not p.is_symlink()]
        for path in folders:
            path.chmod(0o555)
        try:
            yield folder
        finally:
            for path in folders:
                path.chmod(0o755)
        return
    if not _mount("--bind", str(folder), str(folder)):
        pytest.skip("root, and mount is not permitted here: no way to make a folder read-only")
    try:
        if not _mount("-o", "remount,bind,ro", str(folder)):
            pytest.skip("root, and a read-only remount is not permitted here")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, check=True)
