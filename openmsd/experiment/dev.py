"""What training gets from its caller: the dev evaluator of a recipe, built here, above both
``train`` and ``eval`` (train never imports eval), and the one call that trains with it.

* a SentenceTransformer recipe: :class:`~openmsd.eval.sdsm_evaluator.SDSMEvaluator` on the
  config's dev split (the texts enriched as the config says), with the loaded model's passage
  prompt, built once training has checked its config and data;
* ``citrec``: the prefetch ranker (:func:`prefetch_matrix`, the ``hybrid`` fusion of
  :mod:`openmsd.eval.citrec`) that hard negatives are drawn from and fusion is weighed against.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openmsd.corpus.store import Corpus
from openmsd.eval.citrec import PREFETCH, Queries, score_rows
from openmsd.eval.sdsm import SDSMError, load_pool
from openmsd.eval.sdsm_evaluator import SDSMEvaluator
from openmsd.train import ConfigError, TrainConfig, run_recipe
from openmsd.train.citrec.data import CitrecData, Location
from openmsd.train.citrec.train import CitrecConfig, candidate_mask
from openmsd.train.recipes import summaries


def prefetch_matrix(data: CitrecData, locations: list[Location], candidates: list[str],
                    split: str) -> np.ndarray:
    """The prefetch's scores (queries × candidates, masked pairs −inf) of ``locations``."""
    column = {p: i for i, p in enumerate(candidates)}
    rows = score_rows(PREFETCH, data, Queries(locations, candidates, column))
    return np.where(candidate_mask(data, locations, candidates, split),
                    np.asarray(rows, np.float64), -np.inf)


def all_locations_prefetch(data: CitrecData, candidates: list[str], split: str) -> np.ndarray:
    """:func:`prefetch_matrix` of all of ``data.locations``: the citrec trainer's
    :data:`~openmsd.train.citrec.train.Prefetch`."""
    return prefetch_matrix(data, data.locations, candidates, split)


def dev_evaluator(config: TrainConfig | CitrecConfig) -> Any:
    """The evaluator :func:`openmsd.train.run_recipe` takes for ``config``: for a
    SentenceTransformer recipe, the builder of its SDSM evaluator for the loaded base model
    (ConfigError naming ``dev_split`` when that split has nothing to select on)."""
    if isinstance(config, CitrecConfig):
        return all_locations_prefetch

    def build(model: Any) -> SDSMEvaluator:
        enriched = summaries(config)
        try:
            pool = load_pool(Corpus(config.corpus), config.dev_split, summaries=enriched)
            return SDSMEvaluator(pool, prompt=model.prompts.get("passage", ""))
        except (SDSMError, ValueError) as error:
            raise ConfigError(f"dev_split: {error}") from None
    return build


def train_model(config: TrainConfig | CitrecConfig, progress: bool = True) -> dict[str, Any]:
    """Train ``config`` with its dev evaluator; the manifest."""
    return run_recipe(config, dev_evaluator(config), progress)
