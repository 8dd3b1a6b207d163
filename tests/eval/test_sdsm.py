"""The SDSM evaluation on the real TALN corpus: pools, judgements, models, reports, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.eval import TASKS, SDSMError, evaluate_sdsm, load_pool, markdown, write_report
from openmsd.io import ParquetSink
from openmsd.models import embed_corpus, load_model, paper_input
from openmsd.rank import UnknownScorerError
from openmsd.relations import connect, derive
from openmsd.vectors import text_hash, vector_schema, vectors_dir
from tests.conftest import SMALL

MODEL = "muse-v3"


@pytest.fixture(scope="module")
def corpus(taln_corpus: Path, tmp_path_factory) -> Corpus:
    """TALN with relations and muse-v3 vectors of the IDT and ODT papers."""
    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path_factory.mktemp("sdsm") / "c"))
    derive(corpus, connect("duckdb"), SMALL)
    pool = load_pool(corpus, "test")
    embed_corpus(corpus, load_model(MODEL), MODEL, paper_ids=pool.ids)
    return corpus


def test_pool_and_judgements_follow_the_split(corpus):
    pool = load_pool(corpus, "idt")
    splits = pq.read_table(corpus.root / "relations" / "splits.parquet").to_pylist()
    idt = {row["paper_id"] for row in splits if row["split"] == "idt"}
    assert set(pool.ids) <= idt and len(pool.ids) + pool.left_out["no_text"] == len(idt)
    pairs = pq.read_table(corpus.root / "relations" / "pairs.parquet").to_pylist()
    dc = {(p["paper_a"], p["paper_b"]) for p in pairs
          if p["split"] == "idt" and p["relation"] == "dc"}
    judged = pool.judgements.to_pylist()
    citation = {(j["query"], j["doc"]) for j in judged if j["task"] == "citation"}
    assert citation == dc | {(b, a) for a, b in dc}  # both sides by default
    cited = load_pool(corpus, "idt", dc="cited").judgements.to_pylist()
    assert {(j["query"], j["doc"]) for j in cited if j["task"] == "citation"} == dc
    assert all(j["query"] != j["doc"] for j in judged)
    assert {j["task"] for j in judged} == set(TASKS)


def test_models_random_and_bm25_on_idt(corpus):
    result = evaluate_sdsm(corpus, [MODEL, "bm25", "random"], split="idt")
    models = result.summary["models"]
    for name in (MODEL, "bm25"):
        for task in TASKS:
            assert models[name][task]["MAP"] > 3 * models["random"][task]["MAP"]
    # the random baseline is about its expected value: relevant / pool
    pool = result.summary["pool"]
    assert models["random"]["citation"]["MAP"] < 100 * 6 / pool
    n = models[MODEL]["citation"]["n_queries"]
    assert n == len({j["query"] for j in load_pool(corpus, "idt").judgements.to_pylist()
                     if j["task"] == "citation"})
    # per-query values average to the reported figure
    table = result.per_query[MODEL].to_pylist()
    citation = [row["AP"] for row in table if row["task"] == "citation"]
    assert np.mean(citation) * 100 == pytest.approx(models[MODEL]["citation"]["MAP"], abs=1e-3)
    averages = [models[MODEL][t]["MAP"] for t in TASKS]
    assert models[MODEL]["average"]["MAP"] == pytest.approx(np.mean(averages), abs=1e-3)
    # breakdowns cover every query once
    by_language = models[MODEL]["by_language"]
    assert sum(v["citation"]["n_queries"] for v in by_language.values()) == n
    assert sum(v["citation"]["n_queries"] for v in models[MODEL]["by_resource"].values()) == n
    # the t-test against the first model
    test = result.summary["significance"]["models"]["random"]["citation"]
    assert test["n_queries"] == n and test["p"] < 0.05 and test["mean_difference"] < 0


def test_directions_with_no_query_are_none_not_nan(corpus):
    result = evaluate_sdsm(corpus, ["bm25"], split="odt")
    directions = result.summary["models"]["bm25"]["by_direction"]
    assert directions["en->en"]["citation"] == {"n_queries": 0, "MAP": None, "MAP ci95": None,
                                                "nDCG@10": None, "nDCG@10 ci95": None}
    assert directions["en->en"]["average"]["MAP"] is None
    text = json.dumps(result.summary)
    assert "NaN" not in text and "Infinity" not in text


def test_missing_vectors_are_counted_and_a_model_without_any_is_reported(corpus, tmp_path):
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    pool = load_pool(copy, "idt")
    # a second model with real vectors for all but five pool papers
    encoder = load_model(MODEL)
    ids = pool.ids[5:]
    texts = [t for t, i in zip(pool.papers["text"].to_pylist(), pool.ids, strict=True)
             if i in set(ids)]
    con = copy.connect()
    hashes = [text_hash(paper_input(*con.execute("SELECT title, abstract FROM papers WHERE "
                                                  "paper_id = ?", [i]).fetchone()))
              for i in ids]
    vectors = encoder.encode(texts, "passage")
    directory = vectors_dir(copy, "partial")
    directory.mkdir(parents=True)
    with ParquetSink(directory / "part-00000.parquet", vector_schema(vectors.shape[1])) as sink:
        sink.write(pa.table({"paper_id": ids, "text_hash": hashes,
                             "vector": pa.FixedSizeListArray.from_arrays(
                                 vectors.reshape(-1), vectors.shape[1])},
                            schema=vector_schema(vectors.shape[1])))
    result = evaluate_sdsm(copy, [MODEL, "partial"], split="idt")
    summary = result.summary
    assert summary["left_out"]["missing_vectors"] == 5
    assert summary["pool"] == len(pool.ids) - 5
    assert summary["models"]["partial"]["missing_vectors"] == 5
    # the same vectors score the same
    assert summary["models"]["partial"]["average"] == summary["models"][MODEL]["average"]
    assert "partial" in markdown(summary)
    # a dense model without vectors: the command to run, before anything is scored
    (copy.root / "vectors" / "minilm-en").mkdir()
    with pytest.raises(SDSMError, match=r"openmsd embed .* --model minilm-en.*--embed"):
        evaluate_sdsm(copy, ["bm25", "minilm-en"], split="idt")


def test_bad_input_errors(corpus, tmp_path, taln_corpus):
    with pytest.raises(SDSMError, match="no split 'nope'"):
        evaluate_sdsm(corpus, ["bm25"], split="nope")
    with pytest.raises(SDSMError, match="no relations"):
        evaluate_sdsm(Corpus(taln_corpus), ["bm25"], split="idt")
    with pytest.raises(SDSMError, match="no model"):
        evaluate_sdsm(corpus, [], split="idt")
    with pytest.raises(SDSMError, match="baseline 'x'"):
        evaluate_sdsm(corpus, ["bm25"], split="idt", baseline="x")
    # a split whose pairs were all taken away: queries 0, figures None
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    pairs = copy.root / "relations" / "pairs.parquet"
    table = pq.read_table(pairs)
    pq.write_table(table.filter(pa.compute.not_equal(table["split"], "odt")), pairs)
    result = evaluate_sdsm(copy, ["bm25"], split="odt")
    assert result.summary["relevant_pairs"] == {task: 0 for task in TASKS}
    assert result.summary["models"]["bm25"]["average"] == {"n_queries": 0, "tasks": 0,
                                                           "MAP": None, "nDCG@10": None}


def test_cli_json_contract_and_report(corpus, tmp_path):
    report = tmp_path / "report"
    run = CliRunner().invoke(app, ["eval", "sdsm", str(corpus.root), "--model", MODEL,
                                   "--model", "random", "--split", "test", "--json",
                                   "--report", str(report)])
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert summary["split"] == "test"
    for task in [*TASKS, "average"]:
        assert set(summary["models"][MODEL][task]) >= {"MAP", "nDCG@10", "n_queries"}
    assert {p.name for p in report.iterdir()} == {"sdsm.json", "sdsm.md", "per_query.parquet",
                                                  "tasks.png", "languages.png"}
    assert (report / "tasks.png").read_bytes()[:4] == b"\x89PNG"
    rows = duckdb.sql(f"SELECT model, count(*) FROM read_parquet('{report}/per_query.parquet') "
                      "GROUP BY ALL ORDER BY 1").fetchall()
    assert rows[0][0] == MODEL and rows[0][1] == rows[1][1]
    table = CliRunner().invoke(app, ["eval", "sdsm", str(corpus.root), "--model", "bm25",
                                     "--split", "odt"])
    assert table.exit_code == 0 and "bib-coupling" in table.output
    bad = CliRunner().invoke(app, ["eval", "sdsm", str(corpus.root), "--split", "x"])
    assert bad.exit_code == 2 and "no split 'x'" in bad.output


def test_write_report_is_atomic_and_complete(corpus, tmp_path):
    result = evaluate_sdsm(corpus, ["bm25"], split="idt")
    paths = write_report(result, tmp_path / "r")
    assert all(p.exists() for p in paths)
    assert not list((tmp_path / "r").glob(".*tmp"))


def test_fusions_and_the_two_protocols(corpus):
    names = ["bm25", "bm25-en", MODEL, f"bm25@same+{MODEL}", "hybrid"]
    text = evaluate_sdsm(corpus, names, split="test").summary
    assert text["protocol"] == "text-only" and text["significance"]["baseline"] == "bm25"
    for name in names:
        assert text["models"][name]["average"]["MAP"] > 10
    # untuned hybrid: the z-score fusion of bm25 (within a language) and the corpus's dense
    # model, the same members as the RRF fusion named, fused on their scores
    from openmsd.rank.load import fusion_spec

    spec = fusion_spec("hybrid", corpus).as_json()
    assert spec["members"][:2] == ["bm25@same", MODEL] and spec["method"] == "zscore"
    assert not spec["tuned"] and spec["weights"] == [1.0] * len(spec["members"])
    rrf = text["models"][f"bm25@same+{MODEL}"]["average"]["MAP"]
    assert text["models"]["hybrid"]["average"]["MAP"] != rrf
    with pytest.raises(SDSMError, match="text-only protocol does not allow"):
        evaluate_sdsm(corpus, ["bm25", "co-citation"], split="test")
    with pytest.raises(UnknownScorerError, match=r"bm25, bm25-en.*adamic-adar.*hybrid"):
        evaluate_sdsm(corpus, ["bm26"], split="test")
    hidden = evaluate_sdsm(corpus, ["random", "bm25", "adamic-adar", "bm25+adamic-adar"],
                           split="test", protocol="hidden-links").summary
    assert hidden["hidden_links"] > 0
    assert hidden["relevant_pairs"]["citation"] > 0
    assert hidden["relevant_pairs"]["co-citation"] == hidden["relevant_pairs"]["bib-coupling"] == 0
    figures = {m: hidden["models"][m]["citation"]["MAP"] for m in hidden["models"]}
    # the visible graph finds hidden links far above chance, and helps the text
    assert figures["adamic-adar"] > 2 * figures["random"]
    assert figures["bm25+adamic-adar"] > figures["bm25"]


def test_train_ranker_learns_on_dev_and_the_learned_hybrid_is_used(corpus, tmp_path):
    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    runner = CliRunner()
    bad = runner.invoke(app, ["tune", str(copy.root)])  # another name; no vectors there yet
    assert "runs 'openmsd train ranker CORPUS'" in bad.stderr
    assert bad.exit_code == 2 and "queries have a link" in bad.output
    assert "--split train" in bad.output and "written" not in bad.output
    assert not (copy.root / "index" / "ranker.json").exists()
    embed_corpus(copy, load_model(MODEL), MODEL, paper_ids=load_pool(copy, "dev").ids)
    damaged = copy.root / "index" / "ranker.json"  # train ranker rebuilds it when damaged
    damaged.parent.mkdir(exist_ok=True)
    damaged.write_text('{"hybrid": {"members": ["bm25"], "weights": [NaN]}}')
    # recommend's first stage is left out here (tests/models/citrec/test_prefetch_head.py)
    run = runner.invoke(app, ["train", "ranker", str(copy.root), "--no-contexts", "--json"])
    assert run.exit_code == 0, run.output
    found = json.loads(run.stdout)
    assert "--no-contexts" in found["citrec_prefetch"]["skipped"]
    spec, report = found["hybrid"], found["report"]["hybrid"]
    # the train papers have no vectors here: learned on dev alone
    assert set(report["queries"]) == {"dev"} and report["queries"]["dev"] >= 20
    # what is kept was chosen out of fold, beside every member and the untuned fusion
    table = report["paper"]["out_of_fold_map"]
    assert {"untuned", "learned (linear)", "learned (lightgbm)", "bm25@same", MODEL} <= set(table)
    chosen = report["paper"]["chosen"]
    assert table[chosen] == max(table.values()) >= table[report["paper"]["best_single"]]
    # an adapter for the one dense model was tried first: trained (its head chosen out of
    # fold, the identity included) or, with too little to learn from, said and passed over
    (run,) = found["adapters"]
    if "skipped" in run:
        assert run["base"].startswith(MODEL) and run["skipped"]
    else:
        assert run["training"]["chosen"]["head"] and run["indexed"] > 0
        if run["training"]["chosen"]["head"] != "identity":
            assert run["name"] in " ".join(table)
    saved = json.loads((copy.root / "index" / "ranker.json").read_text())
    assert saved["hybrid"]["selection"]["paper"]["chosen"] == chosen
    if chosen.startswith("learned"):
        assert spec["method"] == "model" and spec["paper"]["calibration"]["y"]
    figures = evaluate_sdsm(copy, ["hybrid"], split="test").summary["models"]["hybrid"]
    assert figures["average"]["MAP"] > 10


def test_a_tuned_fallback_ranks_free_text_by_the_weights_fitted_without_metadata(corpus,
                                                                                  tmp_path):
    from openmsd.rank import Queries, combine, corpus_papers, load_scorer

    copy = Corpus(shutil.copytree(corpus.root, tmp_path / "c"))
    members = ["bm25", "bm25-en", "authors", "year"]
    spec = {"members": members, "weights": [0.1, 0.1, 0.6, 0.2], "method": "weighted",
            "tuned": True, "fallbacks": [{"silent": ["authors", "year"],
                                          "members": ["bm25-en", "bm25"],
                                          "weights": [0.3, 0.7], "method": "weighted"}]}
    (copy.root / "index").mkdir(exist_ok=True)
    (copy.root / "index" / "ranker.json").write_text(json.dumps({"hybrid": spec}))
    papers = corpus_papers(copy)
    cache: dict = {}
    hybrid = load_scorer("hybrid", papers, cache=cache)
    everything = np.arange(len(papers))
    bm25, english = cache["bm25"], cache["bm25-en"]
    text = Queries.of_texts(["analyse syntaxique du français"], ["fr"])
    alone = combine([english.score(text, everything), bm25.score(text, everything)],
                    [0.3, 0.7], "weighted")
    assert np.array_equal(hybrid.score(text, everything), alone)  # free text: the fallback
    paper = Queries.of_rows(papers, [0])
    parts = [cache[m].score(paper, everything) for m in members]
    parts = [np.where(everything == 0, -np.inf, p) for p in parts]
    assert np.allclose(hybrid.score(paper, everything), combine(parts, spec["weights"],
                                                                "weighted"))
    (copy.root / "index" / "ranker.json").write_text(json.dumps({"hybrid": {
        **spec, "fallbacks": [{**spec["fallbacks"][0], "members": ["e5"]}]}}))
    with pytest.raises(ValueError,
                       match=r"ranker\.json: hybrid: fallback 0: .*openmsd train ranker"):
        load_scorer("hybrid", corpus_papers(copy))  # a fallback of strangers: the file named


def test_the_citation_contexts_of_train_and_dev_are_those_their_papers_cite_from(corpus):
    from openmsd.experiment import citation_contexts
    from openmsd.rank import corpus_papers
    from openmsd.relations import read_split

    papers = corpus_papers(corpus)
    contexts = citation_contexts(corpus, papers, ("train", "dev"))
    texts, cited = contexts["text"].to_pylist(), contexts["cited_id"].to_pylist()
    everything = citation_contexts(corpus, papers)["text"].to_pylist()
    citing = {p for s in ("train", "dev") for p in read_split(corpus, s)["paper_id"].to_pylist()}
    expected = corpus.connect().execute(
        "SELECT count(*) FROM contexts WHERE cited_id IS NOT NULL AND text IS NOT NULL "
        "AND citing_id IN (SELECT unnest(?))", [sorted(citing)]).fetchone()[0]
    assert 20 <= len(texts) == expected < len(everything) and set(cited) <= set(papers.ids)
    assert set(contexts["citing_id"].to_pylist()) <= citing
