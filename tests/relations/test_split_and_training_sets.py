"""The OpenMSD split, positive sets and Specter triples on TALN, and their CLI."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict

import ibis
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.ingest import ingest
from openmsd.relations import (
    RelationsError,
    SplitConfig,
    connect,
    derive,
    parse,
    positive_pairs,
    read_split,
    relations_dir,
)
from openmsd.relations.positives import positive_set_names
from tests.relations.conftest import SMALL


@pytest.fixture(scope="module")
def derived(taln_corpus, tmp_path_factory):
    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path_factory.mktemp("d") / "c"))
    derive(corpus, connect("duckdb"), SMALL)
    return corpus


def rows(corpus: Corpus, name: str) -> list[dict]:
    return pq.read_table(relations_dir(corpus) / f"{name}.parquet").to_pylist()


def test_every_linked_paper_is_in_one_split_by_the_papers_rules(derived):
    splits = {r["paper_id"]: r for r in rows(derived, "splits")}
    links = [(r["citing_id"], r["cited_id"]) for r in rows(derived, "dc")]
    linked = {p for link in links for p in link}
    assert set(splits) == linked  # papers without a link are left out
    languages = defaultdict(lambda: defaultdict(int))
    for r in splits.values():
        languages[r["split"]][r["language"]] += 1
    assert set(languages) == {"train", "dev", "idt", "odt"}
    top = {"fr", "en"}  # the two most frequent linked languages of TALN
    assert all(r["split"] == "odt" for r in splits.values() if r["language"] not in top)
    assert set(languages["idt"]) <= set(languages["train"])
    odt_foreign = {p for p, r in splits.items() if r["split"] == "odt" and r["language"] != "en"}
    for paper, r in splits.items():
        if r["language"] == "en" and r["split"] == "odt":
            assert any((a == paper and b in odt_foreign) or (b == paper and a in odt_foreign)
                       for a, b in links)
    pairs = rows(derived, "pairs")
    assert all(splits[p["paper_a"]]["split"] == splits[p["paper_b"]]["split"] == p["split"]
               for p in pairs)
    assert not [p for p in pairs if p["split"] == "odt" and p["language_a"] == "en"
                and p["language_b"] == "en"]


def test_split_parameters_are_validated():
    with pytest.raises(ValueError, match="idt \\+ odt \\+ dev"):
        SplitConfig(idt=0.5, odt=0.5)
    with pytest.raises(ValueError, match="drop_en_en"):
        SplitConfig(drop_en_en=("test",))


def test_positive_sets_unions_are_balanced_and_intersections_exact():
    assert len(positive_set_names()) == 11
    assert parse("dc-or-cc-or-bc") == (["dc", "cc", "bc"], "union")
    with pytest.raises(ValueError, match="expected one of dc, cc, bc"):
        parse("dc+cc")
    pairs = ibis.memtable(pa.table({
        "relation": ["dc", "dc", "cc", "cc", "cc", "cc", "bc"],
        "paper_a": ["b", "x", "a", "c", "d", "e", "a"],
        "paper_b": ["a", "y", "b", "d", "e", "f", "b"]}))
    con = ibis.duckdb.connect()

    def get(name):
        return {(r["paper_a"], r["paper_b"]): r["relations"]
                for r in con.to_pyarrow(positive_pairs(pairs, name)).to_pylist()}

    assert get("dc-and-cc") == {("a", "b"): "dc-and-cc"}  # DC b->a is the canonical (a, b)
    assert get("dc-and-cc-and-bc") == {("a", "b"): "dc-and-cc-and-bc"}
    union = get("dc-or-cc")
    assert len([v for v in union.values() if "cc" in v]) == 2  # CC down-sampled to |DC| = 2
    assert get("dc-or-cc") == union  # deterministic


def test_specter_triples_follow_the_recipe(derived):
    splits = {r["paper_id"]: r["split"] for r in rows(derived, "splits")}
    train_dc = {(r["paper_a"], r["paper_b"]) for r in rows(derived, "pairs")
                if r["split"] == "train" and r["relation"] == "dc"}
    cites = defaultdict(set)
    for a, b in train_dc:
        cites[a].add(b)
    triples = rows(derived, "specter")
    assert triples
    per_query = defaultdict(list)
    for t in triples:
        per_query[t["query_id"]].append(t)
        assert t["positive_id"] in cites[t["query_id"]]
        assert t["negative_id"] not in cites[t["query_id"]] | {t["query_id"]}
        assert splits[t["negative_id"]] == "train"
        if t["kind"] == "hard":
            assert any(t["negative_id"] in cites[p] for p in cites[t["query_id"]])
    assert all(len(ts) <= 5 for ts in per_query.values())
    assert all(sum(t["kind"] == "hard" for t in ts) <= 2 for ts in per_query.values())
    assert {t["kind"] for t in triples} == {"hard", "easy"}


def test_relations_cli_json(derived, tmp_path):
    runner = CliRunner()
    corpus = shutil.copytree(derived.root, tmp_path / "c")
    result = runner.invoke(app, ["relations", str(corpus), "--top-languages", "2", "--idt",
                                 "0.15", "--odt", "0.15", "--dev", "0.1", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(runner.invoke(app, ["relations", "stats", str(corpus), "--json"]).stdout)
    assert {"dc", "cc", "bc", "splits"} <= set(stats)
    assert set(stats["splits"]) == {"train", "dev", "idt", "odt"}
    assert stats["splits"]["train"]["dc"]["pairs"] > 100
    table = runner.invoke(app, ["relations", "stats", str(corpus)])
    assert "Table 3" in table.output and "non-en->non-en" in table.output
    missing = runner.invoke(app, ["relations", "stats", str(tmp_path)])
    assert missing.exit_code == 2 and "not a corpus directory" in missing.output
    capped = runner.invoke(app, ["relations", str(corpus), "--top-languages", "2",
                                 "--max-group", "3", "--memory-limit", "200MB"])
    assert capped.exit_code == 0, capped.output
    manifest = json.loads((corpus / "relations" / "relations.json").read_text())
    cut = manifest["capped"]["cc"]
    assert cut["groups"] > 0 and cut["left_out"] > 0 and cut["largest"] > 3
    assert (f"co-citation pairs sampled (--max-group 3): {cut['groups']:,} citing papers "
            f"over the cap, {cut['left_out']:,} references left out") in capped.stderr
    assert not list((corpus / "relations").glob(".spill-*"))  # the spill folder goes


def test_scincl_triples_come_from_the_train_split(derived):
    splits = {r["paper_id"]: r["split"] for r in rows(derived, "splits")}
    triples = rows(derived, "scincl")
    assert len(triples) > 1000
    assert all(splits[t[c]] == "train" for t in triples
               for c in ("query_id", "positive_id", "negative_id"))
    assert {t["kind"] for t in triples} == {"hard", "easy"}
    manifest = json.loads((relations_dir(derived) / "relations.json").read_text())
    assert manifest["scincl"]["scale"] < 1  # TALN is far smaller than SciNCL's rank windows


def test_a_corpus_without_links_is_told_why_it_has_no_split(tmp_path):
    """Relations of papers that cite none of each other split no paper: asking for a split
    says why, not an empty list of the splits there are."""
    papers = tmp_path / "p.jsonl"
    papers.write_text("".join(json.dumps({"id": f"p{i}", "title": f"Parsing paper {i}",
                                          "abstract": "A study of parsing."}) + "\n"
                              for i in range(4)), encoding="utf-8")
    ingest([papers], tmp_path / "c")
    corpus = Corpus(tmp_path / "c")
    assert CliRunner().invoke(app, ["relations", str(corpus.root)]).exit_code == 0
    with pytest.raises(RelationsError, match="no split 'dev'; the relations split no paper: "
                                             "no two papers of the corpus are linked"):
        read_split(corpus, "dev")
    failed = CliRunner().invoke(app, ["eval", "sdsm", str(corpus.root), "--split", "dev"])
    assert failed.exit_code == 2 and "no two papers of the corpus are linked" in failed.output
