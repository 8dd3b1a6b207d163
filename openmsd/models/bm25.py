"""BM25, the lexical baseline, with ``bm25s`` (Lucene's BM25 variant, sparse, numpy).

>>> model = BM25().fit(["multilingual retrieval of papers", "protein folding"])
>>> int(model.scores(["retrieval of papers"]).argmax())
0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class BM25:
    """Fit on a collection, then score queries against every document of it."""

    name = "bm25"

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self._index = None
        self.size = 0

    def fit(self, documents: Sequence[str]) -> BM25:
        """Index ``documents`` (language-agnostic tokenisation: lower-cased words, no stemming
        or stop words, since the collection mixes languages)."""
        import bm25s

        self._index = bm25s.BM25(k1=self.k1, b=self.b)
        tokens = bm25s.tokenize(list(documents), stopwords=None, show_progress=False)
        self._index.index(tokens, show_progress=False)
        self.size = len(documents)
        return self

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """A (queries × documents) float32 matrix of BM25 scores."""
        import bm25s

        if self._index is None:
            raise ValueError("BM25: call fit(documents) before scores(queries)")
        out = np.zeros((len(queries), self.size), np.float32)
        vocab = self._index.vocab_dict
        for row, query in enumerate(queries):
            words = bm25s.tokenize([query], stopwords=None, show_progress=False,
                                   return_ids=False)[0]
            known = [w for w in words if w in vocab]
            if known:
                out[row] = self._index.get_scores(known)
        return out
