"""``openmsd tune CORPUS``: fusion weights fitted on a split that is not test, kept only where
they beat the untuned fusion out of fold.

``hybrid`` (words and vectors, and the papers' shared authors and year gap, with a fallback
of words and vectors alone for free text, which has neither: what ``search`` ranks with,
chosen on citation contexts by :mod:`openmsd.experiment.contexts`) is fitted on the train and
dev splits' SDSM tasks (the average MAP of the three tasks, as ``openmsd eval sdsm`` computes
it); ``hybrid-graph`` (``hybrid`` and the citation graph, with
``shared-references``: what ``related`` ranks a paper's related papers with) on the hidden-links
protocol (:func:`openmsd.eval.sdsm.hide_links`) of the train and dev splits.

Each member's scores of the pool are computed once, for the tuning queries only (at most
:data:`MAX_QUERIES` per split, a seeded sample beyond: this bounds the cost on a large corpus);
every weighting of a grid over the simplex (step ``step``) by z-score, weighted and
reciprocal-rank fusion, refined one weight at a time, and a learned fusion, are then ranked
and scored. **What is kept is chosen out of fold** (:func:`fit_validated`): the tuning
queries in :data:`FOLDS` seeded folds, each candidate (member set × method) fitted on the
other folds and scored on the held-out one, beside the untuned fusion
(:func:`openmsd.rank.load.default_spec`) on the same queries. The best candidate is fitted
again on every query and kept only when it beats the untuned fusion out of fold by
:data:`MARGIN` MAP points or more and a paired t-test on the per-query AP gives p <
:data:`ALPHA` (the rule the free-text fallback is chosen by); else the untuned fusion is kept
(``"tuned": false``). Either is written to ``CORPUS/index/ranker.json`` with its provenance:
split, queries, objective, each member's own figure, the out-of-fold figures, what was chosen
and why, and the corpus build.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from openmsd.corpus import Corpus
from openmsd.eval import SDSMError, check_protocol, common_pool, hide_links, load_pool, pool_papers
from openmsd.rank import (
    ENGLISH_MODEL,
    FEEDBACK,
    HYBRID,
    HYBRID_GRAPH,
    METADATA_SCORERS,
    Queries,
    blend,
    combine,
    default_dense,
    default_spec,
    english_key,
    fallbacks,
    features,
    fuse,
    heard,
    load_scorer,
    model_name,
    ranker_path,
    transformed,
    tuned,
)

#: Graph members ``hybrid-graph`` may give weight to: the citation graph's and the authors'
#: citation habits' (:mod:`openmsd.rank.authorship`), chosen on 5-fold
#: cross-validation over the train hidden links (docs/ranking.md): ``adamic-adar``,
#: ``coupling``, ``co-citation`` and ``hybrid~links`` beside them lowered the out-of-fold MAP.
GRAPH_MEMBERS = ("ppr", "shared-references", "author-links", "author-citations", "author-ppr",
                 "cited-by")
#: Folds of the cross-validation that chooses what is kept (:func:`fit_validated`).
FOLDS = 5
GRAPH_FOLDS = FOLDS
#: How many MAP points (%) the tuned fusion must gain out of fold over the untuned one.
MARGIN = 1.0
#: The p-value under which the paired t-test must put that gain.
ALPHA = 0.05
#: The most queries of one split a fit reads (a seeded sample beyond): the members' score
#: matrices are queries × pool, so this bounds the memory and the time of every grid point.
MAX_QUERIES = 300
#: The fusion methods a grid of weights is searched with (the learned one is fitted apart).
SEARCHED = ("zscore", "weighted", "rrf")


class TuneError(ValueError):
    """Nothing to tune on: no dev queries, no relations."""


def _compositions(parts: int, total: int) -> list[tuple[int, ...]]:
    """Every tuple of ``parts`` non-negative integers summing to ``total``, in lexical order."""
    if parts == 1:
        return [(total,)]
    return [(first, *rest) for first in range(total + 1)
            for rest in _compositions(parts - 1, total - first)]


def simplex(members: int, step: float) -> list[tuple[float, ...]]:
    """Every weighting of ``members`` in multiples of ``step`` summing to 1.

    >>> simplex(2, 0.5)
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    """
    units = round(1 / step)
    return [tuple(c / units for c in combo) for combo in _compositions(members, units)]


#: The values coordinate ascent tries for each weight (:func:`ascend`).
LADDER = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)


def ascend(value: Callable[[list[float]], float], start: Sequence[float],
           ladder: Sequence[float] = LADDER, rounds: int = 4) -> tuple[list[float], float]:
    """Coordinate ascent: each weight in turn set to the value of ``ladder`` that raises
    ``value`` most, the others kept, until a round changes nothing (at most ``rounds``).
    Returns the weights and their value; finer than a grid over many members, which must be
    coarse (a weight of 0.1 beside 1.0 is not on a grid of fifths).

    >>> ascend(lambda w: -abs(w[0] - 0.3) - abs(w[1] - 0.05), [1.0, 1.0])
    ([0.3, 0.05], -0.0)
    """
    weights = [float(w) for w in start]
    best = value(weights)
    for _ in range(rounds):
        changed = False
        for i in range(len(weights)):
            for candidate in ladder:
                trial = [*weights[:i], candidate, *weights[i + 1:]]
                found = value(trial)
                if found > best + 1e-9:
                    best, weights, changed = found, trial, True
        if not changed:
            break
    return weights, best


#: The most weightings a grid may hold (each is ranked and scored on every tuning query; the
#: coordinate ascent that follows refines the best).
MAX_GRID = 400


def grid_step(members: int, step: float) -> float:
    """``step``, or the finest of 1/8, 1/5, 1/4, 1/2 coarser than it whose simplex grid over
    ``members`` holds at most :data:`MAX_GRID` weightings.

    >>> grid_step(4, 0.1), grid_step(8, 0.1)
    (0.1, 0.25)
    """
    for candidate in (step, 0.125, 0.2, 0.25, 0.5):
        if candidate >= step and math.comb(round(1 / candidate) + members - 1,
                                           members - 1) <= MAX_GRID:
            return candidate
    return 1.0


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
        rows = matrix[self.row]
        own = rows[np.arange(len(self.query)), np.maximum(self.column, 0)][:, None]
        ids = (np.arange(matrix.shape[1])[None, :] if self.columns is None
               else self.columns[self.row])
        rank = (1 + (rows > own).sum(axis=1) + ((rows == own) & (ids > self.doc[:, None]))
                .sum(axis=1)).astype(np.float64)
        rank[self.column < 0] = np.inf  # not among the query's candidates: never retrieved
        # AP of a group: the mean over its relevant papers of (their place among them) / rank
        order = np.lexsort((rank, self.group))
        group, rank = self.group[order], rank[order]
        first = np.searchsorted(group, group)
        precision = (np.arange(len(group)) - first + 1) / rank
        return np.bincount(group, precision) / np.bincount(group)


@dataclasses.dataclass(frozen=True)
class TuningPool:
    """A split's pool as a fit reads it: ``pool`` (every paper of it is a candidate), the
    ``judgements`` fitted on (:func:`with_queries` keeps some) and ``rows``, the pool positions
    (sorted) of the queries the members' score matrices hold a row for, and ``columns``,
    each row's candidates where a pool is too large to rank whole (:func:`candidates`)."""

    pool: Any
    judgements: pa.Table
    rows: np.ndarray
    #: per row, the pool positions of its candidates (-1: none; see :func:`candidates`); None:
    #: every pool paper is every query's candidate
    columns: np.ndarray | None = None

    @property
    def ids(self) -> list[str]:
        return self.pool.ids

    @property
    def papers(self) -> pa.Table:
        return self.pool.papers

    @property
    def split(self) -> str:
        return self.pool.split

    @property
    def left_out(self) -> dict[str, int]:
        return self.pool.left_out


