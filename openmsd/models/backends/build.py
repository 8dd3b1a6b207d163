"""Build once, stamp, rename: the one way a backend puts a derived model directory in place.

A backend's directory (the e5 rebuild, an ONNX export) is reused while its stamp says it is
current, else rebuilt by its builder, which writes a temporary sibling and renames it onto the
target (:func:`openmsd.corpus.store.building_dir`), so the target is absent, the old build, or
complete; when another process renamed its own build into place first, that one is taken.

A build takes minutes and happens once, so it says so: a command that shows progress installs a
:data:`Notice` with :func:`announcing_builds`; :func:`ensure_built` then opens it with what is
being built and about how long it takes, and the builder names its stages
(:func:`build_stage`) as it goes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from contextvars import ContextVar
from pathlib import Path

__all__ = ["Notice", "announcing_builds", "build_stage", "ensure_built"]

Notice = Callable[[str, float], AbstractContextManager[Callable[[str], None]]]
"""``notice(what, seconds)``: shows that ``what`` is being built (about ``seconds`` long) while
the block runs; it gives the function that names the build's current stage."""

_NOTICE: ContextVar[Notice | None] = ContextVar("openmsd_build_notice", default=None)
_STAGE: ContextVar[Callable[[str], None] | None] = ContextVar("openmsd_build_stage",
                                                              default=None)


@contextlib.contextmanager
def announcing_builds(notice: Notice) -> Iterator[None]:
    """Within the block, every build :func:`ensure_built` runs is shown with ``notice``."""
    token = _NOTICE.set(notice)
    try:
        yield
    finally:
        _NOTICE.reset(token)


def build_stage(stage: str) -> None:
    """Name the stage the running build is at (nothing when no notice is installed)."""
    say = _STAGE.get()
    if say is not None:
        say(stage)


@contextlib.contextmanager
def _announced(what: str | None, seconds: float) -> Iterator[None]:
    notice = _NOTICE.get()
    if notice is None or what is None:
        yield
        return
    with notice(what, seconds) as say:
        token = _STAGE.set(say)
        try:
            yield
        finally:
            _STAGE.reset(token)


def ensure_built(directory: Path, is_current: Callable[[Path], bool],
                 build: Callable[[Path], object], what: str | None = None,
                 seconds: float = 0.0) -> Path:
    """``directory`` once ``is_current(directory)``: as it is, or after ``build(directory)``
    (which writes the stamp ``is_current`` reads); an OSError of ``build`` is forgiven when
    another process's build is in place and current. A build is announced as ``what`` (about
    ``seconds`` long) where a notice is installed (:func:`announcing_builds`).

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
        with _announced(what, seconds):
            build(directory)
    except OSError:
        if is_current(directory):  # another process renamed its own build into place first
            return directory
        raise
    return directory
