"""Build once, stamp, rename: the one way a backend puts a derived model directory in place.

A backend's directory (the e5 rebuild, an ONNX export) is reused while its stamp says it is
current, else rebuilt whole in a temporary sibling and renamed onto the target, so the target
is absent, the old build, or complete; when another process renamed its own build into place
first, that one is taken."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from openmsd.corpus.store import building_dir

__all__ = ["ensure_built"]


def ensure_built(directory: Path, is_current: Callable[[Path], bool],
                 build: Callable[[Path], None]) -> Path:
    """``directory`` once ``is_current(directory)``: as it is, or after ``build(tmp)`` filled
    an empty sibling ``tmp`` (writing the stamp ``is_current`` reads) that replaced it.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> done = lambda d: (d / "stamp").exists()
    >>> ensure_built(root / "m", done, lambda tmp: (tmp / "stamp").write_text("1")).name
    'm'
    >>> ensure_built(root / "m", done, lambda tmp: 1 / 0).name  # current: not rebuilt
    'm'
    """
    if is_current(directory):
        return directory
    try:
        with building_dir(directory) as tmp:
            build(tmp)
    except OSError:
        if is_current(directory):  # another process renamed its own build into place first
            return directory
        raise
    return directory
