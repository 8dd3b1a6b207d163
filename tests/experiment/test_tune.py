"""What ``openmsd tune`` keeps is chosen out of fold, the untuned fusion unless a fit beats it
there (synthetic pools and score matrices, seconds)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from openmsd.eval import Pool
from openmsd.experiment.pools import TuningPool, tuning_pool, with_queries
from openmsd.experiment.tune import cross_validate, fit_validated, methods_fitted


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
    assert set(validated) == {"zscore", "weighted", "rrf", "learned"}
    assert min(validated.values()) > 90  # every fold finds the signal
    # the noise alone cannot be learned out of fold: far below the signal
    noise_only = cross_validate([pool], [[parts[1]]], ["noise"], "citation", 0.5, folds=5)
    assert max(noise_only.values()) < 50
    # fewer than two queries: nothing to validate
    single = with_queries(pool, {"p000"})
    assert single.judgements.num_rows == 1
    assert cross_validate([single], [parts], ["signal", "noise"], "citation", 0.5, 5) == {}


def stores_of(pool: Pool, parts: dict[str, np.ndarray]) -> tuple[TuningPool, dict]:
    """``pool`` as a fit reads it (every query a row) and its members' rows."""
    tuning = tuning_pool(pool, limit=1000)
    return tuning, {m: matrix[tuning.rows] for m, matrix in parts.items()}


def test_the_untuned_fusion_is_kept_unless_a_fit_beats_it_out_of_fold():
    pool, (signal, noise) = pool_and_scores(queries=30, papers=40, seed=1)
    rng = np.random.default_rng(2)
    weak = np.where(np.isfinite(noise), noise + 0.5 * rng.random(noise.shape), -np.inf)
    untuned = {"members": ["noise", "weak"], "weights": [1.0, 1.0], "method": "zscore",
               "tuned": False}
    # a member the untuned fusion lacks carries the signal: the fit wins out of fold
    tuning, store = stores_of(pool, {"signal": signal, "noise": noise,
                                     "weak": weak.astype(np.float32)})
    won = fit_validated(None, [tuning], {"all": ["signal", "noise"]}, [[]], "citation", 0.5,
                        untuned, [store], seed=0)
    cv = won["cross_validation"]
    assert won["tuned"] and cv["kept"] == "tuned" and "signal" in won["members"]
    assert cv["out_of_fold_map"][cv["best_tuned"]] > cv["out_of_fold_map"]["untuned"] + 50
    assert cv["p"] < 0.05 and cv["folds"] == 5 and cv["held_out_queries"] == 30
    # only noise to fit: in sample a weighting may look better, out of fold it does not win
    tuning, store = stores_of(pool, {"noise": noise, "weak": weak.astype(np.float32),
                                     "other": rng.random(noise.shape).astype(np.float32)})
    kept = fit_validated(None, [tuning], {"all": ["noise", "other"]}, [[]], "citation", 0.5,
                         untuned, [store], seed=0)
    assert not kept["tuned"] and kept["cross_validation"]["kept"] == "untuned"
    assert kept["members"] == untuned["members"] and kept["method"] == "zscore"
    assert set(kept["cross_validation"]["out_of_fold_map"]) == {
        "untuned", "all, zscore", "all, weighted", "all, rrf", "all, learned"}


def test_a_fit_reads_at_most_its_sample_of_queries():
    pool, _ = pool_and_scores(queries=30, papers=40, seed=0)
    sample = tuning_pool(pool, limit=10, seed=3)
    assert len(sample.rows) == 10 == len(set(sample.judgements["query"].to_pylist()))
    assert [sample.ids[r] for r in sample.rows] == sorted(sample.judgements["query"].to_pylist())
    assert tuning_pool(pool, limit=10, seed=3).rows.tolist() == sample.rows.tolist()
    assert len(tuning_pool(pool, limit=100).rows) == 30


def test_the_progress_of_a_fit_moves_through_the_ascent_and_ends_at_its_total():
    pool, (signal, noise) = pool_and_scores(queries=30, papers=40, seed=1)
    untuned = {"members": ["noise"], "weights": [1.0], "method": "zscore", "tuned": False}
    tuning, store = stores_of(pool, {"signal": signal, "noise": noise})
    bars: dict[str, list[int]] = {}

    def progress(label: str, total: int):
        bars[label] = [total]
        return bars[label].append

    fit_validated(None, [tuning], {"all": ["signal", "noise"]}, [[]], "citation", 0.5,
                  untuned, [store], progress=progress, seed=0)
    (label, told), = bars.items()
    total, steps = told[0], told[1:]
    assert "ascent" in label and sum(steps) == total
    grid_points = 3 * 3 * 6  # 3 weightings of 2 members a method, 3 methods, 5 folds + final
    assert len(steps) > grid_points  # the ascent's steps are told as it goes
