"""Relevance: the calibrated probability that a result is linked to its query, as a reader
sees it. A corpus's trained ranker (``openmsd train ranker``) carries an isotonic map from its
score to that probability, fitted out of fold on the corpus's own links; a ranker without one
rates nothing (None: "unrated"), never a share of the best score.

For a paper or a free text (:func:`probabilities`) it is the ranker's score of the pair; for a
library (:func:`library_relevance`) it is the highest probability over the seeds a result is
nearest to: the chance that it is linked to one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from openmsd.corpus import Corpus
from openmsd.rank.fusion import Fusion
from openmsd.rank.load import tuned
from openmsd.rank.resolve import DEFAULT_RANKERS
from openmsd.rank.scorer import Queries, Scorer

__all__ = ["library_relevance", "probabilities", "rating_ranker"]


def probabilities(scorer: Scorer, scores: Sequence[float], free_text: bool
                  ) -> list[float | None]:
    """The calibrated probability that each result is linked to its query (two places), where
    ``scorer`` is a calibrated fusion; None for each where it is not."""
    found = (scorer.probability(np.array(scores, np.float64), free_text)
             if isinstance(scorer, Fusion) and scores else None)
    if found is None:
        return [None] * len(scores)
    return [round(float(p), 2) if np.isfinite(p) else None for p in found]


def library_relevance(scorer: Scorer, results: Sequence[str],
                      seeds: Sequence[Sequence[str]]) -> list[float | None]:
    """For each of ``results`` (paper ids), the highest calibrated probability (two places)
    that it is linked to one of its ``seeds`` (per result, the seeds it is nearest to), each
    pair scored by ``scorer`` as a paper query among that seed's candidates; None for each
    where ``scorer`` is not a calibrated fusion, and for a result none of whose seeds it
    holds."""
    if not isinstance(scorer, Fusion) or scorer.probability(np.zeros(1)) is None:
        return [None] * len(results)
    position = scorer.papers.position
    best: list[float | None] = [None] * len(results)
    asked: dict[str, list[int]] = {}
    for i, (paper_id, near) in enumerate(zip(results, seeds, strict=True)):
        if paper_id in position:
            for seed in near:
                if seed in position:
                    asked.setdefault(seed, []).append(i)
    for seed, which in asked.items():
        # scored among the seed's own candidates, as its related papers are: a fusion's
        # scores are normalised over the candidates of a query
        query = Queries.of_rows(scorer.papers, [position[seed]])
        rows = np.array([position[results[i]] for i in which], np.int64)
        pool = np.union1d(scorer.candidates(query, None)[0], rows)
        scores = scorer.score(query, pool)[0][np.searchsorted(pool, rows)]
        for i, chance in zip(which, probabilities(scorer, scores.tolist(), False), strict=True):
            if chance is not None and (best[i] is None or chance > best[i]):
                best[i] = chance
    return best


def rating_ranker(corpus: Corpus) -> str | None:
    """The ranker whose calibration rates a library's results: the corpus's trained ranker of
    related papers (:data:`~openmsd.rank.DEFAULT_RANKERS`), None where it has not trained one
    (``openmsd train ranker``)."""
    name = DEFAULT_RANKERS["related"]
    return name if name in tuned(corpus) else None
