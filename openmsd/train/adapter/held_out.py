"""An adapter's head as fitted without the links it is judged on: what a learned ranker learns.

A ranker that learns how far to trust an adapter from the adapter's scores of links the adapter
was fitted on trusts it far too much: on TALN the adapter's own out-of-fold MAP is 43, its MAP
on the train links it has seen 52, and a ranker fitted on the latter gives it three quarters of
its weight. :func:`held_out_vectors` gives every paper's vectors through heads that never saw
the links of the papers they score (stacking's out-of-fold predictions):

* the adapter's own cross-validation fits, when it kept one for every fold of the papers
  (:func:`~openmsd.train.adapter.folds.fold_of`; ``folds.safetensors``, written by
  ``openmsd train adapter``): the chosen head at the chosen epoch, fitted on the train rows
  with no paper in that fold; nothing is fitted again;
* else, given the papers a ranker will query (``queries``), one head fitted on the rows that
  touch none of them: it scores every query out of fold;
* else the chosen head fitted once per fold that has no kept fit, on the rows with no paper
  in that fold.

The adapter a user's answers go through is the one fitted on every link.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from openmsd.corpus import Corpus
from openmsd.models import base_vectors, load_vector_table, read_fold_heads
from openmsd.train.adapter.examples import positive_rows, triple_rows
from openmsd.train.adapter.fit import FitSettings, fit
from openmsd.train.adapter.folds import fold_of, outside

__all__ = ["HeldOut", "held_out_vectors", "kept_folds"]

#: The share of the adapter's rows one head without every queried paper's links must keep;
#: with fewer, each fold's papers get a head fitted without that fold's links.
MIN_KEPT = 0.5


@dataclass
class HeldOut:
    """Per paper (``ids``) its fold (``folds``), and per fold the papers' vectors through a
    head fitted without that fold's links (``matrices``, L2-normalised rows)."""

    ids: list[str]
    folds: np.ndarray
    matrices: list[np.ndarray]


def kept_folds(adapter: Any, folds: int, seed: int) -> dict[int, Any]:
    """The adapter's kept cross-validation fits (fold -> :class:`openmsd.models.Head`) where
    its folds are these (``folds`` folds of the papers, seeded with ``seed``); else none."""
    recorded = adapter.meta.get("training", {}).get("held_out") or {}
    if recorded.get("folds") != folds or recorded.get("seed") != seed:
        return {}
    return {f: head for f, head in read_fold_heads(adapter).items() if f < folds}


def held_out_vectors(corpus: Corpus, adapter: Any, folds: int, seed: int = 0,
                     progress: Callable[[int], None] | None = None,
                     queries: Collection[str] | None = None) -> HeldOut:
    """:class:`HeldOut` of ``adapter`` (an :class:`openmsd.models.Adapter` of ``corpus``) in
    ``folds`` folds seeded with ``seed``: its kept fits where it has every fold's; else, with
    ``queries`` (paper ids), one fold, the head fitted without any of their links (honest for
    those papers only) where that keeps :data:`MIN_KEPT` of the rows; else a head fitted per
    fold without a kept fit. A fit is of the adapter's chosen head, pull and epochs on its own
    positives and extras, at most its ``cv_rows`` rows (sampled), on as many threads as it was
    fitted with (one by default: a head's steps are small); ``progress`` is told of each
    fit."""
    training = adapter.meta["training"]
    settings, chosen = training["settings"], training["chosen"]
    vectors = base_vectors(corpus, [b["key"] for b in adapter.bases], load_vector_table,
                           [int(b["dim"]) for b in adapter.bases])
    ids = list(vectors.ids)
    fold = fold_of(ids, folds, seed)
    kept = kept_folds(adapter, folds, seed)
    if len(kept) == folds:
        return HeldOut(ids, fold, [kept[f].apply(vectors.matrix) for f in range(folds)])
    where = {paper: i for i, paper in enumerate(ids)}
    rows = np.vstack([
        positive_rows(corpus, training["positives"], where, training["balanced"],
                      settings["seed"]).rows,
        *(triple_rows(corpus, extra, where).rows for extra in training["extras"])])
    fitting = FitSettings(chosen["head"], chosen["pull"], int(chosen["epochs"] or 1),
                          settings["batch_size"], settings["temperature"],
                          settings["learning_rate"], settings["rank"], settings["seed"])
    matrix = torch.as_tensor(vectors.matrix)
    sampler = np.random.default_rng(seed)

    def fitted_on(chosen_rows: np.ndarray) -> np.ndarray:
        """The papers' vectors through the head fitted on ``chosen_rows`` (sampled to the
        adapter's ``cv_rows``)."""
        if len(chosen_rows) > settings["cv_rows"]:
            chosen_rows = chosen_rows[np.sort(sampler.choice(
                len(chosen_rows), settings["cv_rows"], replace=False))]
        out = fit(matrix, chosen_rows, fitting).export().apply(vectors.matrix)
        if progress:
            progress(1)
        return out

    threads = torch.get_num_threads()
    torch.set_num_threads(int(settings.get("threads") or 1))  # as the adapter was fitted
    try:
        if queries is not None:
            asked = np.zeros(len(ids), np.int64)
            asked[[where[q] for q in queries if q in where]] = 1
            # where the queries touch most links (a small corpus queries nearly every train
            # paper), a head without them all learns almost nothing: one head a fold instead
            without = outside(rows, asked, 1)
            if len(without) >= MIN_KEPT * len(rows):
                return HeldOut(ids, np.zeros(len(ids), np.int64), [fitted_on(without)])
        matrices = [kept[f].apply(vectors.matrix) if f in kept
                    else fitted_on(outside(rows, fold, f)) for f in range(folds)]
    finally:
        torch.set_num_threads(threads)
    return HeldOut(ids, fold, matrices)
