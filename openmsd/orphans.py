"""Worker processes that end with the process that started them.

A pool's workers block on their task queue: when their parent is killed (``kill -9``, the OOM
killer) nothing tells them, and they would wait forever holding their memory.
:func:`die_with_parent`, a pool's ``initializer``, asks Linux to send the worker SIGKILL when its
parent ends (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread polls the parent's id.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent"]

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 1.0


def die_with_parent(parent: int) -> None:
    """End this process (SIGKILL) when the process ``parent`` (its parent's pid) ends; if it
    has already ended, end now."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # the parent died before the request was made
                    os.kill(os.getpid(), signal.SIGKILL)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch, args=(parent,), name="openmsd-parent-watch",
                     daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGKILL)
