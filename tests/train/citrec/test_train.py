"""``train citrec`` end to end with a tiny model on three real unarXive papers."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch

from openmsd.corpus import Corpus
from openmsd.ingest import ingest
from openmsd.models import load_model, load_splits, save_splits, split_sentences
from openmsd.rank import held_out_citing as held_out
from openmsd.rank import load_citrec
from openmsd.train import CitrecConfig
from openmsd.train.citrec.train import CitrecConfigError
from tests.conftest import SHARED_DATA


def test_locations_of_real_unarxive_papers(unarxive_corpus) -> None:
    data = load_citrec(Corpus(unarxive_corpus), outside=True)
    assert len(data.locations) > 50
    assert any(len(loc.cited) >= 2 for loc in data.locations)  # co-citations merged
    deep = max(data.locations, key=lambda loc: loc.at)
    assert deep.at > 20  # the finished content before the paragraph comes from the full text
    assert all("{{cite" not in s and "[CITE]" not in s for loc in data.locations
               for s in loc.sentences)
    assert all(c in data.papers for loc in data.locations for c in loc.cited)
    with pytest.raises(ValueError, match="no citation context"):
        load_citrec(Corpus(unarxive_corpus), outside=False)  # no reference resolves inside it


def test_a_work_cited_by_two_papers_outside_the_corpus_is_one_candidate(tmp_path) -> None:
    """TALN's ParsCit references have no identifier: two papers citing WordNet cite one
    candidate (its normalised title), not two copies with the same text."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    taln = SHARED_DATA / "taln"
    citing = ("recital-2001-long-006", "taln-2001-poster-005")
    (tmp_path / "parscit").mkdir()
    for name in citing:
        (tmp_path / "parscit" / f"{name}.parscit.xml").write_bytes(
            (taln / "parscit" / f"{name}.parscit.xml").read_bytes())
    (tmp_path / "papers.jsonl").write_text("".join(
        line for line in (taln / "papers.jsonl").read_text().splitlines(keepends=True)
        if any(f'"id": "{name}"' in line for name in citing)))
    ingest([tmp_path / "papers.jsonl", tmp_path / "parscit"], tmp_path / "corpus")
    data = load_citrec(Corpus(tmp_path / "corpus"), outside=True)
    wordnet = "title:wordnet an electronic lexical database"
    assert wordnet in data.papers
    assert {c for c in citing if wordnet in data.reference_lists.get(c, set())} == set(citing)
    assert {loc.citing_id for loc in data.locations if wordnet in loc.cited} == set(citing)
    texts = [text for paper, (text, _) in data.papers.items() if paper.startswith("title:")]
    assert len(texts) == len(set(texts))  # no work twice
    assert any(p.startswith("ref:") for p in data.papers)  # a reference with no usable title


def test_sentence_splits_are_carried_to_the_next_process(tmp_path) -> None:
    text = "Splits are remembered. A second sentence follows."
    assert split_sentences(text) == ["Splits are remembered.", "A second sentence follows."]
    assert save_splits(tmp_path / "splits.pickle") >= 1
    assert load_splits(tmp_path / "none.pickle") == 0
    stored = tmp_path / "stored.pickle"  # what another process remembered is used as it is
    stored.write_bytes(pickle.dumps({("Not split. Here.", "en"): ("Not split. Here.",)}))
    assert load_splits(stored) == 1
    assert split_sentences("Not split. Here.") == ["Not split. Here."]


def test_held_out_is_seeded() -> None:
    ids = [f"p{i}" for i in range(10)]
    assert held_out(ids, 0.3, 1) == held_out(list(reversed(ids)), 0.3, 1)
    assert len(held_out(ids, 0.3, 1)) == 3 and held_out(["a"], 0.3, 0) == set()


