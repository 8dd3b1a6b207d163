"""Choosing a head a small corpus can trust: k-fold cross-validation over held-out train
links, the untrained identity a candidate.

Every candidate (head kind, pull, extra examples) is fitted once per fold on the rows outside
the fold and judged after each epoch on the pairs inside it (:mod:`.folds`); the figure of a
(candidate, epoch) is the SDSM average of the per-query AP of all folds pooled (the mean AP of
each task, then the mean of the tasks), with the dev split's queries pooled in too where dev
has at least ``min_dev_queries``. The identity (epoch 0) is judged on the same queries, and
the best figure wins only when it beats the identity's: a head worse than the identity out of
fold is never chosen. The chosen (candidate, epoch)'s fit of each judged fold is kept
(:attr:`Selection.fold_heads`): a head that never saw that fold's links, which a ranker learns
the adapter from without fitting it again (:mod:`.held_out`).

The evaluator is the caller's (``train`` imports no evaluation): given a pool's paper ids,
their vectors (rows in that order) and the relevant pairs (``task``, ``query``, ``doc``), it
returns the per-query AP (``task``, ``query``, ``AP``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from openmsd.models import Head
from openmsd.train.adapter.fit import FitSettings, fitting
from openmsd.train.adapter.folds import fold_of, inside, outside
from openmsd.train.adapter.head import AdapterHead

__all__ = ["Candidate", "Evaluator", "Selection", "average_map", "cross_validate"]

#: (pool ids, their vectors, relevant pairs) -> per-query AP (``task``, ``query``, ``AP``).
Evaluator = Callable[[Sequence[str], np.ndarray, pa.Table], pa.Table]


@dataclass(frozen=True)
class Candidate:
    """One setting to cross-validate: head kind, pull toward the identity, extra examples."""

    head: str
    pull: float
    extras: tuple[str, ...] = ()

    def label(self) -> str:
        extra = "+".join(self.extras)
        return f"{self.head}, pull {self.pull:g}" + (f", {extra}" if extra else "")


@dataclass
class Judged:
    """A pool to judge heads on: its vector positions and relevant pairs."""

    positions: np.ndarray
    pairs: pa.Table


@dataclass
class Selection:
    """What cross-validation chose and the figures it chose on."""

    candidate: Candidate | None  # None: the identity
    epochs: int
    figures: list[dict[str, Any]] = field(default_factory=list)
    identity: float = 0.0
    best: float = 0.0
    queries: dict[str, int] = field(default_factory=dict)
    dev_used: bool = False
    #: per judged train fold, the chosen candidate at the chosen epoch as fitted without that
    #: fold's links (empty for the identity)
    fold_heads: dict[int, Head] = field(default_factory=dict)


def average_map(per_query: pa.Table) -> float:
    """The SDSM average: each task's mean AP (in %), then the mean over tasks with queries."""
    means = []
    for task in sorted(set(per_query["task"].to_pylist())):
        ap = per_query.filter(pc.equal(per_query["task"], task))["AP"].to_numpy(
            zero_copy_only=False)
        means.append(float(np.mean(ap)) * 100)
    return float(np.mean(means)) if means else 0.0


def _judge(evaluator: Evaluator, ids: Sequence[str], matrix: np.ndarray, pool: Judged,
           head: AdapterHead | None) -> pa.Table:
    if pool.pairs.num_rows == 0:
        return pa.table({"task": pa.array([], pa.string()), "query": pa.array([], pa.string()),
                         "AP": pa.array([], pa.float64())})
    vectors = matrix[pool.positions]
    if head is not None:
        vectors = head(torch.as_tensor(vectors)).numpy()
    table = evaluator([ids[p] for p in pool.positions], vectors, pool.pairs)
    return table.select(["task", "query", "AP"])


def _fold_pools(ids: Sequence[str], train: np.ndarray, folds: np.ndarray, judged: int,
                pairs: pa.Table, where: dict[str, int], max_queries: int | None,
                seed: int) -> list[Judged]:
    """The pools of the first ``judged`` folds: the fold's papers, the pairs inside it (of at
    most ``max_queries`` queries, a seeded sample)."""
    keys = pa.array(list(where.keys()), pa.string())
    values = np.fromiter(where.values(), np.int64, len(where))
    queries, docs = (values[pc.index_in(pairs[c], value_set=keys).to_numpy(
        zero_copy_only=False).astype(np.int64)] for c in ("query", "doc"))
    pools = []
    for fold in range(judged):
        mask = inside(queries, docs, folds, fold)
        chosen = np.unique(queries[mask])
        if max_queries is not None and len(chosen) > max_queries:
            chosen = np.random.default_rng([seed, fold]).choice(chosen, max_queries,
                                                                replace=False)
            mask &= np.isin(queries, chosen)
        pools.append(Judged(train[folds[train] == fold], pairs.filter(pa.array(mask))))
    return pools


