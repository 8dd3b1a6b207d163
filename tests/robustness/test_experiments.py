"""The measurements on vectors whose answers are known, the paper loader, the embedding cache,
and the whole command on real papers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.report import IngestError
from openmsd.robustness import experiments as ex
from openmsd.robustness.embedding_cache import EmbeddingCache
from openmsd.robustness.neighbours import TABLE_COLUMNS
from openmsd.robustness.papers import load_papers, sample
from openmsd.robustness.report import examples
from openmsd.robustness.suite import RobustnessError, run_suite


def unit(rows: list[list[float]]) -> np.ndarray:
    m = np.asarray(rows, np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_task1_ranks_each_title_against_every_document() -> None:
    documents = unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    titles = unit([[1, 0.1, 0], [0.9, 1, 0], [1, 0, 0.5]])  # the 3rd is closer to document 0
    result = ex.alternative_self(titles, documents)
    assert result == {"MRR": round((1 + 1 + 0.5) / 3, 4), "T100": 100.0, "n_queries": 3}


def test_task2_other_titles_compete_but_not_ones_own() -> None:
    documents = unit([[1, 0], [0, 1]])
    titles = unit([[1, 0.2], [0.2, 1]])
    # every title is its own nearest candidate, but it is left out; the other title is far
    assert ex.alternative_self_with_titles(titles, documents, titles)["MRR"] == 1.0
    close_titles = unit([[1, 0.3], [1, 0.31]])  # paper 1's title sits next to paper 0's
    result = ex.alternative_self_with_titles(close_titles, documents, close_titles)
    assert result["MRR"] < 1.0


def test_nn_retrieval_counts_original_in_top_1_and_10() -> None:
    rng = np.random.default_rng(0)
    documents = unit(rng.normal(size=(50, 8)).tolist())
    near = unit((documents[:20] + 0.01 * rng.normal(size=(20, 8))).tolist())
    far = unit(rng.normal(size=(20, 8)).tolist())
    assert ex.nn_retrieval(near, np.arange(20), documents)["NN1_Ret"] == 100.0
    assert ex.nn_retrieval(far, np.arange(20), documents)["NN1_Ret"] < 30


def test_aop_is_high_for_copies_and_low_for_random_neighbours() -> None:
    rng = np.random.default_rng(1)
    documents = unit(rng.normal(size=(200, 16)).tolist())
    papers = np.arange(0, 200, 20)
    copies = documents[papers].copy()
    overlap = ex.neighbour_overlap(copies, papers, documents, (10, 20))
    # an exact copy shares every neighbour but the two copies themselves: (k - 1) / k (less a
    # tie between another paper and its copy at rank k, now and then)
    assert overlap[:, 0].mean() == pytest.approx(90.0, abs=1.5)
    assert overlap[:, 1].mean() == pytest.approx(95.0, abs=1.5)
    noise = unit(rng.normal(size=(10, 16)).tolist())
    assert ex.neighbour_overlap(noise, papers, documents, (10, 20))[:, 0].mean() < 20


def test_similarity_summary_and_share_above_mean() -> None:
    pairs = ex.pair_similarities(unit([[1, 0], [1, 0], [0, 1]]))
    assert sorted(pairs.tolist()) == [0.0, 0.0, 1.0]
    summary = ex.similarity_summary(pairs)
    assert summary["max"] == 1.0 and summary["above_mean_pct"] == pytest.approx(33.33)
    assert ex.similarity_summary(np.zeros(0, np.float32)) is None


def test_capability_uses_table_5_thresholds() -> None:
    # SPECTER's row of Table 5: optimal on LL-HS, LO-HS and LO-PS
    specter = {"LL-HS": 86.77, "LO-HS": 77.55, "LL-PS": 80.93, "LO-PS": 69.03, "LO-DS": 41.32}
    assert [c for c, v in ex.capability(specter).items() if v["optimal"]] == [
        "LL-HS", "LO-HS", "LO-PS"]
    scibert = {"LL-HS": 75.04, "LO-HS": 59.62, "LL-PS": 22.6, "LO-PS": 26.28, "LO-DS": 14.35}
    assert [c for c, v in ex.capability(scibert).items() if v["optimal"]] == ["LL-HS", "LO-DS"]
    assert ex.capability({})["LO-DS"]["optimal"] is False


def test_papers_in_english_from_taln_and_s2orc(shared_data: Path) -> None:
    loaded = load_papers([shared_data / "taln" / "papers.jsonl",
                          shared_data / "s2orc-sample" / "metadata_sample.jsonl"], "en")
    papers = loaded.papers
    assert 1000 <= len(papers) <= 1100 and set(papers["language"]) == {"en"}
    row = papers[papers["paper_id"] == "recital-2012-long-001"].iloc[0]  # French, translated
    assert row["title"] == "Unsupervized Word Segmentation"
    assert row["abstract"].startswith("In this paper, we present an unsupervised segmentation")
    assert loaded.skipped["no abstract"] + loaded.skipped["no title"] >= 512  # S2ORC: counted
    assert loaded.skipped["no text in en"] > 0
    taln = str(shared_data / "taln" / "papers.jsonl")
    assert papers.loc[papers["paper_id"] == "recital-2012-long-001", "source"].item() == taln
    assert papers["source"].nunique() == 2
    chosen = sample(papers, 100, seed=3)
    assert len(chosen) == 100 and chosen.equals(sample(papers, 100, seed=3))
    french = load_papers([shared_data / "taln" / "papers.jsonl"], "fr").papers
    assert len(french) > 1000 and set(french["language"]) == {"fr"}


def test_examples_come_only_from_the_named_sources() -> None:
    papers = pd.DataFrame({"paper_id": ["nc1", "by1", "nc2", "by2"],
                           "source": ["taln.jsonl", "s2orc.jsonl", "taln.jsonl", "s2orc.jsonl"]})
    table = pd.DataFrame([(p, code, "LL-HS", "ok", f"t{p}", f"a{p}") for p in range(4)
                          for code in ("T_ARot", "T_AShuff")], columns=TABLE_COLUMNS)
    assert {r["paper_id"] for r in examples(table, papers, n=1)} == {"nc1"}
    mine = examples(table, papers, n=1, sources=["s2orc.jsonl"])
    assert [(r["paper_id"], r["code"], r["title"]) for r in mine] == [
        ("by1", "T_ARot", "t1"), ("by1", "T_AShuff", "t1")]
    assert examples(table, papers, n=5, sources=["other.jsonl"]) == []


def test_example_sources_must_be_inputs(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(RobustnessError, match="not among the inputs"):
        run_suite([shared_data / "taln" / "papers.jsonl"], ["muse-v3"], tmp_path,
                  example_sources=[tmp_path / "elsewhere.jsonl"])


def test_bad_input_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text('{"id": "a", "title": "Only a title"}\n')
    with pytest.raises(IngestError, match="no paper with a title and an abstract"):
        load_papers([empty])
    with pytest.raises(IngestError, match="no such file"):
        load_papers([tmp_path / "missing.jsonl"])


class Counting:
    name, dim = "counting", 3

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str], kind: str = "passage", batch_size: int = 32) -> np.ndarray:
        self.seen.extend(texts)
        return unit([[len(t), 1, 1 if kind == "query" else 2] for t in texts])


def test_embedding_cache_embeds_a_text_once_per_kind_and_resumes(tmp_path: Path) -> None:
    encoder = Counting()
    cache = EmbeddingCache(tmp_path / "c")
    first = cache.encode(encoder, ["aa", "b", "aa"], "passage")
    assert encoder.seen == ["aa", "b"] and np.allclose(first[0], first[2])
    cache.encode(encoder, ["aa"], "query")
    assert encoder.seen == ["aa", "b", "aa"]
    again = EmbeddingCache(tmp_path / "c").encode(encoder, ["b", "aa"], "passage")
    assert encoder.seen == ["aa", "b", "aa"] and np.allclose(again[1], first[0])


def test_robustness_command_on_real_papers(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(app, [
        "robustness", str(shared_data / "s2orc-sample" / "metadata_sample.jsonl"),
        "--model", "muse-v3", "--out", str(out), "--sample", "25", "--seed", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["n_papers"] == 25
    model = report["models"]["muse-v3"]
    assert set(model["task1"]) >= {"MRR", "T100"} and set(model["task2"]) >= {"MRR", "T100"}
    assert 0 < model["task1"]["MRR"] <= 1
    assert model["task2"]["MRR"] <= model["task1"]["MRR"]  # more candidates, never easier
    assert len(model["neighbours"]) == 32
    rotation = model["neighbours"]["T_ARot"]
    assert rotation["category"] == "LL-PS"
    assert set(rotation) >= {"NN1_Ret", "NN10_Ret", "AOP-10", "AOP-20"}
    assert rotation["NN10_Ret"] >= rotation["NN1_Ret"] > 50
    assert model["neighbours"]["TDelNN"]["NN1_Ret"] < rotation["NN1_Ret"]
    assert set(model["capability"]) == {"LL-HS", "LO-HS", "LL-PS", "LO-PS", "LO-DS"}
    for name in ("report.html", "tsne.png", "categories.png", "nn1_by_neighbour.png",
                 "similarity.png", "examples.jsonl"):
        assert (out / name).stat().st_size > 0
    assert "T_ARepADJ" in (out / "report.html").read_text()
    bad = CliRunner().invoke(app, ["robustness", str(shared_data / "s2orc-sample" /
                                                      "metadata_sample.jsonl"),
                                   "--model", "bm25", "--out", str(tmp_path / "x"),
                                   "--sample", "30"])
    assert bad.exit_code == 2 and "dense encoder" in bad.output