def tuning_pool(pool: Any, limit: int = MAX_QUERIES, seed: int = 0) -> TuningPool:
    """``pool`` with the judgements of at most ``limit`` of its queries (a seeded sample when it
    has more) and those queries' positions as its matrices' rows."""
    queries = sorted(set(pool.judgements["query"].to_pylist()))
    if len(queries) > limit:
        keep = np.random.default_rng(seed).choice(len(queries), limit, replace=False)
        queries = sorted(queries[i] for i in keep)
        pool = with_queries(pool, set(queries))
    position = {paper: i for i, paper in enumerate(pool.ids)}
    rows = np.array(sorted(position[q] for q in queries), np.int64)
    return TuningPool(pool, pool.judgements, rows)


def pool_matrices(corpus: Corpus, pool: Any, members: Sequence[str], links: Sequence[Any],
                  store: dict[str, np.ndarray] | None = None,
                  progress: Callable[[int], None] | None = None) -> list[np.ndarray]:
    """Each member's exact scores of the whole pool for the pool's queries (a row per
    :class:`TuningPool` row, else per pool paper; the query paper itself ``-inf``); ``store``
    keeps them by member name between calls on the same pool and links; ``progress`` is told
    of each member scored."""
    store = {} if store is None else store
    todo = [m for m in dict.fromkeys(members) if m not in store]
    if todo:
        cache: dict = {}
        papers = pool_papers(corpus, pool)
        scorers = [check_protocol(load_scorer(m, papers, hidden=links, cache=cache),
                                  "hidden-links" if links else "text-only") for m in todo]
        rows = getattr(pool, "rows", None)
        rows = np.arange(len(pool.ids)) if rows is None else rows
        queries = Queries.of_rows(scorers[0].papers, rows)
        everything = np.arange(len(pool.ids))
        columns = getattr(pool, "columns", None)
        for name, scorer in zip(todo, scorers, strict=True):
            matrix = np.array(scorer.score(queries, everything), np.float32)
            matrix[np.arange(len(rows)), rows] = -np.inf
            if columns is not None:
                matrix = np.where(columns >= 0, np.take_along_axis(
                    matrix, np.maximum(columns, 0), axis=1), -np.inf).astype(np.float32)
            store[name] = matrix
            if progress:
                progress(1)
    return [store[m] for m in members]


#: A pool of more papers than this is not ranked whole for each tuning query: its candidates
#: are the union of each member's top :data:`DEPTH` (:func:`candidates`), as a fusion's
#: exhaustive pool is at query time (``openmsd.rank.fusion.DEPTH``).
FULL_POOL = 3000
DEPTH = 100


