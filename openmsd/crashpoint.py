"""Named points where a test may kill the process (``kill -9``) to prove a write is atomic.

``OPENMSD_CRASH_AT=index.between_writes openmsd index build ...`` makes the process send itself
SIGKILL when it reaches :func:`crash_point` ``("index.between_writes")``: no cleanup, no
``finally``, exactly what a power cut or the OOM killer does. Unset, a crash point costs one
environment lookup.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "crash_point"]

ENV = "OPENMSD_CRASH_AT"


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL if ``$OPENMSD_CRASH_AT`` names ``name``."""
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
