"""Training (DESIGN.md's ``train`` stage): the SentenceTransformer recipes (:mod:`.recipes`:
pretrain-cl, mspt, specter, scincl), their configs (:mod:`.config`) and data (:mod:`.data`),
adapters over stored vectors (:mod:`.adapter`),
and MP-BERT4CR's trainer, samplers and losses (:mod:`.citrec`; its data and ranking stages are
:mod:`openmsd.rank.citrec`'s, named here too). A run takes its evaluator from its caller
(:mod:`openmsd.experiment`): nothing here imports ``openmsd.eval``.
"""

from openmsd.rank import (
    TRAIN_MANIFEST,
    CitrecData,
    CitrecDataError,
    Location,
    PaperContexts,
    candidate_mask,
    graph_scores,
    profile_scores,
    recall_at,
    split_locations,
    two_stage,
)
from openmsd.rank import load_citrec as load
from openmsd.train.adapter import (
    AdapterConfig,
    AdapterDataError,
    adapter_name,
    held_out_vectors,
    refresh_adapters,
    stale_adapters,
    train_adapter,
)
from openmsd.train.citrec.prefetch import (
    PrefetchConfig,
    PrefetchTask,
    fit_head,
    prefetch_task,
    select_head,
    train_prefetch_head,
)
from openmsd.train.citrec.train import CitrecConfig, CitrecRankers, train
from openmsd.train.config import ConfigError, TrainConfig, check_keys, read_file
from openmsd.train.data import relation_examples
from openmsd.train.recipes import load_base, make_loss, summaries
from openmsd.train.run import TRAIN_ERRORS, describe, load_config, run_recipe

__all__ = [
    "TRAIN_ERRORS", "TRAIN_MANIFEST", "AdapterConfig", "AdapterDataError", "CitrecConfig",
    "CitrecData", "CitrecDataError", "CitrecRankers", "ConfigError", "Location",
    "PaperContexts", "PrefetchConfig", "PrefetchTask", "TrainConfig", "adapter_name",
    "candidate_mask", "check_keys", "describe", "fit_head", "graph_scores", "held_out_vectors",
    "load", "load_base", "load_config", "make_loss", "prefetch_task", "profile_scores",
    "read_file", "recall_at", "refresh_adapters", "relation_examples", "run_recipe",
    "select_head", "split_locations", "stale_adapters", "summaries", "train", "train_adapter",
    "train_prefetch_head", "two_stage",
]