def candidates(corpus: Corpus, pool: TuningPool, members: Sequence[str], links: Sequence[Any],
               store: dict[str, np.ndarray], depth: int = DEPTH,
               progress: Callable[[int], None] | None = None) -> TuningPool:
    """``pool`` whose rows each rank only the union of every member's top ``depth`` papers
    (a relevant paper outside it is never retrieved), with ``store`` filled with the members'
    scores of those candidates; ``pool`` itself when it holds at most :data:`FULL_POOL`
    papers (every paper is then every query's candidate, as ``openmsd eval sdsm`` ranks)."""
    if len(pool.ids) <= FULL_POOL or pool.columns is not None:
        return pool
    full: dict[str, np.ndarray] = {}
    pool_matrices(corpus, pool, members, links, full, progress)
    top = [np.argpartition(-np.nan_to_num(m, neginf=-3e38), depth, axis=1)[:, :depth]
           for m in full.values()]
    union = [np.unique(np.concatenate([t[i] for t in top])) for i in range(len(pool.rows))]
    columns = np.full((len(union), max(len(u) for u in union)), -1, np.int64)
    for i, found in enumerate(union):
        columns[i, :len(found)] = found
    restricted = dataclasses.replace(pool, columns=columns)
    for name, matrix in full.items():
        store[name] = np.where(columns >= 0, np.take_along_axis(
            matrix, np.maximum(columns, 0), axis=1), -np.inf).astype(np.float32)
    return restricted


def learn(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]], task: str | None,
          seed: int = 0) -> list[float]:
    """The ``learned`` fusion's weights: a logistic regression (scikit-learn) of "relevant to
    the query" on :func:`openmsd.rank.fusion.features` over every (query, other pool paper)
    of the tuning queries (``task`` None: relevant to any task), classes balanced."""
    from sklearn.linear_model import LogisticRegression

    x, y = [], []
    for pool, rows in zip(pools, parts, strict=True):
        position = {paper: i for i, paper in enumerate(pool.ids)}
        judged = pool.judgements
        if task is not None:
            judged = judged.filter(pc.equal(judged["task"], task))
        queries = np.array(sorted({position[q] for q in judged["query"].to_pylist()}), np.int64)
        if not len(queries):
            continue
        held = getattr(pool, "rows", None)  # the matrices' rows: the pool's queries
        chosen = queries if held is None else np.searchsorted(held, queries)
        found = features([r[chosen] for r in rows])
        columns = getattr(pool, "columns", None)  # the matrices' columns: pool positions
        ids = (np.broadcast_to(np.arange(len(pool.ids)), (len(queries), len(pool.ids)))
               if columns is None else columns[chosen])
        labels = np.zeros(ids.shape, bool)
        where = {int(q): i for i, q in enumerate(queries)}
        for q, d in zip(judged["query"].to_pylist(), judged["doc"].to_pylist(), strict=True):
            row = where[position[q]]
            labels[row] |= ids[row] == position[d]
        other = (ids >= 0) & (ids != queries[:, None])  # never the query paper itself
        x.append(np.stack([f[other] for f in found], axis=1))
        y.append(labels[other])
    if not x or not np.concatenate(y).any():
        raise TuneError("no relevant pair to learn a fusion from")
    model = LogisticRegression(class_weight="balanced", max_iter=2000, random_state=seed)
    model.fit(np.concatenate(x), np.concatenate(y))
    return [round(float(w), 6) for w in model.coef_[0]]


def queries_of(pool: Any) -> int:
    """How many distinct queries a tuning pool's judgements hold."""
    return len(set(pool.judgements["query"].to_pylist()))


def pooled(found: Sequence[float], sizes: np.ndarray) -> float:
    """The mean of per-set objectives weighted by the sets' query counts (0 with no query)."""
    return float(np.average(found, weights=sizes)) if sizes.sum() else 0.0


def search(parts: Sequence[Sequence[np.ndarray]], judged: Sequence[Judged],
           sizes: np.ndarray, members: Sequence[str], step: float,
           progress: Callable[[int], None] | None = None,
           allowed: Callable[[Sequence[float]], bool] | None = None,
           methods: Sequence[str] = SEARCHED) -> dict[str, Any]:
    """The best weighting of ``members`` over query sets (per set: the members' score
    matrices ``parts`` and its :class:`Judged`; the objective is the mean over the sets
    weighted by ``sizes``): every weighting of the grid (step ``step``) by each of ``methods``
    (z-score, weighted and reciprocal-rank fusion), then :func:`ascend` from each method's
    best; only weightings ``allowed`` accepts (all by default). Returns ``value``,
    ``weights``, ``method``, ``singles`` (each member alone), ``by_method`` and
    ``weights_by_method``."""

    # each method's transformed scores, once per set: a weighting is then a weighted sum
    terms = {method: [(transformed(rows, method), heard(rows)) for rows in parts]
             for method in methods}

    def weighted(weights: Sequence[float], method: str) -> float:
        if allowed is not None and not allowed(weights):
            return -math.inf
        return pooled([j.objective(blend(t, weights, where))
                       for j, (t, where) in zip(judged, terms[method], strict=True)], sizes)

    singles = {m: pooled([j.objective(rows[i]) for j, rows in zip(judged, parts, strict=True)],
                         sizes) for i, m in enumerate(members)}
    best: dict[str, Any] = {"value": -1.0}
    by_method: dict[str, float] = {}
    by_weights: dict[str, list[float]] = {}
    for method in methods:
        grid_best: tuple[float, list[float]] = (-1.0, [])
        for weights in simplex(len(members), step):
            found = weighted(weights, method)
            if found > grid_best[0] + 1e-9:
                grid_best = (found, list(weights))
            if progress:
                progress(1)
        # then finer, one weight at a time, from the grid's best and from the best single
        # member alone (two local optima; the better is kept)
        alone = [float(m == max(singles, key=singles.__getitem__)) for m in members]
        starts = [start for start in (grid_best[1], alone) if start]
        weights, found = max((ascend(lambda w, m=method: weighted(w, m), start)
                              for start in starts), key=lambda wf: wf[1])
        total = sum(weights)  # each method ranks the same by weights scaled to sum to 1
        weights = [w / total for w in weights] if total > 0 else grid_best[1]
        by_method[method] = found
        by_weights[method] = weights
        if found > best["value"] + 1e-9:
            best = {"value": found, "weights": weights, "method": method}
    return {**best, "singles": singles, "by_method": by_method, "weights_by_method": by_weights}


