"""Wall-clock seconds a run spends in each of its named phases.

>>> phases = Phases()
>>> with phases("read"):
...     pass
>>> list(phases.seconds), phases.seconds["read"] >= 0
(['read'], True)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["Phases"]


class Phases:
    """Seconds per phase name, in the order the phases first ran; a phase entered again adds
    to its time."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """Time the block as (part of) phase ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
