"""One record per headline figure: ``benchmarks/results/NAME.json``.

A benchmark calls :func:`write_record` with its numbers; the record adds what is needed to rerun
and to judge it: the command line, the commit (and whether the tree was dirty), the date, the
machine (CPUs, memory, platform) and its load average before and after, and the data sizes.
The docs and the README read their figures from these records (``tests/test_records.py``
checks that every figure they quote is in its record), so a number cannot drift from its run.

Run from the repository root as ``python benchmarks/NAME.py``; the scripts import this module
as ``from record import write_record`` (the script's folder is first on ``sys.path``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["RESULTS", "machine", "read_record", "write_record"]

RESULTS = Path(__file__).resolve().parent / "results"


def _git(*args: str) -> str:
    """The output of ``git ARGS`` in the repository, or "" where git is missing."""
    try:
        out = subprocess.run(
            ["git", *args], cwd=RESULTS.parent.parent, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out.stdout.strip()


def _script() -> str:
    """The running script's path from the repository root (however it was started)."""
    script = Path(sys.argv[0]).resolve()
    try:
        return str(script.relative_to(RESULTS.parent.parent))
    except ValueError:
        return sys.argv[0]


def machine() -> dict[str, Any]:
    """CPUs, memory, platform and the 1-minute load average of this machine now."""
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem = float("nan")
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(mem, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def write_record(
    name: str,
    numbers: dict[str, Any],
    *,
    data: dict[str, Any],
    load_before: float | None = None,
    synthetic: bool = False,
    notes: str = "",
    results: Path = RESULTS,
) -> Path:
    """Write ``results/NAME.json`` atomically and return its path.

    ``numbers`` holds the figures (ratios with the peer they are against); ``data`` the data
    sizes and sources (say ``synthetic=True`` where the data is generated); ``load_before`` the
    load average when the run started (``os.getloadavg()[0]``), so the record shows both ends.
    """
    record = {
        "name": name,
        "command": shlex.join(["python", _script(), *sys.argv[1:]]),
        "commit": _git("rev-parse", "HEAD"),
        # other records written since the commit change no code
        "dirty": bool(_git("status", "--porcelain", "--untracked-files=no", "--", ".",
                           ":!benchmarks/results")),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_before": load_before,
        "data": data,
        "synthetic": synthetic,
        "numbers": numbers,
        "notes": notes,
    }
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_record(name: str, results: Path = RESULTS) -> dict[str, Any]:
    """The record ``results/NAME.json`` as a dict (``FileNotFoundError`` names the path)."""
    return json.loads((results / f"{name}.json").read_text(encoding="utf-8"))