def with_queries(pool: Any, queries: Collection[str]) -> Any:
    """``pool`` whose judgements are those of ``queries`` only (the papers, and so every
    member's scores, unchanged)."""
    keep = pa.array([q in queries for q in pool.judgements["query"].to_pylist()], pa.bool_())
    return dataclasses.replace(pool, judgements=pool.judgements.filter(keep))


ALL_METHODS = (*SEARCHED, "learned")


def methods_fitted(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                   members: Sequence[str], task: str | None, step: float, seed: int = 0,
                   progress: Callable[[int], None] | None = None,
                   methods: Sequence[str] = ALL_METHODS
                   ) -> tuple[dict[str, tuple[list[float], float]], dict[str, float]]:
    """Per method of ``methods`` (those of :data:`SEARCHED`: :func:`search`; ``learned``:
    :func:`learn`) its weights fitted on ``pools`` and their objective there; and each
    member's own objective."""
    sizes = np.array([queries_of(p) for p in pools], float)
    judged = [Judged(p, task) for p in pools]
    searched = [m for m in methods if m in SEARCHED]
    best = search(parts, judged, sizes, members, step, progress, methods=searched)
    out = {m: (best["weights_by_method"][m], best["by_method"][m]) for m in searched}
    if "learned" in methods:
        learned = learn(pools, parts, task, seed)
        out["learned"] = (learned, pooled([j.objective(combine(rows, learned, "learned"))
                                           for j, rows in zip(judged, parts, strict=True)],
                                          sizes))
    if progress:
        progress(1)
    return out, best["singles"]


def query_folds(pools: Sequence[Any], folds: int, seed: int = 0
                ) -> list[tuple[list[Any], list[Any]]]:
    """The tuning queries (of every pool) in ``folds`` seeded folds: per fold, the pools with
    the other folds' queries and the pools with its own (each query in one fold; fewer than
    two queries: no fold)."""
    keys = [(i, q) for i, pool in enumerate(pools)
            for q in sorted(set(pool.judgements["query"].to_pylist()))]
    folds = min(folds, len(keys))
    if folds < 2:
        return []
    order = np.random.default_rng(seed).permutation(len(keys))
    fold_of = {keys[k]: n % folds for n, k in enumerate(order)}
    return [tuple([with_queries(p, {q for (i, q), f in fold_of.items()
                                    if i == n and (f == fold) == inside})
                   for n, p in enumerate(pools)] for inside in (False, True))
            for fold in range(folds)]


def held_out_ap(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                weights: Sequence[float], method: str, task: str | None,
                fallback: Sequence[Any] = ()) -> np.ndarray:
    """The AP (a fraction) of every (task, query) group of ``pools`` (in pool, then group
    order) ranked by the fusion of ``parts`` (``fallback``: its :class:`Fallback`\\ s)."""
    found = [Judged(pool, task).average_precision(fuse(rows, weights, method, fallback))
             for pool, rows in zip(pools, parts, strict=True) if pool.judgements.num_rows]
    return np.concatenate(found) if found else np.zeros(0)


def cross_validate(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                   members: Sequence[str], task: str | None, step: float, folds: int,
                   seed: int = 0, progress: Callable[[int], None] | None = None
                   ) -> dict[str, float]:
    """Each method's out-of-fold objective: the tuning queries (of every pool) in ``folds``
    seeded folds (:func:`query_folds`); each method fitted (:func:`methods_fitted`) on the
    other folds and scored on the held-out one, the folds' objectives weighted by their
    queries (with fewer than two queries, nothing to validate: ``{}``)."""
    found: dict[str, list[float]] = {m: [] for m in ALL_METHODS}
    held: list[float] = []
    for train, test in query_folds(pools, folds, seed):
        sizes = np.array([queries_of(p) for p in test], float)
        held.append(float(sizes.sum()))
        fitted, _ = methods_fitted(train, parts, members, task, step, seed, progress)
        for method, (weights, _) in fitted.items():
            found[method].append(pooled([Judged(p, task).objective(combine(rows, weights, method))
                                         for p, rows in zip(test, parts, strict=True)], sizes))
    if not held:
        return {}
    return {m: round(float(np.average(v, weights=held)), 4) for m, v in found.items()}


def _spec_of(members: Sequence[str], weights: Sequence[float], method: str) -> dict[str, Any]:
    """A fusion spec; a weighting keeps only its members of positive weight."""
    if method == "learned":
        return {"members": list(members), "weights": list(weights), "method": method}
    kept = [i for i, w in enumerate(weights) if w > 0]
    return {"members": [members[i] for i in kept], "weights": [weights[i] for i in kept],
            "method": method}


def members_of(sets: dict[str, Sequence[str]], untuned: dict[str, Any]) -> list[str]:
    """Every member of the candidate sets and of the untuned fusion, once."""
    return list(dict.fromkeys([m for chosen in sets.values() for m in chosen]
                              + list(untuned["members"])))