def test_trained_model_is_written_and_loads_as_an_encoder(citrec_model) -> None:
    out, manifest = citrec_model
    assert (out / "citrec.json").is_file() and (out / "citrec_train.json").is_file()
    assert manifest["metrics"]["steps"] == 4 and manifest["metrics"]["first_loss"] > 0
    test = set(manifest["data"]["held_out_citing_papers"])
    assert len(test) == 1 and manifest["data"]["train_locations"] > 0
    assert json.loads((out / "citrec_train.json").read_text())["config"]["loss"] == "mpt-src-tgt"
    encoder = load_model(str(out))
    queries = encoder.encode(["We study zeros.\nThey lie near the circle."], "query")
    passages = encoder.encode(["Title: Zeros of polynomials. Abstract: We count zeros.",
                               "Title: Dark matter."], "passage")
    assert queries.shape == (1, encoder.dim) and passages.shape == (2, encoder.dim)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1, atol=1e-5)
    # model selection: the dev history starts with the untrained model, the kept one is the
    # best of them, and the two sides are separate encoders once a trained step was kept
    metrics = manifest["metrics"]
    assert metrics["dev_history"][0]["step"] == 0
    # beside dev, the recall on a sample of the training locations (do positives separate?)
    assert all(0 <= h["train_recall@10"] <= 1 for h in metrics["dev_history"])
    assert metrics["best_dev_recall@10"] == max(h["dev_recall@10"]
                                                for h in metrics["dev_history"])
    assert metrics["best_dev_recall@10"] >= metrics["start_dev_recall@10"]
    identity = torch.equal(encoder.model.manuscript.projection.weight,
                           torch.eye(encoder.dim))
    assert identity == (metrics["best_step"] == 0)
    # the fusion weight of the two-stage ranker was chosen on dev and saved with the model
    assert encoder.settings.fusion_weight == metrics["fusion_weight"]
    assert metrics["dev_two_stage_recall@10"][str(metrics["fusion_weight"])] == max(
        metrics["dev_two_stage_recall@10"].values())
    # the learned rerank fusion was fitted on the training locations and saved with the model
    assert encoder.settings.rerank == metrics["rerank"]
    assert metrics["rerank"]["features"] == ["prefetch", "manuscript", "sentence_bm25",
                                             "sentence_dense", "popularity", "sentence_en",
                                             "fundamental_en"]
    weights = dict(zip(metrics["rerank"]["features"], metrics["rerank"]["coefficients"],
                       strict=True))
    assert weights["popularity"] >= 0  # the graph may only raise a candidate
    assert 0 <= metrics["dev_rerank_recall@10"] <= 1
    profiles = encoder.encode_profiles([["We study zeros.", "They lie near the circle."]])
    assert profiles.shape == (1, encoder.dim)
    assert np.allclose(np.linalg.norm(profiles, axis=1), 1, atol=1e-5)


def test_bad_settings_name_the_key(tmp_path) -> None:
    with pytest.raises(CitrecConfigError, match="loss"):
        CitrecConfig(corpus="c", out="o", loss="cross-entropy")
    with pytest.raises(CitrecConfigError, match="contrastive_weight"):
        CitrecConfig(corpus="c", out="o", loss="contrastive", contrastive_weight=0)
    with pytest.raises(CitrecConfigError, match="temperature"):
        CitrecConfig(corpus="c", out="o", temperature=0)
    assert CitrecConfig(corpus="c", out="o", train_encoder=True).train_layers is None
    with pytest.raises(CitrecConfigError, match="also"):
        CitrecConfig(corpus="c", out="o", also="other")  # type: ignore[arg-type]
    with pytest.raises(CitrecConfigError, match="test_fraction"):
        CitrecConfig(corpus="c", out="o", test_fraction=1.0)
    ablation = CitrecConfig(corpus="c", out="o", dynamic_sampling=False)
    assert ablation.manuscript_supplemental == ablation.citation_supplemental == 0


def test_too_few_locations_and_no_dev_paper_name_the_count(tiny_model, unarxive_corpus,
                                                           tmp_path) -> None:
    from openmsd.experiment import train_model

    config = CitrecConfig(corpus=str(unarxive_corpus), out=str(tmp_path / "m"),
                          base=str(tiny_model), outside_references=True, max_steps=1,
                          min_locations=10_000)
    with pytest.raises(CitrecConfigError, match=r"\d+ training locations .* fewer than "
                                                r"min_locations = 10000"):
        train_model(config, progress=False)
    assert not (tmp_path / "m").exists()


