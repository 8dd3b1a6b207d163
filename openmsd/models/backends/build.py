"""Build once, stamp, rename: the one way a backend puts a derived model directory in place.

A backend's directory (the e5 rebuild, an ONNX export) is reused while its stamp says it is
current, else rebuilt by its builder, which writes a temporary sibling and renames it onto the
target (:func:`openmsd.corpus.store.building_dir`), so the target is absent, the old build, or
complete; when another process renamed its own build into place first, that one is taken."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["ensure_built"]


def ensure_built(directory: Path, is_current: Callable[[Path], bool],
                 build: Callable[[Path], object]) -> Path:
    """``directory`` once ``is_current(directory)``: as it is, or after ``build(directory)``
    (which writes the stamp ``is_current`` reads); an OSError of ``build`` is forgiven when
    another process's build is in place and current.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> done = lambda d: (d / "stamp").exists()
    >>> def build(d):
    ...     d.mkdir()
    ...     (d / "stamp").write_text("1")
    >>> ensure_built(root / "m", done, build).name
    'm'
    >>> ensure_built(root / "m", done, lambda d: 1 / 0).name  # current: not rebuilt
    'm'
    """
    if is_current(directory):
        return directory
    try:
        build(directory)
    except OSError:
        if is_current(directory):  # another process renamed its own build into place first
            return directory
        raise
    return directory
