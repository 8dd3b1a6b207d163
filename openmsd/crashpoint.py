"""Named points where a test may kill the process (``kill -9``) to prove a write is atomic.

``OPENMSD_CRASH_AT=index.between_writes openmsd index build ...`` makes the process send itself
SIGKILL when it reaches :func:`crash_point` ``("index.between_writes")``: no cleanup, no
``finally``, exactly what a power cut or the OOM killer does. Unset, a crash point costs one
environment lookup.

With ``OPENMSD_CRASH_ONCE=DIR`` as well, only the first process to reach the point dies (it
leaves the marker ``DIR/<name>``): a task that a cluster retries fails once, then succeeds.
"""

from __future__ import annotations

import os
import signal

__all__ = ["ENV", "ONCE", "crash_point"]

ENV = "OPENMSD_CRASH_AT"
ONCE = "OPENMSD_CRASH_ONCE"


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL if ``$OPENMSD_CRASH_AT`` names ``name`` (and, with
    ``$OPENMSD_CRASH_ONCE``, no process has been killed there before)."""
    if os.environ.get(ENV) != name:
        return
    once = os.environ.get(ONCE)
    if once:
        try:
            os.close(os.open(os.path.join(once, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
    os.kill(os.getpid(), signal.SIGKILL)
