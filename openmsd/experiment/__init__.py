"""Experiments, above ``train`` and ``eval``: training runs with the dev evaluators they are
selected on (:mod:`.dev`), grids of runs scored on the SDSM tasks (:mod:`.grid`), the ranker
learned from a corpus's links (:mod:`.ranker`), and the citation contexts of the train and dev
papers as free-text queries (:mod:`.contexts`).

The face is lazy (PEP 562): a name loads its own submodule on first use. The whole face
imports torch and sentence-transformers (training runs), which reading citation contexts
(:mod:`.contexts`) does not need.
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
    from openmsd.experiment.report import adapter_line, prefetch_line, ranker_lines
    from openmsd.experiment.weights import TuneError

__all__ = [
    "TuneError",
    "adapter_line",
    "all_locations_signals",
    "citation_contexts",
    "dev_evaluator",
    "load_experiment",
    "prefetch_line",
    "prefetch_matrix",
    "ranker_lines",
    "run_experiment",
    "train_model",
    "train_ranker",
]

__getattr__, __dir__ = lazy_face(__name__)
