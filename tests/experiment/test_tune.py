"""``hybrid-graph``'s method chosen out of fold (synthetic pools and score matrices, seconds)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from openmsd.eval import Pool
from openmsd.experiment.tune import cross_validate, methods_fitted, with_queries


def pool_and_scores(queries: int, papers: int, seed: int
                    ) -> tuple[Pool, list[np.ndarray]]:
    """A pool whose query i is relevant to paper (i + 1) mod ``papers``: member 0 puts that
    paper first for every query, member 1 is noise."""
    ids = [f"p{i:03d}" for i in range(papers)]
    docs = [(i + 1) % papers for i in range(queries)]
    judgements = pa.table({"task": ["citation"] * queries, "query": ids[:queries],
                           "doc": [ids[d] for d in docs], "direction": ["x"] * queries})
    pool = Pool("train", pa.table({"paper_id": ids}), judgements, {})
    rng = np.random.default_rng(seed)
    signal, noise = (rng.random((papers, papers)).astype(np.float32) for _ in range(2))
    signal[np.arange(queries), docs] = 10.0
    for matrix in (signal, noise):
        np.fill_diagonal(matrix, -np.inf)
    return pool, [signal, noise]


def test_out_of_fold_figures_hold_only_what_generalises():
    pool, parts = pool_and_scores(queries=20, papers=30, seed=0)
    fitted, singles = methods_fitted([pool], [parts], ["signal", "noise"], "citation", 0.5)
    assert singles["signal"] == 100.0 and singles["noise"] < 50
    assert fitted["weighted"][1] == 100.0 and fitted["weighted"][0][0] > 0
    validated = cross_validate([pool], [parts], ["signal", "noise"], "citation", 0.5, folds=5)
    assert set(validated) == {"weighted", "rrf", "learned"}
    assert min(validated.values()) > 90  # every fold finds the signal
    # the noise alone cannot be learned out of fold: far below the signal
    noise_only = cross_validate([pool], [[parts[1]]], ["noise"], "citation", 0.5, folds=5)
    assert max(noise_only.values()) < 50
    # fewer than two queries: nothing to validate
    single = with_queries(pool, {"p000"})
    assert single.judgements.num_rows == 1
    assert cross_validate([single], [parts], ["signal", "noise"], "citation", 0.5, 5) == {}
