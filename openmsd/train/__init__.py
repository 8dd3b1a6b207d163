"""Training (DESIGN.md's ``train`` stage): the SentenceTransformer recipes (:mod:`.recipes`:
pretrain-cl, mspt, specter, scincl), their configs (:mod:`.config`) and data (:mod:`.data`),
and MP-BERT4CR's trainer, samplers, data and losses (:mod:`.citrec`). A run takes its evaluator
from its caller (:mod:`openmsd.experiment`): nothing here imports ``openmsd.eval``."""

from openmsd.train.config import ConfigError, TrainConfig
from openmsd.train.run import TRAIN_ERRORS, describe, load_config, run_recipe

__all__ = ["TRAIN_ERRORS", "ConfigError", "TrainConfig", "describe", "load_config",
           "run_recipe"]
