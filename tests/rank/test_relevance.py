"""A library's relevance: each result's highest calibrated probability over the seeds it is
nearest to, from the same fusion and calibration that rate a paper's related papers."""

from __future__ import annotations

import numpy as np

from openmsd.rank import Calibration, Fusion, Papers, Queries, library_relevance
from openmsd.rank.scorer import ExactScorer


class Fixed(ExactScorer):
    """A member with a fixed score matrix over a collection (rows: query rows)."""

    def __init__(self, name: str, papers: Papers, matrix: np.ndarray):
        self.name, self.papers, self.matrix, self.signal = name, papers, matrix, "text"

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        return self.matrix[np.ix_(queries.rows, candidates)]


def fusion(calibrated: bool) -> Fusion:
    ids = [f"p{i}" for i in range(6)]
    papers = Papers(ids, ["x"] * 6, ["en"] * 6)
    matrix = np.random.default_rng(0).random((6, 6)).astype(np.float32)
    calibration = Calibration.from_dict({"x": [0.0, 1.0], "y": [0.0, 1.0]}) if calibrated \
        else None
    return Fusion("hybrid-graph", [Fixed("a", papers, matrix)], [1.0], "weighted",
                  calibration=calibration)


def test_the_best_seed_rates_each_result_and_an_uncalibrated_ranker_rates_none():
    rated = fusion(True)
    results, seeds = ["p3", "p4", "p5", "nowhere"], [["p0", "p1"], ["p1"], [], ["p0"]]
    found = library_relevance(rated, results, seeds)
    # each pair as the seed's related papers rate it: among the seed's candidates
    alone = {}
    for s, r in [("p0", "p3"), ("p1", "p3"), ("p1", "p4")]:
        query = Queries.of_rows(rated.papers, [int(s[1])])
        pool = np.union1d(rated.candidates(query, None)[0], [int(r[1])])
        scores = rated.score(query, pool)[0]
        alone[s, r] = rated.probability(scores[pool == int(r[1])])[0]
    assert found[0] == round(float(max(alone["p0", "p3"], alone["p1", "p3"])), 2)
    assert found[1] == round(float(alone["p1", "p4"]), 2)
    assert found[2] is None and found[3] is None  # no seed; not a paper of the ranker
    assert all(0 <= f <= 1 for f in found[:2])
    assert library_relevance(fusion(False), results, seeds) == [None] * 4
