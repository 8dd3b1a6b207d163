"""How much memory DuckDB may hold while it builds the corpus tables or derives the related
pairs, before it spills to disk.

``OPENMSD_MEMORY_LIMIT`` (a DuckDB size such as ``4GB``) when set; otherwise a quarter of the
machine's physical memory in whole gigabytes, at least ``1GB`` (``4GB`` on a 16 GB laptop):
enough that a few million references sort without spilling, and bounded, so a larger corpus
spills instead of taking the machine.

>>> memory_limit({"OPENMSD_MEMORY_LIMIT": "3GB"})
'3GB'
>>> memory_limit({}, physical_bytes=16 * 2**30)
'4GB'
>>> memory_limit({}, physical_bytes=2 * 2**30)
'1GB'
>>> memory_limit({"OPENMSD_MEMORY_LIMIT": "lots"})
Traceback (most recent call last):
...
ValueError: OPENMSD_MEMORY_LIMIT: expected a size such as 4GB or 512MB, got 'lots'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = ["ENV", "checked_size", "chosen_limit", "memory_limit"]

ENV = "OPENMSD_MEMORY_LIMIT"
_SIZE = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", re.IGNORECASE)


def checked_size(value: str, source: str) -> str:
    """``value`` if it is a DuckDB size (``4GB``, ``512MB``, ``1.5GiB``); else ValueError naming
    ``source`` (the variable or option it came from)."""
    if not _SIZE.fullmatch(value.strip()):
        raise ValueError(f"{source}: expected a size such as 4GB or 512MB, got {value!r}")
    return value.strip()


def physical_memory() -> int | None:
    """The machine's physical memory in bytes; None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


def memory_limit(environ: Mapping[str, str] = os.environ,
                 physical_bytes: int | None = None) -> str:
    """DuckDB's memory limit: ``environ[ENV]``, else a quarter of ``physical_bytes`` (the
    machine's by default) in whole GB, at least 1GB."""
    if environ.get(ENV):
        return checked_size(environ[ENV], ENV)
    physical = physical_bytes if physical_bytes is not None else physical_memory()
    return f"{max(1, (physical or 0) // 4 // 2**30)}GB"


def chosen_limit(given: str | None, source: str) -> str:
    """``given`` checked as a size (:func:`checked_size`, errors naming ``source``), else
    :func:`memory_limit`."""
    return checked_size(given, source) if given else memory_limit()