def score_members(corpus: Corpus, pools: Sequence[Any], members: Sequence[str],
                  hidden: Sequence[Any], stores: Sequence[dict[str, np.ndarray]],
                  progress: Callable[[str, int], Callable[[int], None]] | None = None,
                  label: str = "fusion") -> list[Any]:
    """Each member's scores of each pool's queries into ``stores``; the pools as the fits read
    them (a large pool's rows restricted to their candidates: :func:`candidates`)."""
    scored = progress(f"{label}: members scored", len(members) * len(pools)) if progress \
        else None
    out = []
    for pool, links, store in zip(pools, hidden, stores, strict=True):
        pool = candidates(corpus, pool, members, links, store, progress=scored)
        pool_matrices(corpus, pool, members, links, store, scored)
        out.append(pool)
    return out


def fit_validated(corpus: Corpus, pools: Sequence[Any], sets: dict[str, Sequence[str]],
                  hidden: Sequence[Any], task: str | None, step: float, untuned: dict[str, Any],
                  stores: Sequence[dict[str, np.ndarray]],
                  progress: Callable[[str, int], Callable[[int], None]] | None = None,
                  seed: int = 0, folds: int = FOLDS, label: str = "fusion") -> dict[str, Any]:
    """The fusion kept for ``pools`` (see the module): every candidate (a member set of
    ``sets`` by name × a method of :data:`ALL_METHODS`) and the ``untuned`` spec scored out of
    fold; the best candidate, fitted again on every query, if it beats ``untuned`` by
    :data:`MARGIN` points with p < :data:`ALPHA`, else ``untuned``. ``stores``: per pool, the
    members' score matrices (filled here). The spec says what was kept and why
    (``cross_validation``); a kept weighting that holds metadata members also holds, under
    ``"words"``, the best weighting of the set without them (its free-text fallback). The
    pools come from :func:`score_members`."""
    from scipy import stats

    members = members_of(sets, untuned)
    for pool, links, store in zip(pools, hidden, stores, strict=True):
        pool_matrices(corpus, pool, members, links, store)  # scored already: score_members
    parts = {name: [[store[m] for m in chosen] for store in stores]
             for name, chosen in sets.items()}
    untuned_parts = [[store[m] for m in untuned["members"]] for store in stores]
    splits = query_folds(pools, folds, seed)
    grid = {name: len(simplex(len(chosen), grid_step(len(chosen), step))) * len(SEARCHED) + 1
            for name, chosen in sets.items()}
    total = sum(grid.values()) * (len(splits) + 1)
    advance = progress(f"{label}: grid points, {len(splits)} folds and the final fit", total) \
        if progress else None
    oof: dict[str, list[np.ndarray]] = {f"{name}, {m}": [] for name in sets for m in ALL_METHODS}
    oof["untuned"] = []
    for train, test in splits:
        oof["untuned"].append(held_out_ap(test, untuned_parts, untuned["weights"],
                                          untuned["method"], task))
        for name, chosen in sets.items():
            fitted, _ = methods_fitted(train, parts[name], chosen, task,
                                       grid_step(len(chosen), step), seed, advance)
            for method, (weights, _) in fitted.items():
                oof[f"{name}, {method}"].append(held_out_ap(test, parts[name], weights, method,
                                                            task))
    ap = {key: np.concatenate(values) if values else np.zeros(0) for key, values in oof.items()}
    mean = {key: 100 * float(v.mean()) if len(v) else 0.0 for key, v in ap.items()}
    candidates = [key for key in ap if key != "untuned"]
    best = max(candidates, key=mean.__getitem__)
    gain = mean[best] - mean["untuned"]
    p = 1.0
    if len(ap[best]) > 1:
        test_result = stats.ttest_rel(ap[best], ap["untuned"])
        p = float(test_result.pvalue) if math.isfinite(test_result.pvalue) else 1.0
    keep_tuned = bool(splits) and gain >= MARGIN and p < ALPHA
    # in sample, on every query: each member set's methods (the kept one, the words'
    # fallback), when a fit is kept; each member alone
    sizes = np.array([queries_of(pl) for pl in pools], float)
    fitted_all: dict[str, dict[str, tuple[list[float], float]]] = {}
    for name, chosen in sets.items():
        if keep_tuned:
            fitted_all[name], _ = methods_fitted(pools, parts[name], chosen, task,
                                                 grid_step(len(chosen), step), seed, advance)
        elif advance:
            advance(grid[name])  # no final fit to make
    singles = {m: pooled([Judged(pl, task).objective(store[m])
                          for pl, store in zip(pools, stores, strict=True)], sizes)
               for m in members}
    untuned_value = pooled([Judged(pl, task).objective(fuse(rows, untuned["weights"],
                                                            untuned["method"]))
                            for pl, rows in zip(pools, untuned_parts, strict=True)], sizes)
    record = {
        "folds": len(splits), "seed": seed, "held_out_queries": len(ap["untuned"]),
        "out_of_fold_map": {key: round(value, 4) for key, value in mean.items()},
        "best_tuned": best, "gain": round(gain, 4), "p": round(p, 4),
        "kept": "tuned" if keep_tuned else "untuned",
        "rule": f"the best candidate (member set x method) out of fold is fitted again on "
                f"every query and kept only when it beats the untuned fusion out of fold by "
                f">= {MARGIN:g} MAP points (mean AP of the held-out (task, query) groups) and "
                f"a paired t-test on their AP gives p < {ALPHA:g}; else the untuned fusion"}
    common = {"single_values": {m: round(v, 4) for m, v in singles.items()},
              "members_tried": members, "step": step,
              "search": "grid, then coordinate ascent; a learned fusion",
              "cross_validation": record,
              "best_by_method": {f"{name}, {m}": round(v, 4)
                                 for name, fits in fitted_all.items()
                                 for m, (_, v) in fits.items()}}
    if not keep_tuned:
        return {**untuned, "tuned": False, "objective_value": round(untuned_value, 4), **common}
    name, method = best.rsplit(", ", 1)
    weights, value = fitted_all[name][method]
    spec = {**_spec_of(sets[name], weights, method), "tuned": True,
            "objective_value": round(value, 4), **common}
    others = [n for n in sets if n != name and set(sets[n]) < set(sets[name])]
    if others:  # the set without the metadata: the best of its methods out of fold
        words = others[0]
        method = max(ALL_METHODS, key=lambda m: mean[f"{words}, {m}"])
        spec["words"] = {**_spec_of(sets[words], *fitted_all[words][method][:1], method),
                         "objective_value": round(fitted_all[words][method][1], 4)}
    return spec


