"""Adapters: small heads trained in seconds on a corpus's stored vectors and its own
citations, the CPU path of OpenMSD's objectives (``openmsd train adapter``).

One concept a module, as sentence-transformers' ``losses``: the heads (:mod:`.head`), eq. 1
(:mod:`.objective`), the rows learnt from (:mod:`.examples`), the folds (:mod:`.folds`), the
fit (:mod:`.fit`), model selection (:mod:`.selection`) and the run (:mod:`.run`). The evaluator
that judges the folds comes from the caller.
"""

from __future__ import annotations

from openmsd.train.adapter.examples import EXTRAS, AdapterDataError
from openmsd.train.adapter.fit import FitSettings, fit
from openmsd.train.adapter.head import HEADS, AdapterHead, LinearHead, LowRankHead, make_head
from openmsd.train.adapter.held_out import HeldOut, held_out_vectors
from openmsd.train.adapter.objective import info_nce
from openmsd.train.adapter.refresh import refresh_adapters, stale_adapters
from openmsd.train.adapter.run import AdapterConfig, adapter_name, train_adapter
from openmsd.train.adapter.selection import Candidate, Evaluator, Selection, cross_validate

__all__ = [
    "EXTRAS", "HEADS", "AdapterConfig", "AdapterDataError", "AdapterHead", "Candidate",
    "Evaluator", "FitSettings", "HeldOut", "LinearHead", "LowRankHead", "Selection",
    "adapter_name", "cross_validate", "fit", "held_out_vectors", "info_nce", "make_head",
    "refresh_adapters", "stale_adapters", "train_adapter",
]
