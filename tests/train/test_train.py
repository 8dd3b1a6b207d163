"""Every training recipe end to end on the real TALN corpus (a few steps, short inputs), the
experiment grid, and the errors raised before training starts."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.experiment import load_experiment, run_experiment, train_model
from openmsd.io import cache_root
from openmsd.models import load_model
from openmsd.models.encoder import SentenceTransformerEncoder
from openmsd.relations import connect, derive
from openmsd.train import ConfigError, TrainConfig, load_base, load_config, relation_examples
from openmsd.train.data import TrainingDataError, snippet_pairs
from tests.conftest import SMALL


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copy2(source, target)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")
            if p.is_file()} if root.is_dir() else {}


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The models are read from a hard-linked copy of the user's cache (``$OPENMSD_CACHE``
    points there): what a test builds or saves never lands in the real one, checked after."""
    real = cache_root()
    before = _files(real)
    cache = tmp_path / "openmsd-cache"
    if (real / "models").is_dir():
        shutil.copytree(real / "models", cache / "models", copy_function=_link)
    monkeypatch.setenv("OPENMSD_CACHE", str(cache))
    yield
    assert _files(real) == before, "a test wrote into the user's cache"


TINY = {"batch_size": 4, "max_steps": 2, "eval_steps": 1, "max_seq_length": 32,
        "warmup_steps": 1}


@pytest.fixture(scope="module")
def corpus(taln_corpus: Path, tmp_path_factory) -> Corpus:
    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path_factory.mktemp("train") / "c"))
    derive(corpus, connect("duckdb"), SMALL)
    return corpus


def test_snippets_come_from_one_paper_and_skip_test_papers(corpus):
    words = str.split
    pairs = snippet_pairs(corpus, words, " ".join, min_tokens=5, max_tokens=20, seed=1)
    assert pairs.left_out["dev_or_test_paper"] > 50 and pairs.table.num_rows > 1000
    rows = pairs.table.slice(0, 50).to_pylist()
    assert all(5 <= len(r["anchor"].split()) <= 20 for r in rows)
    again = snippet_pairs(corpus, words, " ".join, min_tokens=5, max_tokens=20, seed=1)
    assert again.table.equals(pairs.table)  # seeded


def without_cc(corpus: Corpus, tmp_path: Path) -> Corpus:
    """A copy of ``corpus`` whose relations have no co-citation pair."""
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "no-cc"))
    pairs = copy.root / "relations" / "pairs.parquet"
    table = pq.read_table(pairs)
    pq.write_table(table.filter(pc.not_equal(table["relation"], "cc")), pairs)
    return copy


def test_relation_examples_have_specter_negatives(corpus, tmp_path):
    examples = relation_examples(corpus, "dc-or-cc")
    assert examples.table.column_names == ["anchor", "positive", "negative"]
    assert examples.table.num_rows > 100
    rows = examples.table.to_pylist()
    assert all(r["anchor"] != r["positive"] and r["anchor"] != r["negative"] for r in rows)
    assert all(relation_examples(corpus, "dc-or-cc").table.equals(examples.table)
               for _ in range(3))  # same examples in the same order: a seeded run repeats
    with pytest.raises(TrainingDataError, match="positive set 'cc' is empty"):
        relation_examples(without_cc(corpus, tmp_path), "cc")


@pytest.mark.parametrize("recipe,extra", [("pretrain-cl", {"snippet_max": 24}),
                                          ("mspt", {"positives": "dc-or-cc",
                                                    "mini_batch_size": 2}),
                                          ("specter", {}),
                                          ("scincl", {})])
def test_every_recipe_trains_end_to_end(corpus, tiny_model, tmp_path, recipe, extra):
    config = TrainConfig(recipe=recipe, corpus=str(corpus.root), out=str(tmp_path / "m"),
                         base=str(tiny_model), **TINY, **extra)
    manifest = train_model(config)
    out = tmp_path / "m"
    assert (out / "openmsd_train.json").exists() and (out / "model.safetensors").exists()
    assert not (tmp_path / "m.checkpoints").exists()
    metrics = manifest["metrics"]
    assert metrics["steps"] == 2 and metrics["train_loss"] > 0
    assert 0 <= metrics["dev_best"]["dev_MAP"] <= 100
    assert manifest["data"]["examples"] > 0 and manifest["config"]["recipe"] == recipe
    assert manifest["config"]["loss"] == ("triplet" if recipe == "specter" else "contrastive")
    assert load_model(str(out)).encode(["un article"]).shape == (1, 64)