def fit(corpus: Corpus, pools: Sequence[Any], members: Sequence[str], hidden: Sequence[Any],
        task: str | None, step: float,
        progress: Callable[[int], None] | None = None, seed: int = 0,
        stores: Sequence[dict[str, np.ndarray]] | None = None, folds: int = 0
        ) -> dict[str, Any]:
    """The best fusion of ``members`` over ``pools`` in sample (no comparison with the untuned
    fusion: :func:`fit_validated` makes it): :func:`search`'s fusions and the learned fusion
    (:func:`learn`); the objective is the mean over the pools weighted by their number of
    queries. ``stores``: per pool, the members' score matrices already computed (filled here).
    With ``folds``, the method is the one with the best out-of-fold objective
    (:func:`cross_validate`; kept as ``cross_validation``), then fitted on every query."""
    stores = [{} for _ in pools] if stores is None else stores
    parts = [pool_matrices(corpus, pool, members, links, store)
             for pool, links, store in zip(pools, hidden, stores, strict=True)]
    fitted, singles = methods_fitted(pools, parts, members, task, step, seed, progress)
    by_method = {method: value for method, (_, value) in fitted.items()}
    validated = (cross_validate(pools, parts, members, task, step, folds, seed, progress)
                 if folds else {})
    chosen = validated or by_method
    method = max(chosen, key=chosen.__getitem__)
    weights, value = fitted[method]
    spec = _spec_of(members, weights, method)
    if validated:
        spec["cross_validation"] = {"folds": folds, "seed": seed, "rule": "the method with the "
                                    "best out-of-fold objective, fitted again on every query",
                                    "out_of_fold": validated}
    return {**spec, "tuned": True, "objective_value": round(value, 4), "step": step,
            "search": "grid, then coordinate ascent", "members_tried": list(members),
            "single_values": singles,
            "best_by_method": {k: round(v, 4) for k, v in by_method.items()}}


def value_of(pools: Sequence[Any], spec: dict[str, Any], stores: Sequence[dict[str, np.ndarray]],
             task: str | None) -> float:
    """The objective (as :func:`fit` computes it) of a spec with its fallbacks, from the
    members' stored score matrices."""
    sizes = np.array([queries_of(p) for p in pools], float)
    found = [Judged(pool, task).objective(fuse([store[m] for m in spec["members"]],
                                               spec["weights"], spec["method"],
                                               fallbacks(HYBRID, spec)))
             for pool, store in zip(pools, stores, strict=True)]
    return pooled(found, sizes)


def with_fallback(full: dict[str, Any], text: dict[str, Any], silent: Sequence[str],
                  replace: bool = False) -> dict[str, Any]:
    """The spec ``full`` (text and metadata members) with ``text`` as its fallback for the
    queries on which the metadata members ``silent`` (those ``full`` holds) are all silent;
    a text member the fallback needs and ``full`` dropped is added to it with weight 0.
    ``replace``: ``full``'s fallbacks for the same ``silent`` members give way (a spec with
    no such member — nothing to be silent — gets no fallback: ``full`` then weighs the same
    members itself, and is left as it is).

    >>> spec = with_fallback({"members": ["bm25", "year"], "weights": [0.5, 0.5],
    ...                       "method": "weighted"},
    ...                      {"members": ["e5"], "weights": [1.0], "method": "rrf"},
    ...                      ["authors", "year"])
    >>> spec["members"], spec["weights"], spec["fallbacks"][0]["silent"]
    (['bm25', 'year', 'e5'], [0.5, 0.5, 0.0], ['year'])
    """
    members, weights = list(full["members"]), list(full["weights"])
    per_member = len(weights) // len(members)
    for member in text["members"]:
        if member not in members:
            members.append(member)
            weights += [0.0] * per_member
    said = [m for m in silent if m in full["members"]]
    if not said:
        return full
    out = {**full, "members": members, "weights": weights}
    entry = {"silent": said, "members": list(text["members"]),
             "weights": list(text["weights"]), "method": text["method"],
             "objective_value": text.get("objective_value")}
    entry.update({k: text[k] for k in ("fitted_on", "fitted", "single_values", "chosen",
                                        "cross_validation", "paper_query_fit") if k in text})
    kept = [f for f in full.get("fallbacks", []) if not replace or f["silent"] != said]
    out["fallbacks"] = [entry, *kept] if replace else [entry]
    return out


