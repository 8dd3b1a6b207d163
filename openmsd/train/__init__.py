"""Training (DESIGN.md's ``train`` stage): the SentenceTransformer recipes (:mod:`.recipes`:
pretrain-cl, mspt, specter, scincl), their configs (:mod:`.config`) and data (:mod:`.data`),
adapters over stored vectors (:mod:`.adapter`),
and MP-BERT4CR's trainer, samplers, data and losses (:mod:`.citrec`). A run takes its evaluator
from its caller (:mod:`openmsd.experiment`): nothing here imports ``openmsd.eval``.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.train.adapter import (
        AdapterConfig,
        AdapterDataError,
        adapter_name,
        refresh_adapters,
        stale_adapters,
        train_adapter,
    )
    from openmsd.train.citrec.data import CitrecData, CitrecDataError, Location, load
    from openmsd.train.citrec.train import (
        TRAIN_MANIFEST,
        CitrecConfig,
        CitrecRankers,
        PaperContexts,
        candidate_mask,
        graph_scores,
        profile_scores,
        recall_at,
        split_locations,
        train,
        two_stage,
    )
    from openmsd.train.config import ConfigError, TrainConfig, check_keys, read_file
    from openmsd.train.data import relation_examples
    from openmsd.train.recipes import load_base, make_loss, summaries
    from openmsd.train.run import TRAIN_ERRORS, describe, load_config, run_recipe

_WHERE: dict[str, str] = {
    "AdapterConfig": "adapter",
    "AdapterDataError": "adapter",
    "adapter_name": "adapter",
    "train_adapter": "adapter",
    "refresh_adapters": "adapter",
    "stale_adapters": "adapter",
    "CitrecConfig": "citrec.train",
    "CitrecRankers": "citrec.train",
    "profile_scores": "citrec.train",
    "graph_scores": "citrec.train",
    "recall_at": "citrec.train",
    "CitrecData": "citrec.data",
    "CitrecDataError": "citrec.data",
    "ConfigError": "config",
    "Location": "citrec.data",
    "PaperContexts": "citrec.train",
    "TRAIN_ERRORS": "run",
    "TRAIN_MANIFEST": "citrec.train",
    "TrainConfig": "config",
    "candidate_mask": "citrec.train",
    "check_keys": "config",
    "describe": "run",
    "load": "citrec.data",
    "load_base": "recipes",
    "load_config": "run",
    "make_loss": "recipes",
    "read_file": "config",
    "relation_examples": "data",
    "run_recipe": "run",
    "split_locations": "citrec.train",
    "summaries": "recipes",
    "train": "citrec.train",
    "two_stage": "citrec.train",
}

__all__ = [
    "TRAIN_ERRORS", "TRAIN_MANIFEST", "AdapterConfig", "AdapterDataError", "CitrecConfig",
    "CitrecData", "CitrecDataError", "CitrecRankers", "ConfigError", "Location", "PaperContexts",
    "TrainConfig", "adapter_name", "candidate_mask", "check_keys", "describe", "graph_scores",
    "load", "load_base", "load_config", "make_loss", "profile_scores", "read_file", "recall_at",
    "refresh_adapters", "relation_examples", "run_recipe", "split_locations", "stale_adapters",
    "summaries", "train", "train_adapter", "two_stage",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
