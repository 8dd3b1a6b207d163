"""The pools ``openmsd train ranker`` fits on: the train and dev splits' SDSM pools (never
test), each sampled to at most :data:`MAX_QUERIES` queries (:class:`TuningPool`), and every
member's score matrix of them, computed once (:func:`pool_matrices`; a large pool's rows
restricted to their candidates: :func:`candidates`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from openmsd.corpus import Corpus
from openmsd.eval import SDSMError, check_protocol, common_pool, hide_links, load_pool, pool_papers
from openmsd.experiment.weights import TuneError
from openmsd.rank import Papers, Queries, Scorer, default_dense, load_scorer

__all__ = ["DEPTH", "FULL_POOL", "MAX_QUERIES", "TuningPool", "candidates", "pool_matrices",
           "queries_of", "score_members", "split_pools", "tuning_pool", "tuning_pools",
           "with_queries"]

#: The most queries of one split a fit reads (a seeded sample beyond): the members' score
#: matrices are queries × pool, so this bounds the memory and the time of every grid point.
MAX_QUERIES = 300


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


Stand = Mapping[str, Callable[[Papers], Scorer]]
"""Members scored otherwise than by their name: name -> the scorer over a pool's papers."""


def pool_matrices(corpus: Corpus, pool: Any, members: Sequence[str], links: Sequence[Any],
                  store: dict[str, np.ndarray] | None = None,
                  progress: Callable[[int], None] | None = None,
                  stand_ins: Stand | None = None) -> list[np.ndarray]:
    """Each member's exact scores of the whole pool for the pool's queries (a row per
    :class:`TuningPool` row, else per pool paper; the query paper itself ``-inf``); ``store``
    keeps them by member name between calls on the same pool and links; ``progress`` is told
    of each member scored; ``stand_ins`` score the members they name (an adapter out of
    fold)."""
    store = {} if store is None else store
    stand_ins = stand_ins or {}
    todo = [m for m in dict.fromkeys(members) if m not in store]
    if todo:
        cache: dict = {}
        papers = pool_papers(corpus, pool)
        scorers = [check_protocol(stand_ins[m](papers) if m in stand_ins else
                                  load_scorer(m, papers, hidden=links, cache=cache),
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
#: exhaustive pool is at query time (``openmsd.rank.fusion.DEPTH``): the served fusion never
#: ranks a paper outside it, and a grid point then costs queries × candidates, not queries ×
#: pool.
FULL_POOL = 1000
DEPTH = 100


def candidates(corpus: Corpus, pool: TuningPool, members: Sequence[str], links: Sequence[Any],
               store: dict[str, np.ndarray], depth: int = DEPTH,
               progress: Callable[[int], None] | None = None,
               stand_ins: Stand | None = None) -> TuningPool:
    """``pool`` whose rows each rank only the union of every member's top ``depth`` papers
    (a relevant paper outside it is never retrieved), with ``store`` filled with the members'
    scores of those candidates; ``pool`` itself when it holds at most :data:`FULL_POOL`
    papers (every paper is then every query's candidate, as ``openmsd eval sdsm`` ranks)."""
    if len(pool.ids) <= FULL_POOL or pool.columns is not None:
        return pool
    full: dict[str, np.ndarray] = {}
    pool_matrices(corpus, pool, members, links, full, progress, stand_ins)
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


def queries_of(pool: Any) -> int:
    """How many distinct queries a tuning pool's judgements hold."""
    return len(set(pool.judgements["query"].to_pylist()))


def with_queries(pool: Any, queries: Collection[str]) -> Any:
    """``pool`` whose judgements are those of ``queries`` only (the papers, and so every
    member's scores, unchanged)."""
    keep = pa.array([q in queries for q in pool.judgements["query"].to_pylist()], pa.bool_())
    return dataclasses.replace(pool, judgements=pool.judgements.filter(keep))


def score_members(corpus: Corpus, pools: Sequence[Any], members: Sequence[str],
                  hidden: Sequence[Any], stores: Sequence[dict[str, np.ndarray]],
                  progress: Callable[[str, int], Callable[[int], None]] | None = None,
                  label: str = "fusion", stand_ins: Stand | None = None) -> list[Any]:
    """Each member's scores of each pool's queries into ``stores``; the pools as the fits read
    them (a large pool's rows restricted to their candidates: :func:`candidates`);
    ``stand_ins``: :func:`pool_matrices`."""
    scored = progress(f"{label}: members scored", len(members) * len(pools)) if progress \
        else None
    out = []
    for pool, links, store in zip(pools, hidden, stores, strict=True):
        pool = candidates(corpus, pool, members, links, store, progress=scored,
                          stand_ins=stand_ins)
        pool_matrices(corpus, pool, members, links, store, scored, stand_ins)
        out.append(pool)
    return out


def split_pools(corpus: Corpus) -> list[Any]:
    """The pools of the train and dev splits (never test; a split the relations lack, or of
    fewer than 2 papers, is left out), restricted to papers with vectors of the corpus's dense
    model (a language-pair member such as ``minilm-en@en`` may lack vectors outside dev and
    test, and then simply has no say)."""
    pools = []
    for split in ("train", "dev"):
        try:
            pool = load_pool(corpus, split)
        except SDSMError as error:
            if "no relations" in str(error):
                raise TuneError(str(error)) from None
            continue  # relations without this split
        pool, _ = common_pool(corpus, pool, [default_dense(corpus)])
        if pool.papers.num_rows >= 2:
            pools.append(pool)
    return pools


def tuning_pools(corpus: Corpus, seed: int, hidden: bool, limit: int = MAX_QUERIES,
                 splits: Sequence[Any] | None = None) -> tuple[list[Any], list[Any]]:
    """The train and dev pools (``splits``, :func:`split_pools` when not given: read once,
    they serve both protocols); with ``hidden``, the hidden-links protocol of each; each a
    :class:`TuningPool` of at most ``limit`` queries. Returns the pools and their hidden
    links."""
    pools, links = [], []
    for pool in (split_pools(corpus) if splits is None else splits):
        pool, hide = hide_links(pool, seed) if hidden else (pool, [])
        if pool.judgements.num_rows:
            pools.append(tuning_pool(pool, limit, seed))
            links.append(hide)
    return pools, links
