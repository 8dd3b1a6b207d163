"""Adapters: a head trained on a corpus's stored vectors and its citations, chosen by
cross-validation, applied as a model like any other; and what bad input gets.

The corpus is generated: 240 English papers in 8 topics, each citing papers of its own topic.
Its stored vectors (written as ``minilm-en@onnx``, as ``openmsd embed --model minilm-en`` stores
them with the default backend) carry the topic in 4 of 16 dimensions under louder noise in the
other 12: a head that learns to listen to those 4 ranks a paper's partners higher.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.eval import evaluate_sdsm, load_pool, sdsm_per_query
from openmsd.ingest import ingest
from openmsd.models import (
    AdapterError,
    current_hashes,
    find_adapter,
    load_model,
    load_vectors,
    paper_input,
    read_adapter,
)
from openmsd.rank import corpus_papers, fusion_spec, load_scorer
from openmsd.relations import RelationsConfig, SplitConfig, connect, derive
from openmsd.train import AdapterConfig, AdapterDataError, adapter_name, train_adapter
from openmsd.vectors import vectors_dir, write_part

BASE = "minilm-en@onnx"
ADAPTER = "adapter-minilm-en"
TOPICS, PER_TOPIC, DIM = 8, 30, 16
runner = CliRunner()


def generated_papers(path: Path, seed: int = 0) -> Path:
    """240 papers, ``p000``…, topic ``i % 8``; each cites 4 earlier papers of its topic."""
    rng = np.random.default_rng(seed)
    words = [f"word{t}" for t in range(TOPICS)]
    with path.open("wb") as out:
        for i in range(TOPICS * PER_TOPIC):
            topic = i % TOPICS
            same = [j for j in range(topic, i, TOPICS)]
            cites = rng.choice(same, size=min(4, len(same)), replace=False) if same else []
            out.write(orjson.dumps({
                "id": f"p{i:03d}", "title": f"Paper {i} on {words[topic]}",
                "abstract": f"A study of {words[topic]} number {i} in English prose.",
                "language": "en", "year": 2000 + i % 20,
                "references": [f"p{j:03d}" for j in sorted(cites)]}) + b"\n")
    return path


def write_vectors(corpus: Corpus, key: str, dim: int = DIM, seed: int = 1,
                  keep: int | None = None) -> None:
    """Vectors of every paper under ``key``: the topic in 4 dimensions, noise in the rest."""
    rng = np.random.default_rng(seed)
    hashes = current_hashes(corpus, key)
    ids = sorted(hashes)[:keep]
    centres = rng.normal(size=(TOPICS, 4))
    rows = []
    for paper in ids:
        topic = int(paper[1:]) % TOPICS
        rows.append(np.concatenate([0.45 * centres[topic] + 0.1 * rng.normal(size=4),
                                    rng.normal(size=dim - 4)]))
    directory = vectors_dir(corpus, key)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    write_part(directory / "part-00000.parquet", ids, [hashes[p] for p in ids],
               np.asarray(rows, np.float32))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The generated corpus with relations and ``minilm-en@onnx`` vectors (read only)."""
    root = tmp_path_factory.mktemp("adapter")
    ingest([generated_papers(root / "papers.jsonl")], root / "corpus")
    corpus = Corpus(root / "corpus")
    derive(corpus, connect("duckdb"),
           RelationsConfig(split=SplitConfig(top_languages=1, idt=0.2, odt=0.0, dev=0.1)))
    write_vectors(corpus, BASE)
    return corpus.root


@pytest.fixture
def corpus(built: Path, tmp_path: Path) -> Corpus:
    return Corpus(shutil.copytree(built, tmp_path / "c"))


@pytest.fixture(scope="module")
def trained(built: Path, tmp_path_factory) -> Corpus:
    """The corpus with its adapter trained by the command (read only)."""
    corpus = Corpus(shutil.copytree(built, tmp_path_factory.mktemp("trained") / "c"))
    result = runner.invoke(app, ["train", "adapter", str(corpus.root), "--base", "minilm-en",
                                 "--epochs", "8", "--json"])
    assert result.exit_code == 0, result.output
    return corpus


