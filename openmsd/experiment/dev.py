"""What training gets from its caller: the dev evaluator of a recipe, built here, above both
``train`` and ``eval`` (train never imports eval), and the one call that trains with it.

* a SentenceTransformer recipe: :class:`~openmsd.eval.sdsm_evaluator.SDSMEvaluator` on the
  config's dev split (the texts enriched as the config says), with the loaded model's passage
  prompt, built once training has checked its config and data;
* ``citrec``: the prefetch ranker (:func:`prefetch_matrix`, the ``hybrid`` fusion of
  :mod:`openmsd.eval.citrec`) that hard negatives are drawn from and fusion is weighed against,
  and the own-sentence scores the rerank stage's learned fusion reads
  (:func:`sentence_signals`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.eval import (
    PREFETCH,
    Queries,
    SDSMError,
    SDSMEvaluator,
    load_pool,
    score_rows,
)
from openmsd.rank import (
    CONTEXT_SIGNALS,
    SENTENCE_SIGNALS,
    CitrecData,
    Location,
    candidate_mask,
)
from openmsd.train import (
    CitrecConfig,
    CitrecRankers,
    ConfigError,
    TrainConfig,
    run_recipe,
    summaries,
)


def prefetch_matrix(data: CitrecData, locations: list[Location], candidates: list[str],
                    split: str, ranker: str = PREFETCH) -> np.ndarray:
    """The prefetch's scores (queries × candidates, masked pairs −inf) of ``locations``
    (``ranker``: another prefetch than :data:`~openmsd.eval.citrec.PREFETCH`)."""
    column = {p: i for i, p in enumerate(candidates)}
    rows = score_rows(ranker, data, Queries(locations, candidates, column))
    return np.where(candidate_mask(data, locations, candidates, split),
                    np.asarray(rows, np.float64), -np.inf)


def all_locations_prefetch(data: CitrecData, candidates: list[str], split: str) -> np.ndarray:
    """:func:`prefetch_matrix` of all of ``data.locations``: the citrec trainer's
    :data:`~openmsd.train.citrec.train.Prefetch`."""
    return prefetch_matrix(data, data.locations, candidates, split)


def sentence_signals(data: CitrecData, locations: list[Location], candidates: list[str],
                     known: Collection[str] = ()) -> dict[str, np.ndarray]:
    """{feature: scores (queries × candidates)} of each location's own sentence by the
    rankers of :data:`SENTENCE_SIGNALS` and of its fundamental context by those of
    :data:`CONTEXT_SIGNALS`, but the ``known`` features (unmasked: the rerank stage only reads
    the prefetched candidates)."""
    queries = Queries(locations, candidates, {p: i for i, p in enumerate(candidates)})
    own = [loc.sentences[loc.at] for loc in locations]
    texts: dict[str, list[str] | None] = {**dict.fromkeys(SENTENCE_SIGNALS, own),
                                          **dict.fromkeys(CONTEXT_SIGNALS)}
    return {feature: np.asarray(score_rows(name, data, queries, texts=texts[feature]),
                                np.float64)
            for feature, name in {**SENTENCE_SIGNALS, **CONTEXT_SIGNALS}.items()
            if feature not in known}


def all_locations_signals(data: CitrecData, candidates: list[str], split: str,
                          known: Collection[str] = ()) -> dict[str, np.ndarray]:
    """:func:`sentence_signals` of all of ``data.locations``: the citrec trainer's
    :data:`~openmsd.train.citrec.train.Signals`."""
    return sentence_signals(data, data.locations, candidates, known)


def dev_evaluator(config: TrainConfig | CitrecConfig) -> Any:
    """The evaluator :func:`openmsd.train.run_recipe` takes for ``config``: for a
    SentenceTransformer recipe, the builder of its SDSM evaluator for the loaded base model
    (ConfigError naming ``dev_split`` when that split has nothing to select on)."""
    if isinstance(config, CitrecConfig):
        return CitrecRankers(all_locations_prefetch, all_locations_signals)

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
