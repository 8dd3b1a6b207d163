"""An adapter's head fitted again without each fold's links: what a learned ranker learns from.

A ranker that learns how far to trust an adapter from the adapter's scores of links the adapter
was fitted on trusts it far too much: on TALN the adapter's own out-of-fold MAP is 43, its MAP
on the train links it has seen 52, and a ranker fitted on the latter gives it three quarters of
its weight. :func:`held_out_vectors` fits the adapter's chosen head once per fold of the papers
(:func:`~openmsd.train.adapter.folds.fold_of`), on the train pairs with no paper in that fold,
and gives every fold's adapted vectors: a paper of fold ``f`` is scored by the head that never
saw its links (stacking's out-of-fold predictions). The adapter a user's answers go through is
the one fitted on every link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from openmsd.corpus import Corpus
from openmsd.models import base_vectors, load_vector_table
from openmsd.train.adapter.examples import positive_rows, triple_rows
from openmsd.train.adapter.fit import FitSettings, fit
from openmsd.train.adapter.folds import fold_of, outside

__all__ = ["HeldOut", "held_out_vectors"]


@dataclass
class HeldOut:
    """Per paper (``ids``) its fold (``folds``), and per fold the papers' vectors through the
    head fitted without that fold's links (``matrices``, L2-normalised rows)."""

    ids: list[str]
    folds: np.ndarray
    matrices: list[np.ndarray]


def held_out_vectors(corpus: Corpus, adapter: Any, folds: int, seed: int = 0,
                     progress: Callable[[int], None] | None = None) -> HeldOut:
    """:class:`HeldOut` of ``adapter`` (an :class:`openmsd.models.Adapter` of ``corpus``): its
    chosen head, pull and epochs fitted ``folds`` times on its own positives and extras;
    ``progress`` is told of each fit. At most the adapter's ``cv_rows`` rows a fit (sampled),
    as its own cross-validation fits a large corpus, on as many threads as it was fitted with
    (one by default: a head's steps are small)."""
    training = adapter.meta["training"]
    settings, chosen = training["settings"], training["chosen"]
    vectors = base_vectors(corpus, [b["key"] for b in adapter.bases], load_vector_table,
                           [int(b["dim"]) for b in adapter.bases])
    where = {paper: i for i, paper in enumerate(vectors.ids)}
    rows = np.vstack([
        positive_rows(corpus, training["positives"], where, training["balanced"],
                      settings["seed"]).rows,
        *(triple_rows(corpus, extra, where).rows for extra in training["extras"])])
    fitting = FitSettings(chosen["head"], chosen["pull"], int(chosen["epochs"] or 1),
                          settings["batch_size"], settings["temperature"],
                          settings["learning_rate"], settings["rank"], settings["seed"])
    fold = fold_of(vectors.ids, folds, seed)
    matrix = torch.as_tensor(vectors.matrix)
    sampler = np.random.default_rng(seed)
    matrices = []
    threads = torch.get_num_threads()
    torch.set_num_threads(int(settings.get("threads") or 1))  # as the adapter was fitted
    try:
        for f in range(folds):
            kept = outside(rows, fold, f)
            if len(kept) > settings["cv_rows"]:
                kept = kept[np.sort(sampler.choice(len(kept), settings["cv_rows"],
                                                   replace=False))]
            matrices.append(fit(matrix, kept, fitting).export().apply(vectors.matrix))
            if progress:
                progress(1)
    finally:
        torch.set_num_threads(threads)
    return HeldOut(list(vectors.ids), fold, matrices)
