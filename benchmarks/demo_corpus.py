"""The demo corpus a benchmark measures on: the one given, else ``openmsd demo`` built into
a working folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def demo_corpus(given: Path | None, work: Path) -> Path:
    """``given`` (resolved), else the demo corpus built into ``work / "demo-corpus"``."""
    if given is None:
        given = work / "demo-corpus"
        subprocess.run([sys.executable, "-m", "openmsd", "demo", "--out", str(given)],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return given.resolve()
