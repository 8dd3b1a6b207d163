"""A trained MP-BERT4CR model behind ``recommend`` and ``eval citrec``."""

from __future__ import annotations

import numpy as np
import pytest

from openmsd.corpus import Corpus
from openmsd.eval import CitrecEvalError, evaluate, plot_table3, table3
from openmsd.eval.citrec import query_metrics
from openmsd.index import build_index
from openmsd.models import embed_corpus, load_model
from openmsd.search import CitationRequest, recommend_citations


def _recommend(corpus, text, encoder, model, k, **options) -> list[dict]:
    """``recommend_citations`` of a :class:`CitationRequest`, each location as JSON shows it."""
    found = recommend_citations(corpus, CitationRequest(text, model, k, **options), encoder)
    return [location.as_dict() for location in found]


def test_query_metrics_by_hand() -> None:
    m = query_metrics([3])
    assert m == pytest.approx({"Recall@10": 1.0, "MAP@10": 1 / 3, "MRR": 1 / 3,
                               "nDCG@10": 0.5})  # 1/log2(4)
    m = query_metrics([12, 1])
    assert m["Recall@10"] == 0.5 and m["MAP@10"] == 0.5 and m["MRR"] == 1.0


def test_eval_citrec_table3(citrec_model, unarxive_corpus, tmp_path) -> None:
    model, manifest = citrec_model
    result = evaluate(Corpus(unarxive_corpus), ["bm25", str(model)], test_fraction=0.3, seed=3,
                      outside=True)
    assert result["test_locations"] == manifest["data"]["test_locations"] > 0
    for scores in result["models"].values():
        assert scores["positive>=1"]["n"] == result["test_locations"]
        assert scores["positive=1"]["n"] + scores["positive>=2"]["n"] == result["test_locations"]
        assert 0 <= scores["positive>=1"]["Recall@10"] <= 1
    # BM25 finds reference strings sharing words with the context: well above chance
    assert result["models"]["bm25"]["positive>=1"]["MRR"] > 10 / result["candidates"]
    assert "| bm25 |" in table3(result) and "| model |" in table3(result)
    plot_table3(result, tmp_path / "t.png")
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(CitrecEvalError, match="another held-out set"):
        evaluate(Corpus(unarxive_corpus), [str(model)], test_fraction=0.3, seed=0,
                 outside=True)


def test_recommend_with_the_trained_model(citrec_model, unarxive_corpus, tmp_path) -> None:
    import shutil

    model, _ = citrec_model
    corpus = Corpus(shutil.copytree(unarxive_corpus, tmp_path / "corpus"))
    encoder = load_model(str(model))
    embed_corpus(corpus, encoder, str(model))
    build_index(corpus, str(model))
    text = ("Random polynomials have many zeros. Their zeros lie near the unit circle. "
            "This was conjectured by Pemantle and Rivin {{cite:b9}}. We prove it.\n\n"
            "A second paragraph about something else.")
    found = _recommend(corpus, text, encoder, str(model), 3, explain=True)
    assert [loc["location"] for loc in found] == [2]
    # a trained model with a fusion weight: two stages by default (prefetch, then rerank by
    # its learned fusion)
    assert encoder.settings.fusion_weight is not None and found[0]["ranking"] == "two-stage"
    assert encoder.settings.rerank is not None
    dense = _recommend(corpus, text, encoder, str(model), 3, two_stage=False)
    assert dense[0]["ranking"] == "dense" and len(dense[0]["results"]) == 3
    location = found[0]
    assert location["markers"] == ["{{cite:b9}}"] and len(location["results"]) == 3
    assert location["supplemental"] == ["Random polynomials have many zeros."]
    driver = location["results"][0]["drivers"][0]
    assert driver["sentence"] in location["supplemental"] + location["context"]
    # no marker: one location per paragraph
    plain = _recommend(corpus, text.replace(" {{cite:b9}}", ""), encoder, str(model), 2)
    assert [loc["location"] for loc in plain] == [0, 4]


