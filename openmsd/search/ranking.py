"""How a question's results are ranked: a :class:`Ranking` answers ``related`` (a corpus
paper) and ``search`` (a free text) with hits, each its paper id, its score and, where the
ranker says it, the text signals that put it there.

:class:`ScorerRanking` ranks with any ranker (:func:`openmsd.rank.load_scorer`), by default
the fusion of text and citation graph; a fused ranker's related papers are read from its
precomputed lists where they hold the answer (:mod:`openmsd.search.related_lists`).

:class:`openmsd.search.service.SearchService` turns hits into results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from openmsd.corpus import Corpus, candidate_mask
from openmsd.io import arrow_table
from openmsd.rank import (
    Contribution,
    Fusion,
    Papers,
    Queries,
    Scorer,
    capped,
    member_words,
    probabilities,
    signals,
)
from openmsd.search.related_lists import kept_lists
from openmsd.search.resources import SearchResources

__all__ = ["Hit", "Ranking", "ScorerRanking", "Years", "allowed"]

Years = tuple[int | None, int | None] | None


@dataclass(frozen=True)
class Hit:
    """A ranked paper: its id, its score, when its ranker says it, the text signals that put
    it there (None: the ranker says nothing), and its calibrated relevance."""

    paper_id: str
    score: float
    said: list[str] | None = None
    #: the probability that the paper is linked to the query, where the ranker is calibrated
    #: (``openmsd train ranker``); None: unrated
    probability: float | None = None


class Ranking(Protocol):
    """What ranks the answers to ``related`` and ``search``."""

    name: str

    def related(self, paper_id: str, k: int, languages: list[str] | None,
                years: Years) -> list[Hit]:
        """The ``k`` papers ranked first for corpus paper ``paper_id`` (never itself)."""
        ...

    def search(self, text: str, k: int, languages: list[str] | None, years: Years,
               vectors: Mapping[str, np.ndarray] | None) -> list[Hit]:
        """The ``k`` papers ranked first for a free ``text``; ``vectors``: its query vector
        (one row) by dense model name, where a caller has it already."""
        ...


def allowed(corpus: Corpus, papers: Papers, languages: Sequence[str] | None,
            years: Years) -> np.ndarray | None:
    """The rows of ``papers`` in ``languages`` and the year range
    (:func:`openmsd.corpus.candidate_mask`; None: every row)."""
    if not languages and not years:
        return None
    table = arrow_table(corpus.connect(), "SELECT paper_id, language, year FROM papers")
    keep = candidate_mask(table, languages, years)
    mask = np.zeros(len(papers), bool)
    for paper_id in table["paper_id"].filter(pa.array(keep)).to_pylist():
        i = papers.position.get(paper_id)
        if i is not None:
            mask[i] = True
    return mask


@dataclass
class ScorerRanking:
    """A ranker over every paper of the corpus (``scorer``, built by ``resources``)."""

    name: str
    scorer: Scorer
    resources: SearchResources

    def related(self, paper_id: str, k: int, languages: list[str] | None,
                years: Years) -> list[Hit]:
        scorer = self.scorer
        k = capped(k, len(scorer.papers.ids))
        row = scorer.papers.position[paper_id]
        stored = (kept_lists(self.resources, self.name, scorer)
                  if not languages and not years and isinstance(scorer, Fusion) else None)
        if stored is not None and k <= stored.depth:  # computed once per build: a lookup
            ids = scorer.papers.ids
            found = [(int(r), float(s), code) for r, s, code in zip(
                stored.rows[row, :k], stored.scores[row, :k], stored.signals[row, :k],
                strict=True) if r >= 0]
            chances = probabilities(scorer, [s for _, s, _ in found], free_text=False)
            return [Hit(ids[r], s, stored.signal_sets[code], chance)
                    for (r, s, code), chance in zip(found, chances, strict=True)]
        return self._ranked(Queries.of_rows(scorer.papers, [row]), k, languages, years)

    def search(self, text: str, k: int, languages: list[str] | None, years: Years,
               vectors: Mapping[str, np.ndarray] | None) -> list[Hit]:
        queries = Queries.of_texts([text])
        queries.vectors.update(vectors or {})
        return self._ranked(queries, k, languages, years)

    def _ranked(self, queries: Queries, k: int, languages: list[str] | None,
                years: Years) -> list[Hit]:
        scorer = self.scorer
        mask = allowed(self.resources.corpus, scorer.papers, languages, years)
        k = capped(k, len(scorer.papers.ids))
        said: list[list[Contribution]] = []
        if isinstance(scorer, Fusion):
            rows, scores, explained = scorer.top_k_explained(queries, k, mask)
            said = explained[0]
        else:
            rows, scores = scorer.top_k(queries, k, mask)
        found = [(int(r), float(s)) for r, s in zip(rows[0], scores[0], strict=True) if r >= 0]
        words_of = member_words(scorer)
        told = [signals(c, words_of) for c in said]
        chances = probabilities(scorer, [s for _, s in found], bool(queries.rows[0] < 0))
        return [Hit(scorer.papers.ids[r], s, told[i] if i < len(told) else None, chances[i])
                for i, (r, s) in enumerate(found)]
