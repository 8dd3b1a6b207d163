"""Robustness of the models to textual change: the 32 textual neighbours, Tasks I / II, AOP
and the report.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.robustness.suite import RobustnessError, run_suite

_WHERE: dict[str, str] = {
    "RobustnessError": "suite",
    "run_suite": "suite",
}

__all__ = [
    "RobustnessError", "run_suite",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
