"""A dense model as a scorer: dot products of L2-normalised vectors.

The collection's vectors come from the corpus (``openmsd embed``: a paper query uses its own
stored vector, nothing is encoded) or, for a collection that is not a corpus (``openmsd eval
retrieval`` files), from encoding its texts. Free-text queries are encoded as queries; the
encoder is loaded only then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from openmsd.models.encoder import DenseEncoder
from openmsd.rank.scorer import ExactScorer, Papers, Queries


class DenseScorer(ExactScorer):
    """Cosine similarity of a dense model's vectors; ``-inf`` for a paper without a vector."""

    signal = "text"

    def __init__(self, papers: Papers, name: str, vectors: np.ndarray, present: np.ndarray,
                 encoder: Callable[[], DenseEncoder]):
        self.papers, self.name = papers, name
        self.vectors = np.ascontiguousarray(vectors, np.float32)
        self.present = np.asarray(present, bool)
        self._encoder_factory = encoder
        self._encoder: DenseEncoder | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_corpus(cls, papers: Papers, name: str, backend: str = "torch") -> DenseScorer:
        """The vectors ``openmsd embed`` stored for ``name`` (FileNotFoundError naming the
        command to run when there are none)."""
        from openmsd.models.embed import load_vectors

        if papers.corpus is None:
            raise ValueError("from_corpus: the papers have no corpus")
        ids, matrix = load_vectors(papers.corpus, name)
        dim = matrix.shape[1] if matrix.size else 1
        vectors = np.zeros((len(papers), dim), np.float32)
        present = np.zeros(len(papers), bool)
        for paper_id, row in zip(ids, matrix, strict=True):
            i = papers.position.get(paper_id)
            if i is not None:
                vectors[i], present[i] = row, True
        return cls(papers, name, vectors, present, lambda: load_encoder(name, backend))

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
        """A paper query's stored vector; free texts (and papers without a vector) encoded."""
        out = np.zeros((len(queries), self.vectors.shape[1]), np.float32)
        stored = (queries.rows >= 0) & self.present[np.maximum(queries.rows, 0)]
        out[stored] = self.vectors[queries.rows[stored]]
        todo = [i for i in np.flatnonzero(~stored) if queries.texts[i]]
        if todo:
            with self._lock:  # not every encoder backend is thread-safe
                out[todo] = self.encoder().encode([queries.texts[i] for i in todo], "query")
        return out

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        vectors = self.query_vectors(queries)
        scores = vectors @ self.vectors[candidates].T
        scores[:, ~self.present[candidates]] = -np.inf
        scores[~vectors.any(axis=1)] = -np.inf
        return scores


def load_encoder(name: str, backend: str = "torch") -> DenseEncoder:
    from openmsd.enrich.store import parse_enriched
    from openmsd.models.registry import load_model

    enriched = parse_enriched(name)
    model = load_model(enriched[0] if enriched else name, backend)
    if not isinstance(model, DenseEncoder):
        raise ValueError(f"model {name!r} is not a dense encoder")
    return model