def test_e5_is_trained_and_used_with_its_prefixes(tmp_path):
    model = load_base(TrainConfig(recipe="specter", corpus="c", out="o", max_seq_length=32))
    assert model.prompts == {"query": "query: ", "passage": "passage: "}
    model.save(str(tmp_path / "e5"))
    encoder = SentenceTransformerEncoder(tmp_path / "e5")
    assert encoder.prefixes == {"query": "query: ", "passage": "passage: "}


def test_errors_before_training(corpus, tiny_model, tmp_path):
    base = {"corpus": str(corpus.root), "out": str(tmp_path / "m"), **TINY}
    with pytest.raises(ConfigError, match="unknown recipe"):
        TrainConfig(recipe="bert", **base)
    with pytest.raises(ConfigError, match="positives: unknown positive set"):
        TrainConfig(recipe="mspt", positives="dc-xor-cc", **base)
    with pytest.raises(ConfigError, match=r"dev_split: .*no split 'nope'"):
        train_model(TrainConfig(recipe="specter", dev_split="nope", base=str(tiny_model), **base))
    with pytest.raises(ConfigError, match="base: unknown model"):
        train_model(TrainConfig(recipe="specter", base="no-such-model", **base))
    with pytest.raises(ConfigError, match="cannot be trained"):
        train_model(TrainConfig(recipe="specter", base="muse-v3", **base))
    with pytest.raises(ConfigError, match="GradCache"):
        train_model(TrainConfig(recipe="specter", mini_batch_size=2, base=str(tiny_model), **base))
    with pytest.raises(TrainingDataError, match="empty"):
        train_model(TrainConfig(recipe="mspt", positives="cc", base=str(tiny_model),
                          **{**base, "corpus": str(without_cc(corpus, tmp_path).root)}))
    assert not (tmp_path / "m").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text('recipe = "mspt"\ncorpus = "c"\nout = "o"\nlearning_rat = 0.1\n')
    with pytest.raises(ConfigError, match=r"bad\.toml: unknown key 'learning_rat'"):
        load_config(bad)
    bad.write_text('recipe = "mspt"\ncorpus = "c"\nout = "o"\nmax_steps = "ten"\n')
    with pytest.raises(ConfigError, match="'max_steps': expected int"):
        load_config(bad)
    run = CliRunner().invoke(app, ["train", "mspt", str(corpus.root), "--out",
                                   str(tmp_path / "m"), "--positives", "nope"])
    assert run.exit_code == 2 and "unknown positive set" in run.output
    run = CliRunner().invoke(app, ["train", "mspt", str(corpus.root), "--out",
                                   str(tmp_path / "m"), "--enrich", "llm32"])
    assert run.exit_code == 2 and "unknown enrichment 'llm32'" in run.output


def test_experiment_grid_and_table(corpus, tiny_model, tmp_path):
    config = tmp_path / "exp.toml"
    config.write_text(f"""
[experiment]
corpus = "{corpus.root}"
out = "{tmp_path / 'exp'}"
splits = ["idt"]
seeds = [0, 1]
models = ["bm25", "random"]
baseline = "random"

[defaults]
base = "{tiny_model}"
batch_size = 4
max_steps = 1
eval_steps = 1
max_seq_length = 32

[[run]]
name = "mSpt"
recipe = "mspt"
positives = ["dc", "cc"]
""")
    experiment = load_experiment(config)
    assert [r.name for r in experiment.runs] == ["mSpt-dc", "mSpt-cc"]
    results = run_experiment(experiment, log=lambda m: None)
    rows = results["splits"]["idt"]["rows"]
    assert set(rows) == {"bm25", "random", "mSpt-dc", "mSpt-cc"}
    assert rows["mSpt-dc"]["seeds"] == 2 and rows["mSpt-dc"]["citation"]["MAP sd"] is not None
    assert rows["mSpt-dc"]["citation"]["MAP"] > rows["random"]["citation"]["MAP"]
    tests = results["splits"]["idt"]["significance"]["models"]
    assert tests["bm25"]["citation"]["p"] < 0.05
    table = (tmp_path / "exp" / "results.md").read_text()
    assert "mSpt-cc" in table and "citation MAP" in table
    directions = rows["mSpt-dc"]["by_direction"]
    assert list(directions) == ["en->en", "en->non-en", "non-en->en", "non-en->non-en"]
    total = sum(d["average"]["n_queries"] for d in directions.values())
    assert total >= rows["mSpt-dc"]["average"]["n_queries"]  # a query may span both languages
    assert "by language direction" in table and "| non-en->non-en |" in table
    # a rerun trains nothing again
    logged: list[str] = []
    run_experiment(experiment, log=logged.append)
    assert sum("trained already" in m for m in logged) == 4
    config.write_text(config.read_text().replace('recipe = "mspt"', 'recipe = "mspt"\nsteps = 3'))
    with pytest.raises(ConfigError, match=r"\[\[run\]\] 1: unknown key 'steps'"):
        load_experiment(config)
    assert json.loads((tmp_path / "exp" / "results.json").read_text())["seeds"] == [0, 1]


