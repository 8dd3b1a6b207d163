"""DC / CC / BC against a brute-force count, the cap, and bad citation rows."""

from __future__ import annotations

import itertools
import shutil
from collections import Counter, defaultdict

import ibis
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from openmsd.corpus import Corpus, CorpusError
from openmsd.relations import (
    RelationsConfig,
    bib_coupling,
    co_citations,
    connect,
    derive,
    relations_dir,
)
from openmsd.relations.pairs import capped_groups
from openmsd.relations.split import pairs_in_splits
from tests.relations.conftest import SMALL


def brute_force(links: list[tuple[str, str]]) -> tuple[set, Counter, Counter]:
    dc = {(a, b) for a, b in links if a != b}
    refs, citers = defaultdict(set), defaultdict(set)
    for a, b in dc:
        refs[a].add(b)
        citers[b].add(a)
    cc: Counter = Counter()
    for cited in refs.values():
        cc.update(itertools.combinations(sorted(cited), 2))
    bc: Counter = Counter()
    for citing in citers.values():
        bc.update(itertools.combinations(sorted(citing), 2))
    return dc, cc, bc


def read_pairs(path) -> Counter:
    table = pq.read_table(path)
    return Counter({(r["paper_a"], r["paper_b"]): r["count"] for r in table.to_pylist()})


def test_taln_pairs_agree_with_a_brute_force_count(taln_corpus, tmp_path):
    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path / "c"))
    links = [(r["citing_id"], r["cited_id"]) for r in corpus.read("citations").to_pylist()]
    dc, cc, bc = brute_force(links)
    for max_group in (None, 256):  # no TALN paper has 256 references: the cap changes nothing
        config = RelationsConfig(max_group=max_group, split=SMALL.split)
        result = derive(corpus, connect("duckdb"), config)
        out = relations_dir(corpus)
        got_dc = {(r["citing_id"], r["cited_id"])
                  for r in pq.read_table(out / "dc.parquet").to_pylist()}
        assert got_dc == dc
        assert read_pairs(out / "cc.parquet") == cc
        assert read_pairs(out / "bc.parquet") == bc
        assert result["counts"] == result["counts"] | {"dc": len(dc), "cc": len(cc),
                                                       "bc": len(bc)}
    assert len(cc) > 300 and len(bc) > 600


def test_max_group_samples_each_group_deterministically():
    con = ibis.duckdb.connect()
    one_group = pa.table({"citing_id": ["q"] * 10, "cited_id": [f"p{i}" for i in range(10)]})

    def cc(cap, seed):
        rows = con.to_pyarrow(co_citations(ibis.memtable(one_group), cap, seed)).to_pylist()
        return sorted(rows, key=lambda r: (r["paper_a"], r["paper_b"]))  # row order is free

    capped = cc(4, 0)
    members = {r["paper_a"] for r in capped} | {r["paper_b"] for r in capped}
    assert len(capped) == 6 and len(members) == 4  # C(4, 2) pairs of the 4 sampled members
    assert cc(4, 0) == capped  # same seed, same sample
    assert any(cc(4, seed) != capped for seed in range(1, 6))  # other seeds, other samples
    assert len(cc(None, 0)) == 45  # exact without a cap
    cut = con.to_pyarrow(capped_groups(ibis.memtable(one_group), "citing_id", 4)).to_pylist()
    assert cut == [{"groups": 1, "left_out": 6, "largest": 10}]  # the cap is counted
    assert con.to_pyarrow(capped_groups(ibis.memtable(one_group), "cited_id", 4)
                          ).to_pylist() == [{"groups": 0, "left_out": 0, "largest": 0}]
    two_groups = pa.table({"citing_id": ["q", "q", "r", "r"], "cited_id": ["a", "b", "a", "b"]})
    exact = con.to_pyarrow(co_citations(ibis.memtable(two_groups))).to_pylist()
    assert exact == [{"paper_a": "a", "paper_b": "b", "count": 2}]
    bc = con.to_pyarrow(bib_coupling(ibis.memtable(two_groups))).to_pylist()
    assert bc == [{"paper_a": "q", "paper_b": "r", "count": 2}]


def _corrupt_citations(corpus: Corpus, rows: list[tuple[str, str]]) -> None:
    """Rewrite citations.parquet with ``rows`` (keeping its schema and build id)."""
    path = corpus.table_path("citations")
    schema = pq.read_schema(path)
    table = pa.table({"citing_id": [a for a, _ in rows], "cited_id": [b for _, b in rows],
                      "sources": [["jsonl"]] * len(rows), "resolution": ["id"] * len(rows)},
                     schema=schema)
    pq.write_table(table, path)


def test_bad_citation_rows_are_counted_and_left_out(taln_corpus, tmp_path):
    corpus = Corpus(shutil.copytree(taln_corpus, tmp_path / "c"))
    good = [(r["citing_id"], r["cited_id"]) for r in corpus.read("citations").to_pylist()][:50]
    _corrupt_citations(corpus, [*good, good[0], good[1], (good[2][0], good[2][0]),
                                ("nowhere-1", good[3][1]), (good[4][0], "nowhere-2")])
    result = derive(corpus, connect("duckdb"), SMALL)
    assert result["citation_problems"] == {"rows": 55, "self_citations": 1, "duplicates": 2,
                                           "unknown_citing": 1, "unknown_cited": 1}
    assert result["counts"]["dc"] == 50


def test_a_corpus_without_papers_is_a_clear_error(tmp_path):
    from openmsd.ingest import ingest
    from openmsd.report import IngestError

    src = tmp_path / "bad.jsonl"
    src.write_text('{"title": "no id"}\n')
    with pytest.raises(IngestError, match="no papers read"):  # ingest refuses to write one
        ingest([src], tmp_path / "c", fmt="jsonl")
    with pytest.raises(CorpusError, match="not a corpus directory"):
        derive(Corpus(tmp_path / "c"), connect("duckdb"))


def test_pairs_in_splits_never_pairs_the_papers_of_a_split(tmp_path):
    """5,000 papers in one split and 50,000 pairs fit in 100 MB: the split of each pair's
    second paper is looked up by paper, never by a join of the split with itself (25 million
    rows, which ran out of memory)."""
    n, m = 5000, 50000
    ids = [f"p{i}" for i in range(n)]
    pq.write_table(pa.table({"paper_id": ids, "language": ["en"] * n, "split": ["train"] * n}),
                   tmp_path / "splits.parquet")
    a = [ids[(i * 7919) % n] for i in range(m)]
    b = [ids[(i * 104729 + 1) % n] for i in range(m)]
    pq.write_table(pa.table({"relation": ["cc"] * m, "paper_a": a, "paper_b": b,
                             "count": [1] * m}), tmp_path / "pairs.parquet")
    engine = connect("duckdb", memory_limit="100MB")
    engine.backend.raw_sql("SET temp_directory = ''")  # no spilling: a product fails
    found = engine.to_arrow(pairs_in_splits(engine.read(tmp_path / "pairs.parquet"),
                                            engine.read(tmp_path / "splits.parquet"),
                                            "paper_a", "paper_b"))
    engine.close()
    assert found.num_rows == m
    assert found.column_names == ["relation", "paper_a", "paper_b", "count", "language_a",
                                  "split", "language_b"]
    assert set(found["split"].to_pylist()) == {"train"}