def text_members(corpus: Corpus) -> list[str]:
    """The text members ``hybrid`` may weigh: BM25 within a language and on the English view,
    the corpus's dense model, each of the first and third with pseudo-relevance feedback
    (``~prf``), and an English-only model for English pairs where the corpus has its vectors.
    No metadata: :func:`tune_fusion` adds ``authors`` and ``year``
    (:mod:`openmsd.rank.metadata`) in a second fit and keeps this one as its fallback for free
    text (``search``, citation contexts), which has neither."""
    dense = default_dense(corpus)
    members = ["bm25@same", f"bm25@same{FEEDBACK}", "bm25-en", dense, f"{dense}{FEEDBACK}"]
    english = english_key(corpus)  # whichever backend embedded it
    if english is not None and model_name(dense) != ENGLISH_MODEL:
        members.append(f"{english}@en")
    return members


def tuning_pools(corpus: Corpus, seed: int, hidden: bool, limit: int = MAX_QUERIES
                 ) -> tuple[list[Any], list[Any]]:
    """The pools of the train and dev splits (never test), restricted to papers with vectors of
    the corpus's dense model (a language-pair member such as ``minilm-en@en`` may lack vectors
    outside dev and test, and then simply has no say); with ``hidden``, the hidden-links
    protocol of each; each a :class:`TuningPool` of at most ``limit`` queries. Returns the
    pools and their hidden links."""
    pools, links = [], []
    for split in ("train", "dev"):
        try:
            pool = load_pool(corpus, split)
        except SDSMError as error:
            if split == "dev":
                raise TuneError(f"{corpus.root}: cannot tune: {error}") from None
            continue
        pool, _ = common_pool(corpus, pool, [default_dense(corpus)])
        if pool.papers.num_rows < 2:
            continue
        pool, hide = hide_links(pool, seed) if hidden else (pool, [])
        if pool.judgements.num_rows:
            pools.append(tuning_pool(pool, limit, seed))
            links.append(hide)
    return pools, links


#: What ``openmsd tune`` fits, in order: ``hybrid`` on the SDSM tasks, its free-text fallback
#: on citation contexts, ``hybrid-graph`` on hidden links (``only`` fits some, the others are
#: kept as saved).
STEPS = (HYBRID, "contexts", HYBRID_GRAPH)


def tune_fusion(corpus: Corpus, step: float = 0.1, seed: int = 0,
                progress: Callable[[str, int], Callable[[int], None]] | None = None,
                members: Sequence[str] | None = None, metadata: bool = True,
                only: Sequence[str] = STEPS) -> dict[str, Any]:
    """Fit ``hybrid`` (over ``members``, default :func:`text_members`), its free-text fallback
    chosen on citation contexts (:func:`openmsd.experiment.contexts.fit_contexts`; fewer than
    it needs: a :class:`~openmsd.experiment.contexts.TooFewContexts` error when it is the only
    step, else noted as ``free_text`` and the fallback fitted on paper queries kept) and
    ``hybrid-graph``, and save them (see the
    module); ``only``: those of :data:`STEPS` to fit, the others kept as saved. With
    ``metadata`` (or metadata among ``members``), ``hybrid`` is fitted on words and vectors
    and with the papers' ``authors`` and ``year`` too; if the second is kept (out of fold, see
    :func:`fit_validated`), the first is its fallback for queries that have no metadata (free
    text), unless the corpus's citation contexts give one. ``progress(label, total)`` is told
    of every member scored, grid point and fold."""
    unknown = [step_name for step_name in only if step_name not in STEPS]
    if unknown:
        raise TuneError(f"cannot tune {', '.join(unknown)}: expected some of {', '.join(STEPS)}")
    text = list(members) if members else text_members(corpus)
    if HYBRID in only or HYBRID_GRAPH in only:
        _check_dev(corpus)
    spec = tuned(corpus)
    if HYBRID not in only and HYBRID not in spec:
        raise TuneError(f"{corpus.root}: no tuned {HYBRID} to keep: tune it too (--only {HYBRID})")
    words = [m for m in text if m not in METADATA_SCORERS]
    if HYBRID in only:
        spec[HYBRID] = _fit_hybrid(corpus, text, metadata, step, seed, progress)
    if "contexts" in only and not spec[HYBRID].get("tuned", True):
        # the untuned hybrid holds no metadata: free text is ranked by the same fusion
        spec[HYBRID]["free_text"] = (f"the untuned {HYBRID} ranks free text too: no fallback "
                                     "to choose")
    elif "contexts" in only:
        from openmsd.experiment.contexts import TooFewContexts, fit_contexts

        said = [m for m in METADATA_SCORERS if m in spec[HYBRID]["members"]]
        paper_fit = paper_query_fit(spec[HYBRID], said)
        try:
            fallback = fit_contexts(corpus, words, step, seed, paper_fit, progress)
        except TooFewContexts as error:
            if list(only) == ["contexts"]:
                raise
            spec[HYBRID]["free_text"] = str(error)  # the fallback fitted on paper queries stays
        else:
            spec[HYBRID].pop("free_text", None)
            if paper_fit:
                fallback["paper_query_fit"] = paper_fit
            spec[HYBRID] = with_fallback(spec[HYBRID], fallback, said, replace=True)
    _save(corpus, spec)  # hybrid-graph weighs the tuned hybrid against the graph scorers
    graph_pools, graph_hidden = (tuning_pools(corpus, seed, hidden=True)
                                 if HYBRID_GRAPH in only else ([], []))
    if graph_pools:
        members = [HYBRID, *[m for m in METADATA_SCORERS if m not in spec[HYBRID]["members"]],
                   *GRAPH_MEMBERS]
        sets = {"text, metadata and graph": members}
        untuned, label = default_spec(HYBRID_GRAPH, corpus), "hybrid-graph (hidden links)"
        stores: list[dict[str, np.ndarray]] = [{} for _ in graph_pools]
        graph_pools = score_members(corpus, graph_pools, members_of(sets, untuned),
                                    graph_hidden, stores, progress, label)
        spec[HYBRID_GRAPH] = fit_validated(
            corpus, graph_pools, sets, graph_hidden, "citation", max(step, 0.2), untuned,
            stores, progress, seed, label=label)
        spec[HYBRID_GRAPH].update(
            split="+".join(p.split for p in graph_pools),
            objective=f"citation MAP, hidden-links protocol (seed {seed})",
            queries=sum(queries_of(p) for p in graph_pools),
            queries_available=sum(queries_of(p.pool) for p in graph_pools))
        _save(corpus, spec)
    return spec