def test_training_on_enriched_text(corpus, tiny_model, tmp_path):
    from openmsd.corpus import variant_summaries
    from openmsd.enrich import enrich

    enriched = Corpus(shutil.copytree(corpus.root, tmp_path / "enriched"))
    base = {"corpus": str(enriched.root), "base": str(tiny_model), **TINY}
    with pytest.raises(ConfigError, match=r"enrich: .*: no author64 summaries; run 'openmsd"):
        train_model(TrainConfig(recipe="mspt", enrich="author64", out=str(tmp_path / "x"), **base))
    with pytest.raises(ConfigError, match="enrich: unknown enrichment 'author32'"):
        TrainConfig(recipe="mspt", enrich="author32", out="o", **base)
    enrich(enriched, "author", 64)
    with pytest.raises(ConfigError, match="pretrain-cl trains on snippets"):
        train_model(TrainConfig(recipe="pretrain-cl", enrich="author64", out="o", **base))
    summaries = variant_summaries(enriched, "author", 64)
    plain = relation_examples(enriched, "dc").table.to_pylist()
    rich = relation_examples(enriched, "dc", summaries=summaries).table.to_pylist()
    assert len(rich) == len(plain)
    changed = [(p, r) for p, r in zip(plain, rich, strict=True) if p["anchor"] != r["anchor"]]
    assert changed  # the French anchors now carry their authors' English abstract
    before, after = changed[0]
    assert after["anchor"].startswith(before["anchor"].split(" Abstract: ")[0] + " Abstract: (")
    manifest = train_model(TrainConfig(recipe="mspt", enrich="author64", out=str(tmp_path / "m"),
                                 **base))
    assert manifest["config"]["enrich"] == "author64"
    assert manifest["data"]["examples_sha256"] != train_model(TrainConfig(
        recipe="mspt", out=str(tmp_path / "p"), **base))["data"]["examples_sha256"]


def test_experiment_scores_enriched_runs_on_enriched_text_and_keeps_older_models(tmp_path):
    from openmsd.experiment.grid import scored_name, trained_already

    config = TrainConfig(recipe="mspt", corpus="c", out=str(tmp_path / "m"), enrich="topn128")
    assert scored_name(config) == f"{tmp_path / 'm'}+topn128"
    assert scored_name(config.replace(enrich=None)) == str(tmp_path / "m")
    plain = config.replace(enrich=None)
    saved = {k: v for k, v in plain.as_dict().items() if k != "enrich"}  # before the key
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "openmsd_train.json").write_text(json.dumps({"config": saved}))
    (tmp_path / "linked").symlink_to(tmp_path / "m")
    assert trained_already(plain) and not trained_already(config)
    assert not trained_already(plain.replace(max_steps=7))
    # the same model, linked elsewhere
    assert trained_already(plain.replace(out=str(tmp_path / "linked")))


def test_rows_of_an_enrichment_experiment():
    from openmsd.experiment.grid import row_models

    path = Path(__file__).parents[2] / "experiments" / "taln-enrich.toml"
    experiment = load_experiment(path)
    rows = row_models(experiment)
    out = Path("runs/taln-enrich/models")
    assert rows["e5-small-multilingual+author64"] == ["e5-small-multilingual+author64"]
    assert rows["mSpt-dc"] == [str(out / f"mSpt-dc-s{s}") for s in (0, 1, 2)]
    assert rows["mSpt-dc+author64"] == [f"{out}/mSpt-dc+author64-s{s}+author64"
                                        for s in (0, 1, 2)]  # trained and tested enriched
    assert rows["mSpt-dc+llm64"] == [f"{out}/mSpt-dc-s{s}+llm64" for s in (0, 1, 2)]
