"""The rerank stage's learned fusion (:mod:`openmsd.rank.citrec.rerank`)."""

from __future__ import annotations

import numpy as np
import pytest

from openmsd.models import RerankFusion, finished_content
from openmsd.rank import candidate_features, fit_fusion, rerank_rows


def _task(seed: int, queries: int = 60, candidates: int = 80
          ) -> tuple[np.ndarray, dict[str, np.ndarray], list[list[int]]]:
    """A prefetch that puts each query's cited paper somewhere in its top 30, a ``manuscript``
    signal that scores it higher than the others (noisily) and an own-sentence signal of pure
    noise."""
    rng = np.random.default_rng(seed)
    prefetch = rng.normal(size=(queries, candidates))
    relevant = []
    for i in range(queries):
        order = np.argsort(-prefetch[i])
        relevant.append([int(order[rng.integers(5, 30)])])
    manuscript = rng.normal(size=prefetch.shape)
    for i, (j,) in enumerate(relevant):
        manuscript[i, j] += 3.0
    return prefetch, {"manuscript": manuscript,
                      "sentence_bm25": rng.normal(size=prefetch.shape)}, relevant


def _top1(scores: np.ndarray, relevant: list[list[int]]) -> float:
    return float(np.mean([scores[i].argmax() in r for i, r in enumerate(relevant)]))


def test_the_fusion_learns_the_signal_that_finds_cited_papers() -> None:
    names = ("prefetch", "manuscript", "sentence_bm25")
    fusion = fit_fusion(*_task(0), names=names, depth=40)
    weights = dict(zip(fusion.features, fusion.coefficients, strict=True))
    assert weights["manuscript"] > 5 * abs(weights["sentence_bm25"])
    prefetch, signals, relevant = _task(1)  # new queries: what was learnt carries over
    assert _top1(prefetch, relevant) == 0.0  # the prefetch never has it first
    assert _top1(rerank_rows(prefetch, signals, fusion, depth=40), relevant) >= 0.8
    with pytest.raises(ValueError, match="both kinds"):
        fit_fusion(prefetch, signals, [[] for _ in relevant], names=names)


def test_only_the_prefetched_candidates_are_reordered() -> None:
    prefetch = np.array([[0.9, 0.8, 0.7, 0.1, -np.inf]])
    signals = {"manuscript": np.array([[0.0, 0.1, 0.9, 5.0, 9.0]])}
    fusion = RerankFusion(("prefetch", "manuscript"), (0.0, 1.0))
    scores = rerank_rows(prefetch, signals, fusion, depth=3)
    assert list(np.argsort(-scores[0], kind="stable")) == [2, 1, 0, 3, 4]
    assert np.isneginf(scores[0, 4])
    features = candidate_features(fusion.features, 0, np.array([0, 1, 2]), signals)
    assert np.allclose(features[:, 0], -np.log([1, 2, 3]))  # the prefetch's log rank
    assert np.isclose(features[:, 1].mean(), 0) and np.isclose(features[:, 1].std(), 1)


def test_a_signal_that_does_not_speak_for_a_pair_leaves_it_neutral() -> None:
    # minilm-en@en on an English location: -inf for the French candidates (not heard)
    signals = {"sentence_en": np.array([[0.9, -np.inf, 0.1, np.nan, 0.5]])}
    features = candidate_features(("sentence_en",), 0, np.arange(5), signals)[:, 0]
    assert features[1] == features[3] == 0.0  # unheard: the mean of the heard ones
    heard = features[[0, 2, 4]]
    assert np.isclose(heard.mean(), 0) and np.isclose(heard.std(), 1)
    assert heard[0] > heard[2] > heard[1]
    # a French location: no pair heard, the feature is 0 for every candidate
    french = {"sentence_en": np.full((1, 4), -np.inf)}
    assert not candidate_features(("sentence_en",), 0, np.arange(4), french).any()
    # BM25 without a shared word is no evidence: a score of 0, below the others
    bm25 = {"sentence_bm25": np.array([[2.0, -np.inf, 1.0]])}
    z = candidate_features(("sentence_bm25",), 0, np.arange(3), bm25)[:, 0]
    assert z[1] < z[2] < z[0] and np.isclose(z.mean(), 0)


def test_a_saved_fusion_is_read_back_or_refused() -> None:
    fusion = RerankFusion(("prefetch", "manuscript"), (0.7, 0.3))
    assert RerankFusion.of(fusion.as_dict()) == fusion
    with pytest.raises(ValueError, match="rerank"):
        RerankFusion.of({"features": ["prefetch"], "coefficients": [1.0, 2.0]})
    with pytest.raises(ValueError, match="rerank"):
        RerankFusion.of({"coefficients": [1.0]})
    with pytest.raises(KeyError, match="manuscript"):
        candidate_features(fusion.features, 0, np.array([0]), {})


def test_a_model_with_a_broken_fusion_is_refused_with_its_path(tmp_path) -> None:
    import json

    from openmsd.models import read_settings

    (tmp_path / "citrec.json").write_text(json.dumps(
        {"base": "e5-small-multilingual", "rerank": {"features": ["manuscript"],
                                                    "coefficients": [1.0]}}))
    with pytest.raises(ValueError, match=r"citrec\.json.*rerank"):
        read_settings(tmp_path)


def test_the_finished_content_is_what_comes_before_the_location() -> None:
    sentences = ["a", "b", "c", "d", "e"]
    assert finished_content(sentences, 4) == ["a", "b", "c"]
    assert finished_content(sentences, 1) == ["a", "b", "c"]  # nothing before: fundamental