def test_the_command_chooses_a_head_by_cross_validation_and_stores_its_provenance(trained):
    path = trained.root / "adapters" / ADAPTER
    meta = json.loads((path / "adapter.json").read_text())
    assert meta["name"] == ADAPTER
    assert meta["bases"] == [{"model": "minilm-en", "backend": "onnx", "key": BASE, "dim": DIM}]
    selection = meta["selection"]
    # the topic is there to learn: a trained head beats the identity out of fold
    assert meta["training"]["chosen"]["candidate"] != "identity"
    assert selection["chosen_map"] > selection["identity_map"] + 1
    assert selection["queries"]["train_folds"] > 50
    assert {f["candidate"] for f in selection["figures"]} == {
        "identity", "linear, pull 0.03", "linear, pull 0.1", "linear, pull 0.3"}
    assert meta["corpus"]["build"] == trained.manifest()["build"]["id"]
    assert len(meta["corpus"]["data_fingerprint"]) == 16
    assert meta["training"]["positives"] == "dc-or-cc-or-bc"
    adapter = read_adapter(path)
    assert adapter.head.kind == "linear" and adapter.head.tensors["weight"].shape == (DIM, DIM)
    # the adapted vectors are stored: the base's through the head
    ids, adapted = load_vectors(trained, ADAPTER)
    base_ids, base = load_vectors(trained, BASE)
    assert ids == base_ids and len(ids) == TOPICS * PER_TOPIC
    np.testing.assert_allclose(adapted, adapter.apply(base), atol=1e-6)
    assert not np.allclose(adapted, base / np.linalg.norm(base, axis=1, keepdims=True))


def test_the_adapter_ranks_the_held_out_split_better_than_its_base(trained):
    result = evaluate_sdsm(trained, [BASE, ADAPTER], split="idt")
    models = result.summary["models"]
    assert models[ADAPTER]["average"]["MAP"] > models[BASE]["average"]["MAP"] + 2


