"""Experiments, above ``train`` and ``eval``: training runs with the dev evaluators they are
selected on (:mod:`.dev`), grids of runs scored on the SDSM tasks (:mod:`.grid`), and the
ranker learned from a corpus's links (:mod:`.ranker`), the
fusion weights fitted on the train and dev splits (:mod:`.tune`), with the free-text fallback
chosen on their citation contexts by cross-validation (:mod:`.contexts`).

The face is lazy (PEP 562): a name loads its own submodule on first use. The whole face
imports torch and sentence-transformers (training runs), which fitting fusion weights
(:mod:`.tune`, :mod:`.contexts`) does not need.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.experiment.contexts import citation_contexts
    from openmsd.experiment.dev import (
        all_locations_signals,
        dev_evaluator,
        prefetch_matrix,
        train_model,
    )
    from openmsd.experiment.grid import load_experiment, run_experiment
    from openmsd.experiment.ranker import train_ranker
    from openmsd.experiment.tune import tune_fusion
    from openmsd.experiment.weights import TuneError

__all__ = [
    "TuneError",
    "all_locations_signals",
    "citation_contexts",
    "dev_evaluator",
    "load_experiment",
    "prefetch_matrix",
    "run_experiment",
    "train_model",
    "train_ranker",
    "tune_fusion",
]

__getattr__, __dir__ = lazy_face(__name__)