def test_recommend_computes_the_english_features(citrec_model, unarxive_corpus, tmp_path,
                                                 caplog) -> None:
    """The fusion weighs minilm-en on English pairs: a corpus without minilm-en
    vectors still answers (the features 0, said once); with them the features move the order."""
    import logging
    import shutil

    from openmsd.models import RerankFusion, read_settings
    from openmsd.models.registry import MODELS
    from openmsd.rank import rerank_locations
    from openmsd.search.recommend import corpus_signals

    model, _ = citrec_model
    assert {"sentence_en", "fundamental_en"} <= set(read_settings(model).rerank["features"])
    corpus = Corpus(shutil.copytree(unarxive_corpus, tmp_path / "corpus"))
    encoder = load_model(str(model))
    embed_corpus(corpus, encoder, str(model))
    build_index(corpus, str(model))
    from openmsd.index import load_index

    index = load_index(corpus, str(model))
    texts = ["Random polynomials have many zeros near the unit circle, as conjectured.",
             "Graph neural networks learn representations of molecules for prediction."]
    own = [t.split(",")[0] for t in texts]
    profiles = encoder.encode(texts, "query")
    english = RerankFusion(("prefetch", "sentence_en", "fundamental_en"), (0.01, 1.0, 1.0))
    plain = RerankFusion(("prefetch",), (1.0,))
    with caplog.at_level(logging.WARNING):
        without = rerank_locations(corpus_signals(corpus), texts, own, profiles, index, english, 5)
    left_out = [r for r in caplog.records if "left out" in r.getMessage()]
    assert len(left_out) == 1 and "minilm-en" in left_out[0].getMessage()  # said once
    # no vectors: no evidence, the prefetch's order
    assert [[p for p, _ in hits] for hits in without] == [
        [p for p, _ in hits]
        for hits in rerank_locations(corpus_signals(corpus), texts, own, profiles, index, plain, 5)]
    embed_corpus(corpus, MODELS["minilm-en"].load(), "minilm-en")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        heard = rerank_locations(corpus_signals(corpus), texts, own, profiles, index, english, 5)
    assert not [r for r in caplog.records if "left out" in r.getMessage()]
    # the English model now scores the English pairs: the fused scores are no longer the
    # prefetch's alone (same candidates)
    assert [sorted(p for p, _ in hits) for hits in heard] == [sorted(p for p, _ in hits)
                                                             for hits in without]
    assert not np.allclose([s for hits in heard for _, s in hits],
                           [s for hits in without for _, s in hits])


def test_two_stage_reranks_only_the_prefetched_candidates() -> None:
    import numpy as np

    from openmsd.eval.citrec import stage_scores
    from openmsd.rank import weighted_rrf

    prefetch = np.array([[0.9, 0.8, 0.7, 0.1, -np.inf]])
    rerank = np.array([[0.1, 0.2, 0.9, 0.95, 0.99]])
    base = {"prefetch": prefetch, "m": rerank}.__getitem__
    two = stage_scores("two-stage:m", base, depth=3)
    # the top 3 of the prefetch in the reranker's order, then the rest, the masked one last
    assert list(np.argsort(-two[0], kind="stable")) == [2, 1, 0, 3, 4]
    assert np.isneginf(two[0, 4])
    fused = stage_scores("fused:m", base, depth=3)
    assert set(np.argsort(-fused[0])[:3]) == {0, 1, 2}
    assert np.allclose(weighted_rrf(rerank, rerank, 0.5)[0], 1 / (60 + np.array([5, 4, 3, 2, 1])))
    # weight 0: the prefetch's order; weight 1: the reranker's
    assert list(np.argsort(-stage_scores("fused:m", base, 3, lambda m: 0.0)[0])[:3]) == [0, 1, 2]
    assert list(np.argsort(-stage_scores("fused:m", base, 3, lambda m: 1.0)[0])[:3]) == [2, 1, 0]


def test_eval_citrec_time_split_and_stages(citrec_model, unarxive_corpus) -> None:
    import json

    model, _ = citrec_model
    config = json.loads((model / "citrec_train.json").read_text())["config"]
    result = evaluate(Corpus(unarxive_corpus), ["bm25", "prefetch", f"two-stage:{model}",
                                                f"fused:{model}"],
                      test_fraction=config["test_fraction"], seed=config["seed"], outside=True)
    assert set(result["models"]) == {"bm25", "prefetch", "two-stage:model", "fused:model"}
    # fused: the learned rerank fusion reorders the prefetch's top 200 only
    fused, prefetch = result["models"]["fused:model"], result["models"]["prefetch"]
    assert fused["positive>=1"]["n"] == prefetch["positive>=1"]["n"]
    assert 0 <= result["prefetch_recall"]["Recall@100"] <= result["prefetch_recall"][
        "Recall@200"] <= 1
    timed = evaluate(Corpus(unarxive_corpus), ["bm25"], seed=0, outside=True, split="time")
    assert timed["split"] == "time" and timed["held_out_citing_papers"] == 1


def test_fusion_weight_is_chosen_on_dev() -> None:
    import numpy as np

    from openmsd.rank import Location, choose_fusion_weight

    candidates = [f"c{i}" for i in range(30)]
    locations = [Location("p", ["s"], 0, [f"c{i}"]) for i in range(20)]
    prefetch = np.random.default_rng(0).normal(size=(20, 30))
    perfect = -np.abs(np.arange(30)[None, :] - np.arange(20)[:, None]).astype(float)
    weight, recalls = choose_fusion_weight(perfect, prefetch, locations, candidates)
    assert recalls[1.0] == 1.0 and recalls[weight] == max(recalls.values())
    # a model no better than noise: the prefetch alone (weight 0) is not beaten on dev
    noise = np.random.default_rng(1).normal(size=(20, 30))
    weight, recalls = choose_fusion_weight(noise, perfect, locations, candidates)
    assert weight == 0.0 and recalls[0.0] == 1.0