def test_embed_maps_the_stored_vectors_by_name_or_by_directory(trained, tmp_path):
    corpus = Corpus(shutil.copytree(trained.root, tmp_path / "c"))
    expected = load_vectors(corpus, ADAPTER)[1]
    shutil.rmtree(vectors_dir(corpus, ADAPTER))
    result = runner.invoke(app, ["embed", str(corpus.root), "--model", ADAPTER, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["mapped"] == TOPICS * PER_TOPIC
    np.testing.assert_allclose(load_vectors(corpus, ADAPTER)[1], expected, atol=1e-6)
    # the directory names the same model, the same vectors
    path = str(corpus.root / "adapters" / ADAPTER)
    assert find_adapter(path) == Path(path)
    assert vectors_dir(corpus, path) == vectors_dir(corpus, ADAPTER)
    result = runner.invoke(app, ["embed", str(corpus.root), "--model", path,
                                 "--backend", "onnx"])
    assert result.exit_code == 2 and "is an adapter" in result.output


def test_hybrid_uses_the_corpus_adapter_and_says_so(trained):
    spec = fusion_spec("hybrid", trained).as_json()
    assert ADAPTER in spec["members"] and spec["adapter"]["name"] == ADAPTER
    # the adapter holds the English model: it is not heard twice
    assert not any(m.startswith("minilm-en") for m in spec["members"])
    assert fusion_spec("hybrid-graph", trained).members[0] == ADAPTER
    scorer = load_scorer("hybrid", corpus_papers(trained))
    adapted = [m for m in scorer.members if m.name == ADAPTER]
    assert adapted and "trained on this corpus's citations" in adapted[0].words
    from openmsd.search import rank_related

    # the adapter speaks for the results it ranks among its first VOICE (z-score fusion may
    # put lexical and graph matches first on these random vectors)
    results = rank_related(trained, "p100", "hybrid", k=20)
    said = [w for r in results for w in r.why]
    assert any("adapter adapter-minilm-en" in w for w in said), said


def test_the_english_model_joins_hybrid_whichever_backend_embedded_it(corpus):
    """``embed --model minilm-en`` stores ``minilm-en@onnx``: the untuned hybrid must find it."""
    write_vectors(corpus, "e5-small-multilingual@onnx", dim=DIM, seed=2)
    spec = fusion_spec("hybrid", corpus).as_json()
    assert "minilm-en:onnx@en" in spec["members"]  # the canonical spelling
    assert spec["members"][1] == "e5-small-multilingual:onnx"
    assert "adapter" not in spec
    scorer = load_scorer("hybrid", corpus_papers(corpus))
    assert [m.name for m in scorer.members][-1] == "minilm-en@onnx@en"


def test_a_free_text_is_encoded_by_the_bases_then_mapped(corpus, tiny_model):
    """An adapter over a SentenceTransformer directory: the same vector for a paper's text
    encoded now as the stored one, and ``search`` works with the adapter."""
    from openmsd.models import embed_corpus
    from openmsd.vectors import model_slug

    base = str(tiny_model)
    embed_corpus(corpus, load_model(base), base)
    out = corpus.root / "adapters" / "tiny-adapted"
    manifest = train_adapter(AdapterConfig(str(corpus.root), [base], str(out), epochs=2,
                                           folds=2, pulls=[0.1]), sdsm_per_query)
    adapter = read_adapter(out)
    assert manifest["bases"][0]["key"] == base and manifest["bases"][0]["dim"] == 64
    encoder = load_model(str(out))
    text = paper_input("Paper 5 on word5", "A study of word5 number 5 in English prose.")
    stored = dict(zip(*load_vectors(corpus, "tiny-adapted"), strict=True))
    np.testing.assert_allclose(encoder.encode([text])[0], stored["p005"], atol=1e-4)
    np.testing.assert_allclose(encoder.encode([text])[0],
                               adapter.apply(load_model(base).encode([text]))[0], atol=1e-6)
    assert model_slug(str(out)) == "tiny-adapted"
    result = runner.invoke(app, ["search", str(corpus.root), "word5 prose", "--model",
                                 "tiny-adapted", "--json"])
    assert result.exit_code == 0, result.output


def _nothing_written(corpus: Corpus) -> bool:
    return not (corpus.root / "adapters").exists() and not any(
        (corpus.root / "vectors").glob("adapter-*"))


def test_bad_input_is_one_clear_line_and_writes_nothing(corpus, tmp_path):
    def train(*args: str) -> str:
        result = runner.invoke(app, ["train", "adapter", str(corpus.root), *args])
        assert result.exit_code == 2, result.output
        assert _nothing_written(corpus)
        said = result.output.strip()
        assert said.startswith("error:") and "\n" not in said, said
        return said

    # base vectors missing: the command that makes them
    assert "run 'openmsd embed" in train("--base", "muse-v3")
    # only another backend's vectors
    said = train("--base", "minilm-en:torch")
    assert "onnx backend only" in said and "--backend torch" in said
    # too few train pairs to learn from, with the count
    pairs = corpus.root / "relations" / "pairs.parquet"
    table = pq.read_table(pairs)
    train_dc = np.flatnonzero([s == "train" and r == "dc" for s, r in zip(
        table["split"].to_pylist(), table["relation"].to_pylist(), strict=True)])
    keep = np.ones(table.num_rows, bool)
    keep[train_dc[12:]] = False
    shutil.copy(pairs, corpus.root / "pairs.parquet")
    pq.write_table(table.filter(pa.array(keep)), pairs)
    said = train("--base", "minilm-en", "--positives", "dc")
    assert "12 train pairs of 'dc'" in said and "at least 20" in said
    assert "--positives dc-or-cc-or-bc" in said
    # the largest set too small: the whole graph's counts, not a larger set to choose
    keep = np.array([s != "train" for s in table["split"].to_pylist()])
    keep[np.flatnonzero(~keep)[:5]] = True
    pq.write_table(table.filter(pa.array(keep)), pairs)
    said = train("--base", "minilm-en")
    assert "train pairs of 'dc-or-cc-or-bc'" in said and "at least 20" in said
    assert "--positives" not in said and "the whole graph holds DC " in said
    shutil.move(corpus.root / "pairs.parquet", pairs)
    # bases of different papers
    write_vectors(corpus, "e5-small-multilingual@onnx", keep=200)
    said = train("--base", "minilm-en", "--base", "e5-small-multilingual")
    assert "different papers" in said and "lacks 40" in said
    shutil.rmtree(vectors_dir(corpus, "e5-small-multilingual@onnx"))
    # a corpus without relations
    shutil.rmtree(corpus.root / "relations")
    assert "no relations" in train("--base", "minilm-en")
    bare = Corpus(shutil.copytree(corpus.root, tmp_path / "bare"))
    with pytest.raises(AdapterDataError, match="no relations"):
        train_adapter(AdapterConfig(str(bare.root), ["minilm-en"]), sdsm_per_query)


def test_a_corrupt_adapter_or_bases_of_other_dimensions_are_named(trained, tmp_path):
    corpus = Corpus(shutil.copytree(trained.root, tmp_path / "c"))
    path = corpus.root / "adapters" / ADAPTER
    # the base's vectors now of another dimension
    write_vectors(corpus, BASE, dim=8)
    result = runner.invoke(app, ["embed", str(corpus.root), "--model", ADAPTER])
    assert result.exit_code == 2 and "8 dimensions" in result.output
    # a head cut short
    weights = path / "head.safetensors"
    weights.write_bytes(weights.read_bytes()[:40])
    with pytest.raises(AdapterError, match=r"head\.safetensors"):
        read_adapter(path)
    result = runner.invoke(app, ["related", str(corpus.root), "p100", "--model", ADAPTER])
    assert result.exit_code == 2 and "head.safetensors" in result.output
    # adapter.json not JSON, or without its fields
    (path / "adapter.json").write_text("{not json")
    with pytest.raises(AdapterError, match="not valid JSON"):
        read_adapter(path)
    (path / "adapter.json").write_text(json.dumps({"name": ADAPTER}))
    with pytest.raises(AdapterError, match="no 'bases' field"):
        read_adapter(path)
    # a corrupt adapter is named by hybrid too, never passed over in silence
    with pytest.raises(AdapterError, match=r"adapter\.json"):
        fusion_spec("hybrid", corpus)
    result = runner.invoke(app, ["related", str(corpus.root), "p100"])
    assert result.exit_code == 2 and "adapter.json" in result.output
    assert "Traceback" not in result.output


def test_an_adapter_of_weights_that_are_not_finite_is_refused_by_every_ranker(trained,
                                                                             tmp_path):
    from safetensors.numpy import load_file, save_file

    corpus = Corpus(shutil.copytree(trained.root, tmp_path / "c"))
    weights = corpus.root / "adapters" / ADAPTER / "head.safetensors"
    tensors = load_file(str(weights))
    save_file({k: np.full_like(v, np.nan) for k, v in tensors.items()}, str(weights))
    with pytest.raises(AdapterError, match="not finite"):
        read_adapter(weights.parent)
    for args in (["related", str(corpus.root), "p100"],  # the default ranker holds it
                 ["search", str(corpus.root), "word3 study"],
                 ["related", str(corpus.root), "p100", "--model", ADAPTER]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "head.safetensors" in result.output and "not finite" in result.output
        assert "openmsd train adapter" in result.output and "Traceback" not in result.output


def test_a_run_killed_between_the_adapter_and_its_vectors_is_named_and_mended(trained,
                                                                              tmp_path):
    """``train adapter`` killed (SIGKILL) after the new head is in place, before its vectors
    are: the old head's vectors are refused, naming the command that maps them again."""
    import os
    import signal
    import subprocess
    import sys

    from openmsd.crashpoint import ENV

    corpus = Corpus(shutil.copytree(trained.root, tmp_path / "c"))
    before = (corpus.root / "adapters" / ADAPTER / "head.safetensors").read_bytes()
    cli = "import sys; from openmsd.cli import app; sys.argv = ['openmsd', *sys.argv[1:]]; app()"
    killed = subprocess.run(
        [sys.executable, "-c", cli, "train", "adapter", str(corpus.root), "--base",
         "minilm-en", "--epochs", "3", "--seed", "7"],
        env={**os.environ, ENV: "adapter.written"}, capture_output=True, text=True,
        timeout=600)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert (corpus.root / "adapters" / ADAPTER / "head.safetensors").read_bytes() != before
    result = runner.invoke(app, ["related", str(corpus.root), "p100"])
    assert result.exit_code == 2, result.output
    assert "were not mapped by the head" in result.output
    assert f"openmsd embed {corpus.root} --model {ADAPTER}" in result.output
    assert runner.invoke(app, ["embed", str(corpus.root), "--model", ADAPTER]).exit_code == 0
    result = runner.invoke(app, ["related", str(corpus.root), "p100", "--json"])
    assert result.exit_code == 0, result.output


def test_an_adapter_swap_cut_short_is_named(trained, tmp_path):
    """Where the old adapter was moved aside and the new one never moved in (a file system
    without an atomic exchange, killed between the two renames), the rankers name it."""
    corpus = Corpus(shutil.copytree(trained.root, tmp_path / "c"))
    adapters = corpus.root / "adapters"
    (adapters / ADAPTER).rename(adapters / f".{ADAPTER}.old")
    result = runner.invoke(app, ["related", str(corpus.root), "p100"])
    assert result.exit_code == 2 and f".{ADAPTER}.old" in result.output
    assert "openmsd train adapter" in result.output


@pytest.mark.parametrize("module", [
    "openmsd.models.adapter", "openmsd.train.adapter.head", "openmsd.train.adapter.objective",
    "openmsd.train.adapter.folds", "openmsd.train.adapter.fit", "openmsd.train.adapter.run",
    "openmsd.eval.adapter_evaluator", "openmsd.rank.load"])
def test_doctests(module):
    import doctest
    import importlib

    assert doctest.testmod(importlib.import_module(module)).failed == 0


def test_update_trains_the_adapter_again_when_the_graph_grew(corpus, tiny_model, tmp_path):
    """What ``openmsd update`` does after its ingest: relations derived again, the new papers
    embedded by the base, the adapter trained again with its own settings and every paper
    mapped."""
    from openmsd.models import embed_corpus
    from openmsd.relations import read_manifest
    from openmsd.train import refresh_adapters, stale_adapters

    base = str(tiny_model)
    embed_corpus(corpus, load_model(base), base)
    train_adapter(AdapterConfig(str(corpus.root), [base], epochs=2, folds=2, pulls=[0.1]),
                  sdsm_per_query)
    assert refresh_adapters(corpus, sdsm_per_query) == []  # current: nothing to do
    extra = tmp_path / "more.jsonl"
    extra.write_bytes(b"".join(orjson.dumps({
        "id": f"q{i:03d}", "title": f"Later paper {i} on word{i % TOPICS}",
        "abstract": f"More on word{i % TOPICS}.", "language": "en", "year": 2021,
        "references": [f"p{j:03d}" for j in range(i % TOPICS, 80, TOPICS)]}) + b"\n"
        for i in range(40)))
    ingest([extra], corpus.root)
    assert [a.name for a in stale_adapters(corpus)] == [adapter_name([base])]
    done = refresh_adapters(corpus, sdsm_per_query)
    assert len(done) == 1 and done[0]["mapped"] == TOPICS * PER_TOPIC + 40
    build = corpus.manifest()["build"]["id"]
    assert done[0]["corpus"]["build"] == build and read_manifest(corpus)["corpus_build"] == build
    assert done[0]["training"]["settings"]["folds"] == 2  # its own settings
    assert stale_adapters(corpus) == []


def test_watch_and_related_work_straight_after_training(trained, tmp_path):
    """Training indexes the adapted vectors: the commands that use the corpus's adapter by
    default answer at once, without an 'index build'."""
    root = shutil.copytree(trained.root, tmp_path / "c")
    assert (root / "index" / ADAPTER).is_dir()
    seeds = tmp_path / "seeds.bib"  # by title: these papers have no DOI
    seeds.write_text("@article{a, title={Paper 1 on word1}}\n"
                     "@article{b, title={Paper 2 on word2}}\n")
    watched = runner.invoke(app, ["watch", str(root), "--seeds", str(seeds), "--json"])
    assert watched.exit_code == 0, watched.output
    assert json.loads(watched.stdout)["results"]
    related = runner.invoke(app, ["related", str(root), "p001", "-k", "3", "--json"])
    assert related.exit_code == 0, related.output
    assert len(json.loads(related.stdout)) == 3


def test_an_identity_adapter_says_it_changes_nothing():
    from openmsd.experiment import adapter_line

    manifest = {"name": "adapter-x", "path": "c/adapters/adapter-x", "mapped": 40,
                "training": {"chosen": {"candidate": "identity", "head": "identity",
                                        "epochs": 0}, "seconds": 1.0},
                "selection": {"queries": {"train_folds": 30, "dev": 2}, "dev_used": False,
                              "identity_map": 41.5, "chosen_map": 41.5}}
    said = adapter_line(manifest)
    assert "the identity" in said and "leaves every vector as it is" in said


def _mean_rank_of_links(corpus: Corpus, held) -> tuple[float, float, float]:
    """The mean rank of the train queries' citation links by the adapter fitted on every
    link, by the held-out heads and by the base."""
    from openmsd.rank import HeldOutDense, Queries

    papers = corpus_papers(corpus)
    scorer = HeldOutDense(papers, held.ids, held.folds, held.matrices, ADAPTER)
    full = load_scorer(ADAPTER, papers)
    pool = load_pool(corpus, "train")
    judged = pool.judgements.filter(pc.equal(pool.judgements["task"], "citation"))
    queries = sorted(set(judged["query"].to_pylist()))
    rows = [papers.position[q] for q in queries]
    asked = Queries.of_rows(papers, rows)
    everything = np.arange(len(papers))
    linked = [(i, papers.position[d]) for i, q in enumerate(queries)
              for d in judged.filter(pc.equal(judged["query"], q))["doc"].to_pylist()]

    def mean_rank_of_links(scores: np.ndarray) -> float:
        scores[np.arange(len(rows)), rows] = -np.inf  # a paper is not its own link
        place = np.argsort(np.argsort(-scores, axis=1), axis=1)
        return float(np.mean([place[i, d] for i, d in linked]))

    return (mean_rank_of_links(full.score(asked, everything)),
            mean_rank_of_links(scorer.score(asked, everything)),
            mean_rank_of_links(load_scorer(BASE, papers).score(asked, everything)))


def test_the_adapter_keeps_its_cross_validation_fits_and_they_are_fits_without_the_fold(
        trained):
    """``folds.safetensors`` holds the chosen head as the cross-validation fitted it without
    each fold's links: the same heads as fitting it again without each fold, so a ranker reads
    them instead of fitting five more."""
    from openmsd.models import read_fold_heads
    from openmsd.train import held_out_vectors

    adapter = read_adapter(trained.root / "adapters" / ADAPTER)
    assert adapter.meta["training"]["held_out"] == {"folds": 5, "seed": 0,
                                                    "fitted": [0, 1, 2, 3, 4], "rows": None}
    assert sorted(read_fold_heads(adapter)) == [0, 1, 2, 3, 4]
    fitted: list[int] = []
    kept = held_out_vectors(trained, adapter, folds=5, seed=0, progress=fitted.append)
    assert fitted == []  # nothing fitted again
    adapter.meta["training"]["held_out"] = None  # as an adapter written without its fits
    again = held_out_vectors(trained, adapter, folds=5, seed=0, progress=fitted.append)
    assert fitted == [1] * 5
    np.testing.assert_array_equal(kept.folds, again.folds)
    for mine, theirs in zip(kept.matrices, again.matrices, strict=True):
        np.testing.assert_allclose(mine, theirs, atol=1e-5)
    assert not np.allclose(kept.matrices[0], kept.matrices[1])  # each fold its own head


def test_one_head_fitted_without_the_queried_papers_links_scores_them_out_of_fold(trained):
    """Where the adapter kept no fits (a large corpus judges one fold), the ranker's train
    queries are scored by one head fitted on the rows that touch none of them: it ranks their
    links lower than the adapter fitted on every link."""
    from openmsd.train import held_out_vectors

    adapter = read_adapter(trained.root / "adapters" / ADAPTER)
    adapter.meta["training"]["held_out"] = None
    pool = load_pool(trained, "train")
    cited = sorted(set(pool.judgements.filter(pc.equal(pool.judgements["task"], "citation"))[
        "query"].to_pylist()))
    queries = set(cited[:len(cited) // 4])  # a large corpus's ranker queries a few papers
    fitted: list[int] = []
    held = held_out_vectors(trained, adapter, folds=5, seed=0, progress=fitted.append,
                            queries=queries)
    assert fitted == [1] and len(held.matrices) == 1 and not held.folds.any()
    full = held_out_vectors(trained, adapter, folds=5, seed=0, queries=set())
    assert not np.allclose(held.matrices[0], full.matrices[0])  # their links unseen


def test_where_the_queries_touch_most_links_each_fold_gets_its_own_head(trained):
    """A small corpus's ranker queries nearly every train paper: one head without all their
    links would be the base, so each fold gets a head fitted without its own links, and the
    queries' links rank as they do out of fold, below the adapter fitted on every link and
    above the base."""
    from openmsd.train import held_out_vectors

    adapter = read_adapter(trained.root / "adapters" / ADAPTER)
    adapter.meta["training"]["held_out"] = None
    pool = load_pool(trained, "train")
    queries = set(pool.judgements.filter(pc.equal(pool.judgements["task"], "citation"))[
        "query"].to_pylist())
    fitted: list[int] = []
    held = held_out_vectors(trained, adapter, folds=5, seed=0, progress=fitted.append,
                            queries=queries)
    assert len(fitted) == 5 and len(held.matrices) == 5 and len(set(held.folds.tolist())) == 5
    seen, unseen, base = _mean_rank_of_links(trained, held)
    assert seen < unseen < base, (seen, unseen, base)


def test_a_large_corpus_stops_a_candidate_that_stops_improving_and_keeps_its_judged_fold(
        corpus):
    """Above ``cv_rows`` rows one fold is judged and a candidate's fits stop after
    ``patience`` epochs without a better figure; the judged fold's fit is kept, the others are
    fitted when a ranker asks for every fold."""
    from openmsd.train import held_out_vectors

    manifest = train_adapter(AdapterConfig(str(corpus.root), bases=[BASE], epochs=12,
                                           cv_rows=900, patience=1,
                                           learning_rate=0.05), sdsm_per_query)
    assert manifest["training"]["held_out"] == {"folds": 5, "seed": 0, "fitted": [0],
                                                "rows": 900}
    assert "stops after 1 epochs" in manifest["selection"]["method"]
    runs: dict[str, list[float]] = {}
    for figure in manifest["selection"]["figures"][1:]:
        runs.setdefault(figure["candidate"], []).append(figure["map"])
    assert len(runs) == 3
    for maps in runs.values():  # each ran until an epoch brought nothing better, or to the end
        assert len(maps) == 12 or maps[-1] <= max(maps[:-1])
        assert all(maps[i] > max(maps[:i]) for i in range(1, len(maps) - 1))
    assert any(len(maps) < 12 for maps in runs.values())
    adapter = read_adapter(manifest["path"])
    fitted: list[int] = []
    held = held_out_vectors(corpus, adapter, folds=5, seed=0, progress=fitted.append)
    assert fitted == [1] * 4 and len(held.matrices) == 5  # fold 0's fit is the kept one


def test_a_ranker_learns_the_adapter_from_heads_that_never_saw_the_query_links(trained):
    """Out of fold: a paper of fold f is scored by the head fitted without fold f's links.
    Those heads still learn the topics from the other folds, but they rank a train paper's
    own links lower than the adapter fitted on them does: the ranker is not fooled."""
    from openmsd.train import held_out_vectors

    adapter = read_adapter(trained.root / "adapters" / ADAPTER)
    held = held_out_vectors(trained, adapter, folds=5, seed=0)
    assert len(held.matrices) == 5 and sorted(set(held.folds.tolist())) == [0, 1, 2, 3, 4]
    for matrix in held.matrices:
        np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    seen, unseen, base = _mean_rank_of_links(trained, held)
    assert seen < unseen < base, (seen, unseen, base)