@pytest.mark.slow  # about 20 s: with the slow tests
def test_also_pools_training_and_dev_locations(tiny_model, unarxive_corpus, tmp_path) -> None:
    """``also``: a second corpus's training locations join training, its dev locations model
    selection (pooled; each corpus's recall in the history); the held-out set is the main
    corpus's."""
    import shutil

    from openmsd.experiment import train_model

    other = shutil.copytree(unarxive_corpus, tmp_path / "other")
    config = CitrecConfig(corpus=str(unarxive_corpus), out=str(tmp_path / "m"),
                          base=str(tiny_model), outside_references=True, max_steps=2,
                          eval_every=1, also=[str(other)], manuscript_supplemental=1,
                          citation_supplemental=1, max_seq_length=16)
    manifest = train_model(config, progress=False)
    first, second = manifest["data"]["corpora"]
    assert second["corpus"] == str(other)
    assert manifest["data"]["dev_locations"] == first["dev_locations"] + second["dev_locations"]
    assert manifest["data"]["train_locations"] == (first["train_locations"]
                                                   + second["train_locations"])
    start = manifest["metrics"]["dev_history"][0]
    assert start["dev_recall@10"] == pytest.approx(
        (start[f"dev_recall@10/{first['corpus']}"] * first["dev_locations"]
         + start[f"dev_recall@10/{other}"] * second["dev_locations"])
        / manifest["data"]["dev_locations"], abs=1e-4)


def test_time_split_holds_out_the_newest_papers(unarxive_corpus) -> None:
    from openmsd.corpus import Corpus
    from openmsd.rank import split_locations

    data = load_citrec(Corpus(unarxive_corpus), outside=True)
    train_locations, _, test = split_locations(data, 0.3, 0, "time")
    newest = max(data.time_keys[loc.citing_id] for loc in data.locations)
    assert {data.time_keys[p] for p in test} == {newest}
    assert all(data.time_keys[loc.citing_id] < newest for loc in train_locations)
    assert sum(data.sources().values()) == len(data.locations)
    assert set(data.sources()) == {"unarxive"}


def test_corrupt_model_directory_is_refused_with_its_path(citrec_model, tmp_path) -> None:
    import shutil

    out, _ = citrec_model
    broken = Path(shutil.copytree(out, tmp_path / "broken"))
    (broken / "citation" / "layer_norm.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(ValueError, match=str(broken)):
        load_model(str(broken))


def test_untrained_encoder_is_not_ruled_by_the_common_direction(tiny_model) -> None:
    """Sentence vectors sharing a large common offset (as e5's do): summed, the candidate with
    the most sentences is nearest to every query; centred, normalised and averaged (fundamental
    sentences first), each query finds its own topic."""
    from openmsd.models import CitrecModel, CitrecSettings

    model = CitrecModel.from_base(str(tiny_model), CitrecSettings(str(tiny_model),
                                                                  citation_fundamental=2))
    rng = np.random.default_rng(0)
    dim = model.manuscript.dim
    common = torch.tensor(rng.normal(size=dim), dtype=torch.float32) * 8
    topics = torch.tensor(rng.normal(size=(12, dim)), dtype=torch.float32)

    def sentence(topic: int | None, i: int) -> tuple[str, torch.Tensor]:
        noise = torch.tensor(rng.normal(size=dim), dtype=torch.float32) * 0.5
        return f"t{topic}s{i}", common + noise + (0 if topic is None else topics[topic] * 0.6)

    queries, papers = [], []
    for encoder in (model.manuscript, model.citation):
        encoder.freeze()
    for t in range(12):
        # a query: 20 sentences of other topics (its macro context), then 3 of its own
        query = [sentence((t + 1 + i) % 12, 100 + i) for i in range(20)]
        query += [sentence(t, 200 + i) for i in range(3)]
        # a paper: 2 sentences of its topic, then 3 t body sentences of no topic (a long
        # reference string cut into fragments: names, venue, pages)
        paper = [sentence(t, i) for i in range(2)] + [sentence(None, 10 * t + i)
                                                      for i in range(3 * t)]
        model.manuscript.cache.update(query)
        model.citation.cache.update(paper)
        queries.append([s for s, _ in query])
        papers.append([s for s, _ in paper])
    model.manuscript.fit_centre([s for q in queries for s in q])
    model.citation.fit_centre([s for p in papers for s in p])
    with torch.no_grad():
        q = torch.nn.functional.normalize(model.manuscript(queries), dim=-1)
        d = torch.nn.functional.normalize(model.citation(papers), dim=-1)
    assert ((q @ d.T).argmax(1) == torch.arange(12)).float().mean() >= 0.9
    summed = [torch.stack([model.manuscript.cache[s] for s in doc]).sum(0) for doc in queries]
    plain = [torch.stack([model.citation.cache[s] for s in doc]).sum(0) for doc in papers]
    cos = torch.nn.functional.normalize(torch.stack(summed), dim=-1) @ \
        torch.nn.functional.normalize(torch.stack(plain), dim=-1).T
    assert (cos.argmax(1) == torch.arange(12)).float().mean() <= 0.25
