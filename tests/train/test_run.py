"""One config loader and one entry point for every recipe; the registry's prompts in what
citrec saves. No training here: errors and dispatch only."""

from __future__ import annotations

import pytest

from openmsd.models.registry import UnknownModelError, base_path, prompts
from openmsd.train import ConfigError, TrainConfig, load_config, run_recipe
from openmsd.train.citrec.train import CitrecConfig, CitrecConfigError


def test_load_config_gives_each_recipe_its_config(tmp_path):
    citrec = load_config(None, recipe="citrec", corpus="c", out="m", positives=None, epochs=2)
    assert isinstance(citrec, CitrecConfig) and citrec.epochs == 2
    assert isinstance(load_config(None, recipe="mspt", corpus="c", out="m"), TrainConfig)
    file = tmp_path / "run.toml"
    file.write_text('recipe = "mspt"\ncorpus = "c"\nout = "o"\nmargin = 0.5\n')
    from_file = load_config(file, recipe="citrec")  # the caller's recipe wins over the file's
    assert isinstance(from_file, CitrecConfig) and from_file.margin == 0.5
    file.write_text('recipe = "mspt"\ncorpus = "c"\nout = "o"\nepochs = 2\n')
    with pytest.raises(ConfigError, match=r"run\.toml: unknown key 'epochs'"):
        load_config(file)
    with pytest.raises(ConfigError, match=r"options: missing key\(s\) out"):
        load_config(None, recipe="citrec", corpus="c")
    with pytest.raises(ConfigError, match="'epochs': expected int"):
        load_config(None, recipe="citrec", corpus="c", out="o", epochs="two")
    with pytest.raises(ConfigError, match="options: unknown key 'mini_batch_size'"):
        load_config(None, recipe="citrec", corpus="c", out="o", mini_batch_size=4)


def test_citrec_needs_the_callers_prefetch_ranker(tmp_path):
    config = CitrecConfig(corpus=str(tmp_path / "c"), out=str(tmp_path / "m"))
    with pytest.raises(CitrecConfigError, match="need a prefetch ranker"):
        run_recipe(config, None, progress=False)
    assert not (tmp_path / "m").exists()


def test_the_registry_states_prompts_and_base_paths_once():
    assert prompts("e5-small-multilingual") == {"query": "query: ", "passage": "passage: "}
    assert prompts("minilm-en") == {} and prompts("some/dir") == {}
    settings = CitrecConfig(corpus="c", out="o", max_seq_length=48).settings()
    assert (settings.query_prefix, settings.passage_prefix) == ("query: ", "passage: ")
    assert settings.max_seq_length == 48 and settings.frozen_base
    assert base_path("org/model") == "org/model"
    with pytest.raises(UnknownModelError, match="'muse-v3' cannot be trained"):
        base_path("muse-v3")
    with pytest.raises(UnknownModelError, match="unknown model 'nope'"):
        base_path("nope")
