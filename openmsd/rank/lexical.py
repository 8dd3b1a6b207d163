"""BM25 as a scorer, in two views of each paper.

* ``bm25``: the paper's own title and abstract, analysed in its language
  (:mod:`openmsd.models.bm25`: stop words and Snowball stemming per language).
* ``bm25-en``: the cross-lingual lexical view: each paper's English text (its own English title
  and abstract, or its ``openmsd enrich`` summary) where it has one, its original text
  otherwise; a query is read in English the same way. A French paper and an English one then
  meet on English words.
"""

from __future__ import annotations

import numpy as np

from openmsd.models import BM25
from openmsd.rank.scorer import ExactScorer, Papers, Queries

VIEWS = {"bm25": "original", "bm25-en": "english"}


def _view(texts: list[str], languages: list[str], english: list[str], view: str
          ) -> tuple[list[str], list[str]]:
    if view == "original":
        return texts, languages
    return ([e or t for t, e in zip(texts, english, strict=True)],
            ["en" if e else lang for lang, e in zip(languages, english, strict=True)])


class LexicalScorer(ExactScorer):
    """BM25 over one view of the collection (``original`` or ``english``)."""

    signal = "text"
    positive_only = True

    def __init__(self, papers: Papers, view: str = "original", name: str | None = None,
                 like: LexicalScorer | None = None):
        """``like``: another BM25 scorer of the same papers, whose index this one shares
        when both views read the same texts (no paper has an English text of its own: the
        English view is the original one)."""
        if view not in VIEWS.values():
            raise ValueError(f"view must be one of {', '.join(VIEWS.values())}, not {view!r}")
        self.papers, self.view = papers, view
        self.name = name or next(n for n, v in VIEWS.items() if v == view)
        if like is not None and like.papers is papers and (
                like.view == view or not any(papers.english)):
            self.model = like.model
            return
        texts, languages = _view(papers.texts, papers.languages, papers.english, view)
        self.model = BM25().fit(texts, languages)

    def reads(self, queries: Queries) -> np.ndarray:
        """Which queries this view reads in its own words: all in the original view; in the
        English view those in English or with an English text (``NAME@cross`` hears only
        these: other words meet English ones only by chance)."""
        if self.view == "original":
            return np.ones(len(queries), bool)
        return np.array([lang == "en" or bool(e)
                         for lang, e in zip(queries.languages, queries.english, strict=True)],
                        bool)

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        texts, languages = _view(queries.texts, queries.languages, queries.english, self.view)
        scores = self.model.scores(texts, languages, np.asarray(candidates, np.int64))
        scores[scores <= 0] = -np.inf  # no word in common: no evidence
        return scores

    def score_pools(self, queries: Queries, pools: list[np.ndarray]) -> list[np.ndarray]:
        """:func:`openmsd.rank.scorer.score_pools`: every query analysed in one call."""
        texts, languages = _view(queries.texts, queries.languages, queries.english, self.view)
        out = []
        for terms, pool in zip(self.model.query_terms(texts, languages), pools, strict=True):
            scores = self.model.scores_of_terms(terms, np.asarray(pool, np.int64))
            scores[scores <= 0] = -np.inf
            out.append(scores)
        return out
