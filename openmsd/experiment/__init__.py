"""Experiments, above ``train`` and ``eval``: training runs with the dev evaluators they are
selected on (:mod:`.dev`), grids of runs scored on the SDSM tasks (:mod:`.grid`), and the
fusion weights fitted on the train and dev splits (:mod:`.tune`, over the pools of :mod:`.pools`,
by the weight search of :mod:`.weights`), with the free-text fallback
chosen on their citation contexts by cross-validation (:mod:`.contexts`).

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.experiment.contexts import citation_contexts
    from openmsd.experiment.dev import (
        all_locations_signals,
        dev_evaluator,
        prefetch_matrix,
        train_model,
    )
    from openmsd.experiment.grid import load_experiment, run_experiment
    from openmsd.experiment.tune import tune_fusion
    from openmsd.experiment.weights import TuneError

_WHERE: dict[str, str] = {
    "TuneError": "weights",
    "all_locations_signals": "dev",
    "citation_contexts": "contexts",
    "dev_evaluator": "dev",
    "load_experiment": "grid",
    "prefetch_matrix": "dev",
    "run_experiment": "grid",
    "train_model": "dev",
    "tune_fusion": "tune",
}

__all__ = [
    "TuneError", "all_locations_signals", "citation_contexts", "dev_evaluator",
    "load_experiment", "prefetch_matrix", "run_experiment", "train_model", "tune_fusion",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