def _sample(rows: np.ndarray, limit: int | None, seed: int) -> np.ndarray:
    """At most ``limit`` of ``rows`` (a seeded sample, in their order)."""
    if limit is None or len(rows) <= limit:
        return rows
    keep = np.sort(np.random.default_rng(seed).choice(len(rows), limit, replace=False))
    return rows[keep]


def cross_validate(ids: Sequence[str], matrix: np.ndarray, train: np.ndarray,
                   rows: dict[str, np.ndarray], train_pairs: pa.Table, dev: Judged | None,
                   candidates: Sequence[Candidate], settings: FitSettings, k: int,
                   evaluator: Evaluator, min_dev_queries: int = 100,
                   step: Callable[[int], None] | None = None, judged_folds: int | None = None,
                   max_rows: int | None = None, max_queries: int | None = None,
                   patience: int | None = None) -> Selection:
    """Choose a candidate and its epochs (1 … ``settings.epochs``), or the identity.

    ``ids``/``matrix``: every paper with vectors; ``train``: the positions of the train
    split's papers; ``rows``: the training rows by source (``positives`` and any extra of the
    candidates); ``train_pairs``: the train split's relevant pairs; ``dev``: the dev pool
    (pooled in when it has ``min_dev_queries`` queries); ``step(n)``: progress, one per fitted
    epoch. A large corpus is judged on ``judged_folds`` of the ``k`` folds only, each fit on
    at most ``max_rows`` rows and each fold on at most ``max_queries`` queries (seeded
    samples). With ``patience``, a candidate's fits stop after that many epochs without a
    better figure than its best."""
    where = {paper: i for i, paper in enumerate(ids)}
    folds = np.full(len(ids), -1, np.int64)
    folds[train] = fold_of([ids[i] for i in train], k, settings.seed)
    pools = _fold_pools(ids, train, folds, judged_folds or k, train_pairs, where, max_queries,
                        settings.seed)
    dev_queries = 0 if dev is None else len(set(dev.pairs["query"].to_pylist()))
    use_dev = dev is not None and dev_queries >= min_dev_queries
    vectors = torch.as_tensor(matrix)

    def fold_rows(candidate: Candidate, fold: int | None) -> np.ndarray:
        parts = [rows["positives"], *(rows[e] for e in candidate.extras)]
        joined = np.vstack([p for p in parts if len(p)]) if any(len(p) for p in parts) \
            else np.zeros((0, 3), np.int64)
        chosen = joined if fold is None else outside(joined, folds, fold)
        return _sample(chosen, max_rows, settings.seed + (fold or 0))

    identity = [_judge(evaluator, ids, matrix, pool, None) for pool in pools]
    if use_dev:
        assert dev is not None
        identity.append(_judge(evaluator, ids, matrix, dev, None))
    base = average_map(pa.concat_tables(identity))
    figures: list[dict[str, Any]] = [{"candidate": "identity", "epochs": 0,
                                      "map": round(base, 4)}]
    best: tuple[float, Candidate | None, int] = (base, None, 0)
    best_heads: dict[int, Head] = {}
    # dev's links are never learnt from: a large corpus judges dev with its judged fold's fit
    # (each fit of max_rows rows alike), a small one with a fit on every train row
    shared_dev = use_dev and max_rows is not None
    judged = [*range(len(pools)), *(["dev"] if use_dev and not shared_dev else [])]
    for candidate in candidates:
        chosen = replace(settings, head=candidate.head, pull=candidate.pull)
        runs = [(fold, fitting(vectors, fold_rows(candidate, None if fold == "dev"
                                                  else int(fold)), chosen))
                for fold in judged]  # every judged fit in step, an epoch at a time
        mine = 0  # the candidate's best epoch so far
        for epoch in range(1, settings.epochs + 1):
            tables, heads = [], {}
            for fold, run in runs:
                head = next(run)
                with torch.no_grad():
                    tables.append(_judge(evaluator, ids, matrix,
                                         dev if fold == "dev" else pools[int(fold)], head))
                    if shared_dev and fold == 0:
                        tables.append(_judge(evaluator, ids, matrix, dev, head))
                if fold != "dev":
                    heads[int(fold)] = head.export()
                if step:
                    step(1)
            value = average_map(pa.concat_tables(tables))
            figures.append({"candidate": candidate.label(), "epochs": epoch,
                            "map": round(value, 4)})
            if value > best[0] + 1e-9:
                best = (value, candidate, epoch)
                best_heads = heads
            previous = [f["map"] for f in figures[-epoch:-1]]
            if not previous or round(value, 4) > max(previous):
                mine = epoch
            if patience is not None and epoch - mine >= patience:
                break  # no better figure for `patience` epochs: the candidate stops here
    queries = {"train_folds": sum(len(set(p.pairs["query"].to_pylist())) for p in pools),
               "dev": dev_queries}
    return Selection(best[1], best[2], figures, round(base, 4), round(best[0], 4), queries,
                     use_dev, best_heads)
