"""BM25, the lexical model, with ``bm25s`` (Lucene's BM25 variant, sparse, numpy), tokenised
per language: each text with its language's stop words and Snowball stemmer (PyStemmer).

A collection mixes languages: every document is tokenised in its own language and queries in
theirs, so a French query matches French documents by stems and an English one English
documents; a language without a Snowball stemmer (or ``und``) is only lower-cased.

>>> model = BM25().fit(["multilingual retrieval of papers", "protein folding"], ["en", "en"])
>>> int(model.scores(["retrieving a paper"], ["en"]).argmax())
0
>>> analyse("Les réseaux neuronaux", "fr")
['réseau', 'neuronal']
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import Stemmer
from scipy import sparse

#: ISO 639-1 code → Snowball stemmer name (PyStemmer).
SNOWBALL: dict[str, str] = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german",
    "el": "greek", "en": "english", "es": "spanish", "eu": "basque", "fi": "finnish",
    "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian",
    "id": "indonesian", "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch",
    "no": "norwegian", "nb": "norwegian", "fa": "persian", "pl": "polish", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil",
    "tr": "turkish"}
#: Score only the documents asked for (their rows of the score matrix) when they are fewer than
#: one in ``FEW`` of the collection; else score the whole collection and take their columns.
FEW = 8
#: ISO 639-1 code → bm25s stop-word list.
STOPWORDS: dict[str, str] = {"en": "en", "fr": "fr", "es": "es", "pt": "pt", "de": "de",
                             "it": "it", "nl": "nl", "ru": "ru", "sv": "sv", "da": "da",
                             "no": "no", "nb": "no", "tr": "tr", "zh": "zh", "ko": "ko"}


@cache
def stemmer_of(language: str) -> Any:
    name = SNOWBALL.get(language)
    return Stemmer.Stemmer(name) if name else None


def analyse(text: str, language: str | None = None) -> list[str]:
    """The index terms of ``text`` in ``language`` (ISO 639-1; None or unknown: words only)."""
    return analyse_many([text], [language or "und"])[0]


#: bm25s stop-word code → its list in ``bm25s.stopwords``.
STOPWORD_LISTS: dict[str, str] = {
    "en": "STOPWORDS_EN", "fr": "STOPWORDS_FRENCH", "es": "STOPWORDS_SPANISH",
    "pt": "STOPWORDS_PORTUGUESE", "de": "STOPWORDS_GERMAN", "it": "STOPWORDS_ITALIAN",
    "nl": "STOPWORDS_DUTCH", "ru": "STOPWORDS_RUSSIAN", "sv": "STOPWORDS_SWEDISH",
    "da": "STOPWORDS_DANISH", "no": "STOPWORDS_NORWEGIAN", "tr": "STOPWORDS_TURKISH",
    "zh": "STOPWORDS_CHINESE", "ko": "STOPWORDS_KOREAN"}
#: ``bm25s.tokenize``'s (scikit-learn's) token pattern.
TOKEN = re.compile(r"(?u)\b\w\w+\b")


@cache
def _stopwords(language: str) -> frozenset[str]:
    import bm25s.stopwords  # lazy: bm25s takes ~1.5 s to import

    code = STOPWORDS.get(language)
    return frozenset(getattr(bm25s.stopwords, STOPWORD_LISTS[code])) if code else frozenset()


def analyse_many(texts: Sequence[str], languages: Sequence[str | None]) -> list[list[str]]:
    """:func:`analyse` of each text in its language: what ``bm25s.tokenize(return_ids=False)``
    gives with the language's stop words and stemmer (lower case, scikit-learn's token
    pattern, stop words out, Snowball stems; tested equal), with each language's stop-word set
    built once rather than once per text, and no progress bar per call."""
    out: list[list[str]] = []
    stems: dict[str, dict[str, str]] = {}  # per language, each word stemmed once per call
    for text, language in zip(texts, languages, strict=True):
        stop, stemmer = _stopwords(language or "und"), stemmer_of(language or "und")
        words = [w for w in TOKEN.findall(text.lower()) if w not in stop]
        if stemmer is not None:
            known = stems.setdefault(language or "und", {})
            new = [w for w in set(words) if w not in known]
            if new:
                known.update(zip(new, stemmer.stemWords(new), strict=True))
            words = list(map(known.__getitem__, words))
        out.append(words)
    return out


def _bm25s() -> Any:
    """The ``bm25s`` module, imported without numba: openmsd scores with its NumPy path, and
    numba would add half a second to every command that ranks with BM25."""
    if "bm25s" in sys.modules or "numba" in sys.modules:
        import bm25s  # lazy: bm25s takes ~1.5 s to import

        return bm25s
    sys.modules["numba"] = None  # type: ignore[assignment]  # import numba -> ImportError
    try:
        import bm25s  # lazy: bm25s takes ~1.5 s to import
    finally:
        del sys.modules["numba"]
    return bm25s


class BM25:
    """Fit on a collection, then score queries against every document of it."""

    name = "bm25"

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self._index = None
        self.size = 0
        self.languages: list[str] = []

    def fit(self, documents: Sequence[str], languages: Sequence[str | None] | None = None
            ) -> BM25:
        """Index ``documents``, each analysed in its language of ``languages`` (ISO codes;
        None: words only, no stemming or stop words)."""
        bm25s = _bm25s()
        languages = languages if languages is not None else [None] * len(documents)
        self.languages = sorted({lang or "und" for lang in languages})
        self._index = bm25s.BM25(k1=self.k1, b=self.b)
        self._index.index(analyse_many(list(documents), list(languages)), show_progress=False)
        self.size = len(documents)
        matrix = self._index.scores  # term by term (CSC): each term's documents, in order
        postings = sparse.csc_matrix((matrix["data"], matrix["indices"], matrix["indptr"]),
                                     shape=(self.size, len(matrix["indptr"]) - 1))
        if not postings.has_sorted_indices:  # what _scores_of searches
            postings.sort_indices()
            matrix.update(data=postings.data, indices=postings.indices, indptr=postings.indptr)
        return self

    def scores(self, queries: Sequence[str], languages: Sequence[str | None] | None = None,
               documents: np.ndarray | None = None) -> np.ndarray:
        """A (queries × documents) float32 matrix of BM25 scores, each query analysed in its
        language; only the columns of ``documents`` (indices) when given."""
        terms = self.query_terms(queries, languages)
        width = self.size if documents is None else len(documents)
        out = np.zeros((len(queries), width), np.float32)
        for row, words in enumerate(terms):
            out[row] = self.scores_of_terms(words, documents)
        return out

    def query_terms(self, queries: Sequence[str], languages: Sequence[str | None] | None = None
                    ) -> list[list[str]]:
        """Each query's terms that the collection knows, in order (a query of unknown
        language read in every language of the collection), analysed together."""
        if self._index is None:
            raise ValueError("BM25: call fit(documents) before scores(queries)")
        languages = languages if languages is not None else [None] * len(queries)
        vocab = self._index.vocab_dict
        unknown = [i for i, lang in enumerate(languages) if not lang or lang == "und"]
        terms = analyse_many(list(queries), list(languages))
        for language in self.languages if unknown else []:
            extra = analyse_many([queries[i] for i in unknown], [language] * len(unknown))
            for i, words in zip(unknown, extra, strict=True):
                terms[i] = list(dict.fromkeys([*terms[i], *words]))
        return [[w for w in words if w in vocab] for words in terms]

    def scores_of_terms(self, terms: list[str], documents: np.ndarray | None = None
                        ) -> np.ndarray:
        """The scores of one query's :meth:`query_terms` for ``documents`` (None: all)."""
        width = self.size if documents is None else len(documents)
        if not terms:
            return np.zeros(width, np.float32)
        if documents is not None and len(documents) * FEW < self.size:
            vocab = self._index.vocab_dict
            return self._scores_of([vocab[w] for w in terms], documents)
        scores = self._index.get_scores(terms)
        return (scores if documents is None else scores[documents]).astype(np.float32)

    def _scores_of(self, tokens: list[int], documents: np.ndarray) -> np.ndarray:
        """The BM25 scores of ``documents`` only: each query token's posting list (its column
        of the term × document matrix, documents in order) searched for them, not the whole
        collection scored; summed token after token in the query's order, a repeated token
        each time, as ``get_scores`` sums them (the same float32 values)."""
        matrix = self._index.scores
        indptr, indices, data = matrix["indptr"], matrix["indices"], matrix["data"]
        documents = np.asarray(documents).astype(indices.dtype)
        out = np.zeros(len(documents), np.float32)
        for token in tokens:
            start, end = indptr[token], indptr[token + 1]
            if start == end:
                continue
            postings = indices[start:end]
            at = np.minimum(np.searchsorted(postings, documents), end - start - 1)
            hit = postings[at] == documents
            out[hit] += data[start + at[hit]]
        return out
