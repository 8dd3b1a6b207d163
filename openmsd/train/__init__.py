"""Training (DESIGN.md's ``train`` stage): the SentenceTransformer recipes (:mod:`.recipes`:
pretrain-cl, mspt, specter, scincl), their configs (:mod:`.config`) and data (:mod:`.data`),
adapters over stored vectors (:mod:`.adapter`),
and MP-BERT4CR's trainer, samplers and losses (:mod:`.citrec`; its data and ranking stages are
:mod:`openmsd.rank.citrec`'s, named by the rank face). A run takes its evaluator from its caller
(:mod:`openmsd.experiment`): nothing here imports ``openmsd.eval``.
"""

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
    "TRAIN_ERRORS", "AdapterConfig", "AdapterDataError", "CitrecConfig", "CitrecRankers",
    "ConfigError", "PrefetchConfig", "PrefetchTask", "TrainConfig", "adapter_name", "check_keys",
    "describe", "fit_head", "held_out_vectors", "load_base", "load_config", "make_loss",
    "prefetch_task", "read_file", "refresh_adapters", "relation_examples", "run_recipe",
    "select_head", "stale_adapters", "summaries", "train", "train_adapter",
    "train_prefetch_head",
]
