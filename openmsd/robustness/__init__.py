"""Robustness of the models to textual change: the 32 textual neighbours, Tasks I / II, AOP
and the report.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmsd.robustness.suite import RobustnessError, run_suite

_WHERE: dict[str, str] = {
    "RobustnessError": "suite",
    "run_suite": "suite",
}

__all__ = [
    "RobustnessError", "run_suite",
]


def __getattr__(name: str) -> Any:
    """Import an exported name from its submodule on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
