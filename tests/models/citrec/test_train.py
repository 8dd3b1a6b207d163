"""``train citrec`` end to end with a tiny model on three real unarXive papers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from openmsd.corpus.store import Corpus
from openmsd.models.citrec.data import held_out, load
from openmsd.models.citrec.train import CitrecConfig, CitrecConfigError
from openmsd.models.registry import load_model


def test_locations_of_real_unarxive_papers(unarxive_corpus) -> None:
    data = load(Corpus(unarxive_corpus), outside=True)
    assert len(data.locations) > 50
    assert any(len(loc.cited) >= 2 for loc in data.locations)  # co-citations merged
    deep = max(data.locations, key=lambda loc: loc.at)
    assert deep.at > 20  # the finished content before the paragraph comes from the full text
    assert all("{{cite" not in s and "[CITE]" not in s for loc in data.locations
               for s in loc.sentences)
    assert all(c in data.papers for loc in data.locations for c in loc.cited)
    with pytest.raises(ValueError, match="no citation context"):
        load(Corpus(unarxive_corpus), outside=False)  # no reference resolves inside it


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
    assert metrics["best_dev_recall@10"] == max(h["dev_recall@10"]
                                                for h in metrics["dev_history"])
    assert metrics["best_dev_recall@10"] >= metrics["start_dev_recall@10"]
    same = np.allclose(encoder.encode(["Zeros."], "query"),
                       encoder.encode(["Zeros."], "passage"))
    assert same == (metrics["best_step"] == 0)


def test_bad_settings_name_the_key(tmp_path) -> None:
    with pytest.raises(CitrecConfigError, match="loss"):
        CitrecConfig(corpus="c", out="o", loss="contrastive")
    with pytest.raises(CitrecConfigError, match="test_fraction"):
        CitrecConfig(corpus="c", out="o", test_fraction=1.0)
    ablation = CitrecConfig(corpus="c", out="o", dynamic_sampling=False)
    assert ablation.manuscript_supplemental == ablation.citation_supplemental == 0


def test_too_few_locations_and_no_dev_paper_name_the_count(tiny_model, unarxive_corpus,
                                                           tmp_path) -> None:
    from openmsd.models.citrec.train import train

    config = CitrecConfig(corpus=str(unarxive_corpus), out=str(tmp_path / "m"),
                          base=str(tiny_model), outside_references=True, max_steps=1,
                          min_locations=10_000)
    with pytest.raises(CitrecConfigError, match=r"\d+ training locations .* fewer than "
                                                r"min_locations = 10000"):
        train(config, progress=False)
    assert not (tmp_path / "m").exists()


def test_time_split_holds_out_the_newest_papers(unarxive_corpus) -> None:
    from openmsd.corpus.store import Corpus
    from openmsd.models.citrec.data import load
    from openmsd.models.citrec.train import split_locations

    data = load(Corpus(unarxive_corpus), outside=True)
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
