"""Robustness of the models to textual change: the 32 textual neighbours, Tasks I / II, AOP
and the report.
"""

from openmsd.robustness.suite import RobustnessError, run_suite

__all__ = [
    "RobustnessError", "run_suite",
]