def paper_query_fit(spec: dict[str, Any], silent: Sequence[str]) -> dict[str, Any] | None:
    """The words-and-vectors weighting fitted on the SDSM paper queries that ``spec``
    (``hybrid``) holds for the queries on which ``silent`` are silent: its fallback, when that
    was not fitted on citation contexts, else the one that fallback kept
    (``paper_query_fit``); None when there is none.

    >>> paper_query_fit({"fallbacks": [{"silent": ["year"], "members": ["bm25"],
    ...                                 "weights": [1.0], "method": "rrf"}]}, ["year"])
    {'members': ['bm25'], 'weights': [1.0], 'method': 'rrf'}
    """
    for entry in spec.get("fallbacks", []):
        if list(entry["silent"]) != list(silent):
            continue
        if "citation contexts" in entry.get("fitted_on", ""):
            return entry.get("paper_query_fit")
        return {k: entry[k] for k in ("members", "weights", "method")}
    return None


def _check_dev(corpus: Corpus) -> None:
    """:class:`TuneError` when the dev split has no query the SDSM fits can use."""
    try:
        dev = load_pool(corpus, "dev")
    except SDSMError as error:
        raise TuneError(f"{corpus.root}: cannot tune: {error}") from None
    dev, _ = common_pool(corpus, dev, [default_dense(corpus)])
    if dev.judgements.num_rows == 0 and dev.left_out.get("missing_vectors"):
        raise TuneError(f"{corpus.root}: {dev.left_out['missing_vectors']} dev papers have no "
                        f"vectors of {default_dense(corpus)}: run 'openmsd embed {corpus.root} "
                        f"--model {default_dense(corpus)} --split dev' first")
    if dev.judgements.num_rows == 0:
        raise TuneError(f"{corpus.root}: the dev split has no query (no paper with a link to "
                        "another dev paper): nothing to tune on; rebuild the relations with a "
                        "larger --dev fraction")


def _fit_hybrid(corpus: Corpus, text: list[str], metadata: bool, step: float, seed: int,
                progress: Callable[[str, int], Callable[[int], None]] | None
                ) -> dict[str, Any]:
    """``hybrid`` chosen on the SDSM tasks of the train and dev splits (see
    :func:`tune_fusion`): words and vectors, or with metadata too (then with the first as its
    fallback for free text), or the untuned fusion, by :func:`fit_validated`."""
    pools, _ = tuning_pools(corpus, seed, hidden=False)
    stores: list[dict[str, np.ndarray]] = [{} for _ in pools]
    words = [m for m in text if m not in METADATA_SCORERS]
    extra = [m for m in text if m in METADATA_SCORERS] or (list(METADATA_SCORERS)
                                                            if metadata else [])
    sets = {"words and vectors": words}
    if extra:
        sets["and metadata"] = [*words, *extra]
    untuned, label = default_spec(HYBRID, corpus), "hybrid (text-only)"
    hidden = [[] for _ in pools]
    pools = score_members(corpus, pools, members_of(sets, untuned), hidden, stores, progress,
                          label)
    spec = fit_validated(corpus, pools, sets, hidden, None, step, untuned, stores, progress,
                         seed, label=label)
    fallback = spec.pop("words", None)
    if spec["tuned"] and fallback and any(m in spec["members"] for m in extra):
        combined = with_fallback(spec, {**fallback, "fitted_on": "the SDSM paper queries of "
                                        "the train and dev splits"}, extra)
        combined["objective_value"] = round(value_of(pools, combined, stores, None), 4)
        spec = combined
    spec.update(split="+".join(p.split for p in pools),
                objective="average MAP of the SDSM tasks, text-only protocol",
                queries=sum(queries_of(p) for p in pools),
                queries_available=sum(queries_of(p.pool) for p in pools))
    return spec


def _save(corpus: Corpus, spec: dict[str, Any]) -> None:
    """Write the tuned specs with the corpus build they were fitted on, atomically."""
    build = json.loads(corpus.layout.manifest.read_text()).get("build", {}).get("id")
    for entry in spec.values():
        entry.setdefault("corpus_build", build)
        entry.setdefault("fitted", datetime.now(UTC).isoformat(timespec="seconds"))
    path = ranker_path(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(spec, indent=2) + "\n")
    os.replace(partial, path)
