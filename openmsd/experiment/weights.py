"""Fusions scored on judged pairs: the MAP and per-query AP of a pool ranked by score
matrices (:class:`Judged`), pooled over pools by their queries (:func:`pooled`; what
``openmsd train ranker`` scores its candidates by), and a fusion's AP per query over several
pools (:func:`held_out_ap`).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from openmsd.rank import fuse

__all__ = ["Judged", "TuneError", "ascending_keys", "held_out_ap", "pooled"]


class TuneError(ValueError):
    """Nothing to learn from: no dev queries, no relations."""


class Judged:
    """A pool's relevant pairs as index arrays, for :meth:`objective`: the pair's query and
    document (pool positions), the score matrices' row of its query (``row``: the query's
    position among the pool's ``rows`` where it has them, a :class:`TuningPool`; else the
    query's own position) and its (task, query) group."""

    def __init__(self, pool: Any, task: str | None):
        judged = pool.judgements
        if task is not None:
            judged = judged.filter(pc.equal(judged["task"], task))
        position = {paper: i for i, paper in enumerate(pool.ids)}
        self.query = np.array([position[q] for q in judged["query"].to_pylist()], np.int64)
        self.doc = np.array([position[d] for d in judged["doc"].to_pylist()], np.int64)
        rows = getattr(pool, "rows", None)
        self.row = self.query if rows is None else np.searchsorted(rows, self.query)
        # the matrices' columns: every pool paper, or per row its candidates (TuningPool)
        self.columns = getattr(pool, "columns", None)
        if self.columns is None:
            self.column = self.doc
        else:
            match = self.columns[self.row] == self.doc[:, None]
            self.column = np.where(match.any(axis=1), match.argmax(axis=1), -1)
        tasks = judged["task"].to_pylist()
        keys = list(zip(tasks, self.query.tolist(), strict=True))
        groups = {key: i for i, key in enumerate(dict.fromkeys(keys))}
        self.group = np.array([groups[k] for k in keys], np.int64)
        names = sorted(set(tasks))
        task_of = {key[0]: names.index(key[0]) for key in groups}
        self.group_task = np.array([task_of[key[0]] for key in groups], np.int64)
        self.tasks = len(names)

    @classmethod
    def of_pairs(cls, query: Sequence[int], doc: Sequence[int]) -> Judged:
        """Relevant (query row, document column) pairs of one task, each query its own group
        (free-text queries against a collection: citation contexts and their cited papers)."""
        judged = cls.__new__(cls)
        judged.query, judged.doc = np.asarray(query, np.int64), np.asarray(doc, np.int64)
        judged.row, judged.column, judged.columns = judged.query, judged.doc, None
        keys = {q: i for i, q in enumerate(dict.fromkeys(judged.query.tolist()))}
        judged.group = np.array([keys[q] for q in judged.query.tolist()], np.int64)
        judged.group_task = np.zeros(len(keys), np.int64)
        judged.tasks = 1
        return judged

    def objective(self, matrix: np.ndarray) -> float:
        """MAP in % (the mean over the tasks of the mean AP of their queries) when the pool is
        ranked by ``matrix`` (a row per query, a column per pool paper, the query paper itself
        ``-inf``); ties as trec_eval breaks
        them (the higher id first), as :func:`openmsd.eval.sdsm.model_ranks` does.

        >>> import pyarrow as pa
        >>> from types import SimpleNamespace
        >>> pool = SimpleNamespace(ids=["a", "b", "c"], judgements=pa.table(
        ...     {"task": ["citation"], "query": ["a"], "doc": ["c"]}))
        >>> scores = np.array([[-np.inf, 2, 1], [0, -np.inf, 0], [0, 0, -np.inf]])
        >>> Judged(pool, None).objective(scores)
        50.0
        """
        if not len(self.query):
            return 0.0
        ap = self.average_precision(matrix)
        per_task = np.bincount(self.group_task, ap) / np.bincount(self.group_task)
        return 100 * float(per_task.mean())

    def average_precision(self, matrix: np.ndarray) -> np.ndarray:
        """The AP (a fraction) of each (task, query) group, in group order, when the pool is
        ranked by ``matrix`` (see :meth:`objective`)."""
        rank = self.ranks(matrix)
        # AP of a group: the mean over its relevant papers of (their place among them) / rank
        order = np.lexsort((rank, self.group))
        group, rank = self.group[order], rank[order]
        first = np.searchsorted(group, group)
        precision = (np.arange(len(group)) - first + 1) / rank
        return np.bincount(group, precision) / np.bincount(group)

    def ranks(self, matrix: np.ndarray) -> np.ndarray:
        """Each relevant pair's rank (1 first; ``inf`` outside its query's candidates) when
        each judged row of ``matrix`` (read as float32) is sorted by score, then by document
        (the higher first): one sort a query row, then a binary search a relevant pair."""
        used, slot, by_row, bounds = self._by_row
        keys = ascending_keys(np.add(matrix[used], np.float32(0), dtype=np.float32),
                              self._documents(matrix.shape[1]))
        wanted = keys[slot, np.maximum(self.column, 0)]
        keys.sort(axis=1)
        rank = np.empty(len(slot), np.float64)
        for row, (start, stop) in enumerate(itertools.pairwise(bounds)):
            pairs = by_row[start:stop]
            rank[pairs] = keys.shape[1] + 1 - np.searchsorted(keys[row], wanted[pairs], "right")
        rank[self.column < 0] = np.inf  # not among the query's candidates: never retrieved
        return rank

    @functools.cached_property
    def _by_row(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The judged rows of the matrices (sorted), each pair's place among them, the pairs in
        that order and where each row's pairs start there."""
        used, slot = np.unique(self.row, return_inverse=True)
        by_row = np.argsort(slot, kind="stable")
        return used, slot, by_row, np.searchsorted(slot[by_row], np.arange(len(used) + 1))

    def _documents(self, columns: int) -> np.ndarray:
        """The document id of each judged row's columns (-1: none), as :func:`ascending_keys`
        reads them (kept: every objective of the pool reads the same)."""
        if getattr(self, "_ids", None) is None or self._ids.shape[1] != columns:
            used = self._by_row[0]
            self._ids = (np.broadcast_to(np.arange(columns), (len(used), columns))
                         if self.columns is None else self.columns[used])
        return self._ids


def ascending_keys(scores: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """One integer a (score, document) of ``scores`` (float32, no -0.0) and ``ids`` (document
    ids, -1: no document), ascending as the documents rank from last to first: the lower score
    first, then the lower id (trec_eval ranks ties by the higher id); no document below all.

    >>> ascending_keys(np.array([[1.0, 3.0, 1.0, -np.inf]], np.float32),
    ...                np.array([[0, 1, 2, -1]])).argsort().tolist()
    [[3, 0, 2, 1]]
    """
    bits = scores.view(np.int32)
    ordered = (bits ^ ((bits >> 31) & 0x7FFFFFFF)).astype(np.int64)  # IEEE order as int order
    ordered <<= max(int(ids.max(initial=0)), 1).bit_length()
    ordered |= np.maximum(ids, 0)
    ordered[ids < 0] = np.iinfo(np.int64).min
    return ordered


def pooled(found: Sequence[float], sizes: np.ndarray) -> float:
    """The mean of per-set objectives weighted by the sets' query counts (0 with no query)."""
    return float(np.average(found, weights=sizes)) if sizes.sum() else 0.0


def held_out_ap(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                weights: Sequence[float], method: str, task: str | None,
                fallback: Sequence[Any] = ()) -> np.ndarray:
    """The AP (a fraction) of every (task, query) group of ``pools`` (in pool, then group
    order) ranked by the fusion (:func:`openmsd.rank.fuse`) of ``parts``, one list of members'
    score matrices a pool (``fallback``: the fusion's fallbacks); a pool without judgements
    adds nothing."""
    found = [Judged(pool, task).average_precision(fuse(rows, weights, method, fallback))
             for pool, rows in zip(pools, parts, strict=True) if pool.judgements.num_rows]
    return np.concatenate(found) if found else np.zeros(0)
