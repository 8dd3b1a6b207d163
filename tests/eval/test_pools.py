"""The merged-pool protocol (OpenMSD Appendix A) against SciDocs' clustered one, on TALN."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus.store import Corpus
from openmsd.eval.pools import evaluate_files
from openmsd.eval.sdsm import load_pool
from openmsd.ingest.queries import RetrievalEvalError
from openmsd.relations.build import derive
from openmsd.relations.engine import connect
from tests.conftest import SMALL


@pytest.fixture(scope="module")
def scidocs_style(taln_corpus: Path, tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """TALN's test-split tasks written as SciDocs does: per anchor, up to 5 positives and 25
    random negatives of the same task; papers as JSON lines."""
    root = tmp_path_factory.mktemp("pools")
    corpus = Corpus(shutil.copytree(taln_corpus, root / "c"))
    derive(corpus, connect("duckdb"), SMALL)
    pool = load_pool(corpus, "test")
    rng = random.Random(0)
    papers = root / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps({"id": i, "abstract": t}) + b"\n" for i, t in
                                zip(pool.ids, pool.papers["text"].to_pylist(), strict=True)))
    files = {}
    for task in ("citation", "co-citation", "bib-coupling"):
        positives: dict[str, list[str]] = {}
        for row in pool.judgements.to_pylist():
            if row["task"] == task:
                positives.setdefault(row["query"], []).append(row["doc"])
        lines = []
        for query, docs in positives.items():
            others = [p for p in pool.ids if p != query and p not in docs]
            lines += [f"{query} 0 {d} 1" for d in docs[:5]]
            lines += [f"{query} 0 {d} 0" for d in rng.sample(others, 25)]
        files[task] = root / f"{task}.qrels"
        files[task].write_text("\n".join(lines) + "\n")
    return papers, files


def test_merging_the_pools_removes_the_ceiling(scidocs_style):
    papers, files = scidocs_style
    result, report = evaluate_files(papers, files, ["bm25", "random"])
    assert not report.problems
    bm25, random_ = result["models"]["bm25"], result["models"]["random"]
    for task in files:
        # clustered: a few positives among 30 papers; merged: among the whole pool
        assert bm25["clustered"][task]["MAP"] > bm25["merged"][task]["MAP"]
        assert random_["clustered"][task]["MAP"] > 3 * random_["merged"][task]["MAP"]
        assert bm25["merged"][task]["MAP"] > 2 * random_["merged"][task]["MAP"]
        assert bm25["merged"][task]["n_queries"] == bm25["clustered"][task]["n_queries"] > 0
    assert result["pool"] <= 206
    assert random_["clustered"]["average"]["MAP"] > 10  # positives are 1/30 to 5/30 of a cluster


def test_bad_judgements_and_unknown_papers_are_reported(scidocs_style, tmp_path):
    papers, files = scidocs_style
    bad = tmp_path / "bad.qrels"
    good = files["citation"].read_text().splitlines()
    query, _, doc, label = good[2].split()
    bad.write_text("\n".join([good[0], "only two", f"{good[1].rsplit(' ', 1)[0]} yes",
                              "q-unknown 0 d-unknown 1", f"{query}\t{doc}\t{label}"]) + "\n")
    result, _ = evaluate_files(papers, {"citation": bad}, ["random"], ("merged",))
    reasons = result["problems_by_reason"]
    assert reasons["wrong number of fields"] == 1 and reasons["label not a number"] == 1
    assert reasons["paper without text"] == 1
    assert result["models"]["random"]["merged"]["citation"]["n_queries"] == 1
    with pytest.raises(RetrievalEvalError, match="no such file"):
        evaluate_files(tmp_path / "none.jsonl", files, ["random"])
    empty = tmp_path / "empty.qrels"
    empty.write_text("\n")
    with pytest.raises(RetrievalEvalError, match="no usable judgement"):
        evaluate_files(papers, {"x": empty}, ["random"])


def test_cli(scidocs_style):
    papers, files = scidocs_style
    args = ["eval", "pools", "--papers", str(papers), "--model", "random"]
    args += [a for name, path in files.items() for a in ("--task", f"{name}={path}")]
    run = CliRunner().invoke(app, [*args, "--json"])
    assert run.exit_code == 0, run.output
    result = json.loads(run.stdout)
    assert set(result["models"]["random"]) == {"clustered", "merged"}
    table = CliRunner().invoke(app, args)
    assert table.exit_code == 0 and "merged protocol" in table.output
    bad = CliRunner().invoke(app, [*args, "--task", "nofile"])
    assert bad.exit_code == 2 and "NAME=QRELS_FILE" in bad.output
