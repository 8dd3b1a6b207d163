"""The free-text fallback chosen by cross-validation over citation contexts (synthetic score
matrices, seconds), and the under-sized case on the shipped sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openmsd.corpus import Corpus
from openmsd.experiment.contexts import (
    MIN_DENSE,
    TooFewContexts,
    choose,
    fit_contexts,
    folds_of,
    procedures,
)
from openmsd.experiment.weights import Judged, search
from openmsd.ingest import ingest

SAMPLE = Path(__file__).resolve().parents[2] / "openmsd" / "data" / "sample"
MEMBERS = ["bm25@same", "bm25-en", "e5"]


def matrices(contexts: int, documents: int, seed: int, signal: str | None = None
             ) -> tuple[dict[str, np.ndarray], np.ndarray, list[str]]:
    """Each member's scores of ``documents`` for ``contexts`` contexts, every member noise
    except ``signal``, which puts the cited document far above the others; the cited documents
    and the citing papers (two contexts each)."""
    rng = np.random.default_rng(seed)
    cited = rng.integers(0, documents, contexts)
    rows = {m: rng.random((contexts, documents)).astype(np.float32) for m in MEMBERS}
    if signal:
        rows[signal][np.arange(contexts), cited] = 10.0
    return rows, cited, [f"paper{i // 2}" for i in range(contexts)]


def test_folds_keep_a_citing_paper_on_one_side_and_hold_every_context_out_once():
    groups = [f"p{i // 3}" for i in range(30)] + ["alone"]
    held = folds_of(groups, folds=5, seed=1)
    assert len(held) == 5
    assert sorted(np.concatenate(held).tolist()) == list(range(len(groups)))
    for fold in held:
        inside = {groups[i] for i in fold}
        assert not inside & {groups[i] for i in np.setdiff1d(range(len(groups)), fold)}
    assert [f.tolist() for f in folds_of(groups, 5, 1)] == [f.tolist() for f in held]
    assert [f.tolist() for f in folds_of(groups, 5, 2)] != [f.tolist() for f in held]
    # fewer citing papers than folds: each context its own group
    assert len(folds_of(["a"] * 6, folds=5, seed=0)) == 5


def test_noise_the_fit_wins_in_sample_but_the_simple_candidate_is_kept():
    rows, cited, groups = matrices(40, 60, seed=3)
    candidates = procedures(MEMBERS, "e5")
    chosen = choose(rows, cited, groups, candidates, "e5", step=0.25)
    cv = chosen["cross_validation"]
    assert chosen["chosen"] in ("default", "e5")  # simple: nothing fitted on the contexts
    assert chosen["weights"] == ([1.0, 1.0] if chosen["chosen"] == "default" else [1.0])
    # in sample, the weighting fitted on all 40 contexts beats the kept candidate ...
    judged = Judged.of_pairs(np.arange(40), cited)
    fitted = search([[rows[m] for m in MEMBERS]], [judged], np.ones(1), MEMBERS, 0.25)
    assert fitted["value"] > cv["out_of_fold_map"][chosen["chosen"]] + 1
    # ... out of fold it does not, by the rule's margin and test
    comparison = cv["fitted_against_simple"]
    assert comparison["gain"] < 1.0 or comparison["p"] >= 0.05
    assert set(cv["out_of_fold_map"]) == {p.name for p in candidates}
    assert cv["folds"] == 5 and cv["contexts"] == 40 and "p < 0.05" in cv["rule"]


def test_a_fit_that_holds_out_of_fold_is_kept_and_the_dense_model_keeps_its_voice():
    rows, cited, groups = matrices(40, 60, seed=4, signal="bm25-en")
    chosen = choose(rows, cited, groups, procedures(MEMBERS, "e5"), "e5", step=0.25)
    assert chosen["chosen"] == "all members, fitted"
    comparison = chosen["cross_validation"]["fitted_against_simple"]
    assert comparison["gain"] >= 1.0 and comparison["p"] < 0.05
    weights = dict(zip(chosen["members"], chosen["weights"], strict=True))
    assert weights["bm25-en"] > 0
    assert weights.get("e5", 0) >= MIN_DENSE * sum(weights.values()) - 1e-9  # FR → EN reach
    # a single lexical member is never a candidate when the dense model is a member
    assert all("e5" in p.members for p in procedures(MEMBERS, "e5")
               if p.name != "all members, fitted")


def test_the_paper_query_fit_is_a_simple_candidate():
    rows, cited, groups = matrices(30, 50, seed=5, signal="e5")
    paper_fit = {"members": ["bm25-en", "e5"], "weights": [0.5, 0.5], "method": "weighted"}
    candidates = procedures(MEMBERS, "e5", paper_fit)
    assert [p.name for p in candidates if p.simple] == ["default", "e5", "paper queries"]
    chosen = choose(rows, cited, groups, candidates, "e5", step=0.5)
    found = chosen["cross_validation"]["out_of_fold_map"]
    assert found["e5"] == pytest.approx(100.0) and found["paper queries"] < 100.0
    # the untuned default's z-scores keep e5's signal whole beside a noisy BM25: a tie, and
    # the first simple candidate is kept
    assert found["default"] == pytest.approx(100.0)
    assert chosen["chosen"] == "default" and chosen["method"] == "zscore"


def test_too_few_contexts_is_an_error_that_says_the_count(tmp_path):
    ingest([SAMPLE / "scielo-jats"], tmp_path / "c")
    corpus = Corpus(tmp_path / "c")
    with pytest.raises(TooFewContexts, match=r"0 citation contexts of the train and dev "
                                             r"papers.*20 or more"):
        fit_contexts(corpus, ["bm25@same"], 0.5)


def test_module_examples():
    import doctest

    from openmsd.experiment import contexts, pools, weights

    for module in (contexts, pools, weights):
        assert doctest.testmod(module).failed == 0, module.__name__
