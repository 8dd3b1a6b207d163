"""A dense model as a scorer: dot products of L2-normalised vectors.

The collection's vectors come from the corpus (``openmsd embed``: a paper query uses its own
stored vector, nothing is encoded) or, for a collection that is not a corpus (``openmsd eval
retrieval`` files), from encoding its texts. Free-text queries are encoded as queries; the
encoder is loaded only then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from openmsd.index import load_index
from openmsd.models import DenseEncoder, load_model, load_vectors
from openmsd.rank.scorer import ExactScorer, Papers, Queries
from openmsd.rank.spec import parse

if TYPE_CHECKING:
    from openmsd.index import VectorIndex

QueryEncoder = DenseEncoder
"""What a dense scorer encodes free-text queries with (a model's :class:`~openmsd.models.
DenseEncoder`): the type the layers above ranking hand an encoder on as."""

#: From this many papers, ``top_k`` searches the corpus's FAISS index for the model (when it
#: has one) instead of a dot product with every vector (~15 ms a query at 100,000 512-d
#: vectors on one core; HNSW ~0.3 ms).
INDEXED_FROM = 20_000


class DenseScorer(ExactScorer):
    """Cosine similarity of a dense model's vectors; ``-inf`` for a paper without a vector."""

    signal = "text"
    generates = True
    #: What an explanation says of a result this scorer ranked high.
    words = "similar text"

    def __init__(self, papers: Papers, name: str, vectors: np.ndarray, present: np.ndarray,
                 encoder: Callable[[], DenseEncoder],
                 index: Callable[[], VectorIndex | None] | None = None):
        self.papers, self.name = papers, name
        self.vectors = np.ascontiguousarray(vectors, np.float32)
        self.present = np.asarray(present, bool)
        self._encoder_factory = encoder
        self._encoder: DenseEncoder | None = None
        self._index = index or (lambda: None)
        self._positions: tuple[VectorIndex, np.ndarray] | None = None
        self._lock = threading.Lock()
        self._shared = False

    def serve(self, encoder: Callable[[], DenseEncoder],
              index: Callable[[], VectorIndex | None]) -> None:
        """Encode free-text queries with ``encoder()`` (a server's micro-batching encoder,
        asked for on the first free text) and, from :data:`INDEXED_FROM` papers on, take
        ``top_k`` from the index ``index()`` gives (the server's live index): the same path
        as a command's over the stored index."""
        if self._encoder_factory is not encoder:
            self._encoder_factory, self._encoder = encoder, None
        if len(self.papers) >= INDEXED_FROM:
            self._index = index
        self._shared = True  # that encoder takes concurrent calls (and batches them)

    @classmethod
    def from_corpus(cls, papers: Papers, name: str, backend: str = "torch",
                    encoder: Callable[[], DenseEncoder] | None = None) -> DenseScorer:
        """The vectors ``openmsd embed`` stored for ``name`` (FileNotFoundError naming the
        command to run when there are none); free texts encoded by ``encoder()`` (default:
        the model ``name`` with ``backend``)."""
        if papers.corpus is None:
            raise ValueError("from_corpus: the papers have no corpus")
        ids, matrix = load_vectors(papers.corpus, name)
        if ids and ids == papers.ids:  # a vector for every paper, in the papers' order
            vectors, present = matrix, np.ones(len(papers), bool)
        else:
            vectors, present = _aligned(papers, ids, matrix)
        return cls(papers, name, vectors, present,
                   encoder or (lambda: load_encoder(name, backend)),
                   _stored_index(papers, name) if len(papers) >= INDEXED_FROM else None)

    @classmethod
    def from_texts(cls, papers: Papers, encoder: DenseEncoder, name: str | None = None,
                   batch_size: int = 32) -> DenseScorer:
        """Vectors of the collection's texts, encoded now as passages."""
        vectors = encoder.encode(papers.texts, "passage", batch_size)
        scorer = cls(papers, name or encoder.name, vectors, np.ones(len(papers), bool),
                     lambda: encoder)
        scorer._encoder = encoder
        return scorer

    def encoder(self) -> DenseEncoder:
        if self._encoder is None:
            self._encoder = self._encoder_factory()
        return self._encoder

    def query_vectors(self, queries: Queries) -> np.ndarray:
        """A paper query's stored vector; free texts (and papers without a vector) encoded,
        once per query (kept in ``queries.vectors``)."""
        if self.name in queries.vectors:
            return queries.vectors[self.name]
        out = np.zeros((len(queries), self.vectors.shape[1]), np.float32)
        stored = (queries.rows >= 0) & self.present[np.maximum(queries.rows, 0)]
        out[stored] = self.vectors[queries.rows[stored]]
        todo = [i for i in np.flatnonzero(~stored) if queries.texts[i]]
        if todo and self._shared:
            out[todo] = self.encoder().encode([queries.texts[i] for i in todo], "query")
        elif todo:
            with self._lock:  # not every encoder backend is thread-safe
                out[todo] = self.encoder().encode([queries.texts[i] for i in todo], "query")
        queries.vectors[self.name] = out
        return out

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        vectors = self.query_vectors(queries)
        every = len(candidates) == len(self.vectors) and (
            len(candidates) == 0 or (candidates[0] == 0 and candidates[-1] == len(candidates) - 1
                                     and bool((np.diff(candidates) == 1).all())))
        # every paper: no copy of the whole matrix
        scores = vectors @ (self.vectors if every else self.vectors[candidates]).T
        scores[:, ~self.present[candidates]] = -np.inf
        scores[~vectors.any(axis=1)] = -np.inf
        return scores

    def score_pools(self, queries: Queries, pools: list[np.ndarray]) -> list[np.ndarray]:
        """:func:`openmsd.rank.scorer.score_pools`: each query's row of :meth:`score` of its
        own pool (the same product, one query at a time), without a ``Queries`` per query
        when the query vectors are known (a fusion's candidate stage found them), the
        candidates' vectors copied from those its ``top_k`` read where it did; else
        :meth:`score` per query (a free text encoded alone, as it always was)."""
        if self.name not in queries.vectors:
            return [self.score(queries.subset([i]), pool)[0] for i, pool in enumerate(pools)]
        vectors = queries.vectors[self.name]
        read = queries.read.get(self.name) if queries.read is not None else None
        out = []
        for i, pool in enumerate(pools):
            pool = np.asarray(pool, np.int64)
            row = vectors[i:i + 1]
            scores = row @ (self.vectors[pool] if read is None
                            else self._reread(pool, read[0][i], read[1][i])).T
            scores[:, ~self.present[pool]] = -np.inf
            if not row.any():
                scores[:] = -np.inf
            out.append(scores[0])
        return out

    def top_k(self, queries: Queries, k: int, filters: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` rows from the model's FAISS index where there is one (see
        :data:`INDEXED_FROM`), else from every vector."""
        index = self._index()
        if index is None:
            return super().top_k(queries, k, filters)
        positions = self.positions(index)
        allowed = None
        if filters is not None:
            allowed = (positions >= 0) & np.asarray(filters, bool)[np.maximum(positions, 0)]
        vectors = self.query_vectors(queries)
        scores, found = index.search_rows(vectors, k + 1, allowed)
        rows = np.where(found >= 0, positions[np.maximum(found, 0)], -1)
        # the exact scores of the stored vectors (the index may be older than the vectors),
        # read once: a fusion scores its candidates again from these (score_pools)
        read = self.vectors[np.maximum(rows, 0)]
        if queries.read is not None:
            queries.read[self.name] = (rows, read)
        scores = np.einsum("qd,qkd->qk", vectors, read)
        keep = (rows >= 0) & self.present[np.maximum(rows, 0)] & (rows != queries.rows[:, None])
        scores = np.where(keep, scores, -np.inf)
        scores[~vectors.any(axis=1)] = -np.inf
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        at = np.arange(len(order))[:, None]
        rows, scores = rows[at, order], scores[at, order].astype(np.float32)
        rows[~np.isfinite(scores)] = -1
        return rows, scores

    def _reread(self, pool: np.ndarray, rows: np.ndarray, read: np.ndarray) -> np.ndarray:
        """``self.vectors[pool]``, the rows that one query's ``top_k`` read (``rows``, their
        vectors ``read``) copied from those (a few hundred kilobytes, still in the cache)
        rather than read again from the whole matrix; the same values, so the same scores."""
        if not len(rows):
            return self.vectors[pool]
        order = np.argsort(rows, kind="stable")
        known = rows[order]
        at = np.minimum(np.searchsorted(known, pool), len(known) - 1)
        hit = known[at] == pool
        if hit.all():
            return read[order[at]]
        out = np.empty((len(pool), self.vectors.shape[1]), np.float32)
        out[hit] = read[order[at[hit]]]
        out[~hit] = self.vectors[pool[~hit]]  # a graph member's candidates
        return out

    def positions(self, index: VectorIndex) -> np.ndarray:
        """Each index row's row in the collection (-1: a paper it does not have), listed once
        per index."""
        known = self._positions
        if known is None or known[0] is not index:
            where = self.papers.position
            known = (index, np.array([where.get(i, -1) for i in index.ids], np.int64))
            self._positions = known
        return known[1]


def _aligned(papers: Papers, ids: list[str], matrix: np.ndarray,
             chunk: int = 65_536) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``matrix`` (the vectors of ``ids``) at their papers' rows, zeros for a
    paper without one, and which papers have one; copied a chunk at a time."""
    dim = matrix.shape[1] if matrix.size else 1
    vectors = np.zeros((len(papers), dim), np.float32)
    present = np.zeros(len(papers), bool)
    where = np.array([papers.position.get(paper_id, -1) for paper_id in ids], np.int64)
    for start in range(0, len(ids), chunk):
        rows = where[start:start + chunk]
        known = rows >= 0
        vectors[rows[known]] = matrix[start:start + chunk][known]
        present[rows[known]] = True
    return vectors, present


def _stored_index(papers: Papers, name: str) -> Callable[[], VectorIndex | None]:
    """The corpus's index of ``name``, loaded on first use (None when there is none)."""
    loaded: list[VectorIndex | None] = []

    def index() -> VectorIndex | None:
        if not loaded:
            try:
                loaded.append(load_index(papers.corpus, name) if papers.corpus else None)
            except (FileNotFoundError, OSError, RuntimeError, ValueError):
                loaded.append(None)
        return loaded[0]
    return index


def load_encoder(name: str, backend: str = "torch") -> DenseEncoder:
    """The encoder of a model name or vector key (``MODEL@onnx``, ``MODEL:onnx``: that
    backend, else ``backend``; ``MODEL+llm64``: ``MODEL``'s)."""
    spec = parse(name)
    model = load_model(spec.model, spec.backend or backend)
    if not isinstance(model, DenseEncoder):
        raise ValueError(f"model {name!r} is not a dense encoder")
    return model
