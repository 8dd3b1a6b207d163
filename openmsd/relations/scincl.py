"""SciNCL's training triples from nearest neighbours in a citation-graph embedding.

SciNCL (Ostendorff et al. 2022) embeds the citation graph, finds every paper's nearest
neighbours and takes those at ranks ``[20, 25)`` as positives and those around rank 4000 as hard
negatives, plus random easy negatives from outside the neighbourhood (OpenMSD §6; SciNCL's
published setting is 5 positives ``k`` 20-25, 2 hard negatives ``k`` 3998-4000 and 3 easy
negatives, i.e. ``positive_ranks=(20, 25), negative_ranks=(3998, 4000), easy_negatives=3``).

**Graph embedding.** SciNCL and OpenMSD used PyTorch-BigGraph. Its only PyPI release,
``torchbiggraph`` 1.0.0, dates from 2019-10 (classifiers stop at Python 3.7) and needs
``torch``, which this layer does not install. The default here is the random-projection
embedding (RandNE: Zhang et al. 2018, "Billion-scale network embedding with iterative random
projection") of scikit-network (``sknetwork`` 0.33.5, released 2025-11, wheels for Python
3.10-3.14, depends only on numpy and scipy). Of the other candidates, graspologic 3.4.4 pins
``numpy<2``, nodevectors needs csrgraph (last release 2021-02) and pecanpy (node2vec, last
release 2024-01) adds numba and gensim and random walks that are far slower on 2 cores.

Random projection multiplies one seeded Gaussian matrix by a few powers of the sparse adjacency
matrix, ``(I + aA + ... + (aA)^q) G``: linear in the links, deterministic for a seed, no training
loop, CPU only. On a planted-partition graph of 100k nodes and ~770k links (2 cores) it took
~12 s against ~160 s for scikit-network's spectral embedding, with a similar share of
same-block nearest neighbours (0.84 against 0.86). Unlike BigGraph, which *trains* embeddings so
that linked papers score higher than sampled non-links, random projection is a closed-form
smoothing of the neighbourhood: two papers are similar when their neighbourhoods up to ``q``
(3) hops overlap, so near ranks are informative and far ranks (around 4000) are closer to noise
than with a trained model. Other embedders (a BigGraph export, node2vec, a spectral embedding)
plug in through :class:`GraphEmbedder`.

**Direction.** Citation links are treated as undirected, as in SciNCL (its BigGraph model has one
relation with no operator and a dot-product comparator, so a score is symmetric).

**Small graphs.** Papers with no link are not in the graph. When a graph is too small for the
rank windows, i.e. when ``k`` (default: the end of the hard-negative window) exceeds half of the
other papers, the windows and ``k`` are scaled by ``f = ((n_nodes - 1) // 2) / k``: each window
starts at ``floor(start * f)`` and keeps its width where it fits, positives first, hard negatives
after them and within the top ``k``. The farther half of the ranking stays the pool for easy
negatives. The effective values are returned in :class:`ScinclParams`; on a tiny graph a window
may end up empty, and then there are no rows of that kind (never an error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse
from sknetwork.embedding import RandomProjection

TRIPLES_SCHEMA = pa.schema([("query_id", pa.string()), ("positive_id", pa.string()),
                            ("negative_id", pa.string()), ("kind", pa.string())])

Edges = tuple[np.ndarray, np.ndarray]


class GraphEmbedder(Protocol):
    """Embeds a graph: ``edges`` (source and target node numbers, each link once, to be read as
    undirected) over nodes ``0 .. n_nodes - 1`` -> ``float32`` array ``(n_nodes, dim)``.

    :func:`scincl_triples` numbers the papers in sorted order of their ids.
    """

    def __call__(self, edges: Edges, n_nodes: int) -> np.ndarray: ...


@dataclass(frozen=True)
class RandomProjectionEmbedder:
    """scikit-network's :class:`~sknetwork.embedding.RandomProjection` (RandNE) of the
    undirected graph; ``alpha`` and ``n_iter`` are the library's defaults. Deterministic for a
    ``seed``. ``dim`` is capped at ``n_nodes``."""

    dim: int = 128
    alpha: float = 0.5
    n_iter: int = 3
    seed: int = 0

    def __call__(self, edges: Edges, n_nodes: int) -> np.ndarray:
        src, dst = edges
        links = sparse.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n_nodes, n_nodes))
        adjacency = ((links + links.T) > 0).astype(np.float64).tocsr()
        model = RandomProjection(n_components=self.dim, alpha=self.alpha, n_iter=self.n_iter,
                                 random_state=self.seed)
        return np.asarray(model.fit_transform(adjacency), dtype=np.float32)


@dataclass(frozen=True)
class ScinclParams:
    """The values a run used: graph size, embedding size and the effective rank windows.

    ``scale`` is 1.0 unless the graph was too small for the requested windows (see the module
    docstring); ranks are 0-based positions in a paper's neighbour list without the paper itself.
    """

    n_nodes: int
    n_links: int
    dim: int
    k: int
    positive_ranks: tuple[int, int]
    negative_ranks: tuple[int, int]
    easy_negatives: int
    scale: float
    seed: int


@dataclass(frozen=True)
class ScinclTriples:
    """``triples`` (:data:`TRIPLES_SCHEMA`) and the ``params`` that produced them."""

    triples: pa.Table
    params: ScinclParams


def scincl_triples(citations: pa.Table, *, dim: int = 128, k: int | None = None,
                   positive_ranks: tuple[int, int] = (20, 25),
                   negative_ranks: tuple[int, int] = (4000, 4005), easy_negatives: int = 5,
                   seed: int = 0, embedder: GraphEmbedder | None = None,
                   batch_size: int = 4096) -> ScinclTriples:
    """Training triples for every paper with a citation link.

    ``citations``: string columns ``citing_id``, ``cited_id``. Each query gets one row per
    negative: first its hard negatives (neighbours at ``negative_ranks``), then
    ``easy_negatives`` papers drawn uniformly (seeded, without replacement) from outside its top
    ``k``; positives (neighbours at ``positive_ranks``) are paired with the negatives in turn,
    so with equal windows each positive gets one hard negative. ``k`` defaults to the end of the
    hard-negative window. ``dim`` and ``seed`` configure the default embedder
    (:class:`RandomProjectionEmbedder`); ``seed`` also drives the easy negatives.
    ``batch_size`` queries are searched at a time (exact inner product over all papers), which
    bounds memory to about ``batch_size * k * 24`` bytes beyond the embedding.
    """
    k_wanted = negative_ranks[1] if k is None else k
    _check(positive_ranks, negative_ranks, k_wanted, easy_negatives)
    links = citations.select(["citing_id", "cited_id"]).drop_null()
    links = links.filter(pc.not_equal(links["citing_id"], links["cited_id"]))
    ids = pa.chunked_array(links["citing_id"].chunks + links["cited_id"].chunks,
                           type=pa.string()).unique().sort()
    src = pc.index_in(links["citing_id"], value_set=ids).to_numpy()
    dst = pc.index_in(links["cited_id"], value_set=ids).to_numpy()
    src, dst = np.unique(np.stack([src, dst]), axis=1)  # duplicates once
    n = len(ids)
    pos, neg, k_eff, scale = _windows(positive_ranks, negative_ranks, k_wanted, n)
    embed = embedder or RandomProjectionEmbedder(dim=dim, seed=seed)
    vectors = np.zeros((0, 0), dtype=np.float32) if n == 0 else embed((src, dst), n)
    n_pos, n_hard = pos[1] - pos[0], neg[1] - neg[0]
    n_easy = min(easy_negatives, max(n - 1 - k_eff, 0))
    params = ScinclParams(n_nodes=n, n_links=len(src), dim=vectors.shape[1], k=k_eff,
                          positive_ranks=pos, negative_ranks=neg, easy_negatives=n_easy,
                          scale=scale, seed=seed)
    if n_pos == 0 or n_hard + n_easy == 0:
        return ScinclTriples(TRIPLES_SCHEMA.empty_table(), params)

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    faiss.normalize_L2(vectors)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    rng = np.random.default_rng(seed)
    kinds = np.array(["hard"] * n_hard + ["easy"] * n_easy)
    per_query = n_hard + n_easy
    queries, positives, negatives = [], [], []
    for start in range(0, n, batch_size):
        query = np.arange(start, min(start + batch_size, n))
        neighbours = _neighbours(index, vectors[query], query, k_eff)
        easy = _sample_outside(neighbours, query, n, n_easy, rng)
        negative = np.concatenate([neighbours[:, neg[0]:neg[1]], easy], axis=1)
        positive = neighbours[:, pos[0]:pos[1]][:, np.arange(per_query) % n_pos]
        queries.append(np.repeat(query, per_query))
        positives.append(positive.ravel())
        negatives.append(negative.ravel())
    triples = pa.table({
        "query_id": ids.take(np.concatenate(queries)),
        "positive_id": ids.take(np.concatenate(positives)),
        "negative_id": ids.take(np.concatenate(negatives)),
        "kind": pa.array(np.tile(kinds, n), type=pa.string()),
    }, schema=TRIPLES_SCHEMA)
    return ScinclTriples(triples, params)


def _check(positive_ranks: tuple[int, int], negative_ranks: tuple[int, int], k: int,
           easy_negatives: int) -> None:
    """Reject windows that are empty, overlap or reach past ``k``."""
    (p0, p1), (n0, n1) = positive_ranks, negative_ranks
    if not (0 <= p0 < p1 <= n0 < n1 <= k):
        raise ValueError(f"need 0 <= positive start < end <= negative start < end <= k, got "
                         f"positive_ranks={positive_ranks}, negative_ranks={negative_ranks}, k={k}")
    if easy_negatives < 0:
        raise ValueError(f"easy_negatives must be >= 0, got {easy_negatives}")


def _windows(positive_ranks: tuple[int, int], negative_ranks: tuple[int, int], k: int,
             n_nodes: int) -> tuple[tuple[int, int], tuple[int, int], int, float]:
    """Effective positive and negative windows, ``k`` and scale factor for ``n_nodes``."""
    limit = max(n_nodes - 1, 0) // 2
    if k <= limit:
        return positive_ranks, negative_ranks, k, 1.0
    scale = limit / k
    (p0, p1), (n0, n1) = positive_ranks, negative_ranks
    pos_start = math.floor(p0 * scale)
    pos_end = min(pos_start + p1 - p0, limit)
    neg_start = max(pos_end, min(math.floor(n0 * scale), limit - (n1 - n0)))
    neg_end = min(neg_start + n1 - n0, limit)
    return (pos_start, pos_end), (neg_start, neg_end), limit, scale


def _neighbours(index: faiss.IndexFlatIP, vectors: np.ndarray, query: np.ndarray,
                k: int) -> np.ndarray:
    """Each query's ``k`` nearest nodes by inner product, best first, the query itself left out."""
    _, found = index.search(vectors, k + 1)
    # Move the query to the end of its row (stable), then drop the last column; a row where
    # ties pushed the query out of the k + 1 just loses its last neighbour.
    order = np.argsort(found == query[:, None], axis=1, kind="stable")
    return np.take_along_axis(found, order, axis=1)[:, :k]


def _sample_outside(neighbours: np.ndarray, query: np.ndarray, n_nodes: int, count: int,
                    rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct nodes per row drawn uniformly from those neither the query nor among
    its ``neighbours``."""
    rows, k = neighbours.shape
    pool = n_nodes - 1 - k
    if count == 0:
        return np.empty((rows, 0), dtype=np.int64)
    draws = rng.integers(0, pool, size=(rows, count))
    ordered = np.sort(draws, axis=1)
    for row in np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1)):
        draws[row] = rng.choice(pool, size=count, replace=False)  # redraw rows with a repeat
    # The r-th allowed node is r + (number of excluded nodes <= it): with excluded e_0 < e_1 < ...
    # that count is the number of e_i - i <= r.
    excluded = np.sort(np.concatenate([neighbours, query[:, None]], axis=1), axis=1)
    shifted = excluded - np.arange(k + 1)
    offset = (np.arange(rows) * (pool + 1))[:, None]
    below = np.searchsorted((shifted + offset).ravel(), (draws + offset).ravel(), side="right")
    below = below.reshape(rows, count) - (np.arange(rows) * (k + 1))[:, None]
    return draws + below
