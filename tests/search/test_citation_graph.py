"""The in-memory citation graph gives the explanations the citations table gives, on TALN."""

from __future__ import annotations

import doctest
import random
import shutil
from collections import Counter

import orjson
import pyarrow as pa
import pytest

from openmsd.cli import SAMPLE
from openmsd.corpus import Corpus, CorpusError
from openmsd.ingest import ingest
from openmsd.search import (
    Result,
    find_paper,
    load_citation_graph,
    load_paper_records,
    paper_details,
    papers_by_id,
)
from openmsd.search import citation_graph as citation_graph_module
from openmsd.search.citation_graph import CitationGraph, Links
from openmsd.search.related import explain, related_results

# What explain asked DuckDB before the graph: one correlated join per result.
SQL = """
    WITH c AS (SELECT citing_id, cited_id FROM citations),
    ids AS (SELECT unnest(?::VARCHAR[]) AS id)
    SELECT ids.id,
      EXISTS (SELECT 1 FROM c WHERE citing_id = ? AND cited_id = ids.id) AS cites,
      EXISTS (SELECT 1 FROM c WHERE citing_id = ids.id AND cited_id = ?) AS cited_by,
      (SELECT count(*) FROM c a JOIN c b ON a.cited_id = b.cited_id
         WHERE a.citing_id = ? AND b.citing_id = ids.id) AS shared,
      (SELECT count(*) FROM c a JOIN c b ON a.citing_id = b.citing_id
         WHERE a.cited_id = ? AND b.cited_id = ids.id) AS co_cited
    FROM ids"""


def brute_force(rows: list[tuple[str, str]], query: str, ids: list[str]) -> list[Links]:
    """The links of ``ids`` to ``query`` from the citation rows, pair of rows by pair."""
    out = []
    for other in ids:
        refs = [(a, b) for a, b in rows if a in (query, other)]
        cites = [(a, b) for a, b in rows if b in (query, other)]
        out.append(Links(cites=(query, other) in rows, cited_by=(other, query) in rows,
                         shared_references=sum(1 for a in refs for b in refs if a[0] == query
                                               and b[0] == other and a[1] == b[1]),
                         co_cited=sum(1 for a in cites for b in cites if a[1] == query
                                      and b[1] == other and a[0] == b[0])))
    return out


@pytest.fixture(scope="module")
def taln(taln_corpus) -> Corpus:
    return Corpus(taln_corpus)


@pytest.fixture(scope="module")
def rows(taln) -> list[tuple[str, str]]:
    table = taln.read("citations", ["citing_id", "cited_id"])
    return list(zip(table["citing_id"].to_pylist(), table["cited_id"].to_pylist(), strict=True))


def candidates(rows: list[tuple[str, str]], query: str, papers: list[str],
               rng: random.Random) -> list[str]:
    """Papers linked to ``query`` in every way (and a few not linked at all)."""
    refs = {b for a, b in rows if a == query}
    citers = {a for a, b in rows if b == query}
    linked = (refs | citers | {a for a, b in rows if b in refs}
              | {b for a, b in rows if a in citers})
    return sorted(linked - {query}) + rng.sample(papers, 5)


def test_links_equal_brute_force_and_the_old_sql_on_taln(taln, rows):
    rng = random.Random(0)
    papers = taln.read("papers", ["paper_id"])["paper_id"].to_pylist()
    graph = load_citation_graph(taln)
    con = taln.connect()
    queries = sorted({p for row in rows for p in row})
    assert len(queries) > 300
    kinds = Counter()
    for query in queries:
        ids = candidates(rows, query, papers, rng)
        links = graph.links(query, ids)
        assert links == brute_force(rows, query, ids), query
        kinds.update(k for link in links for k in ("cites", "cited_by", "shared_references",
                                                   "co_cited") if getattr(link, k))
        if queries.index(query) % 10 == 0:  # the old SQL is slow: every tenth query paper
            old = {r[0]: Links(*r[1:]) for r in con.execute(SQL, [ids] + [query] * 4).fetchall()}
            assert links == [old[i] for i in ids], query
    assert min(kinds.values()) > 20, kinds  # every kind of link is exercised
    assert max(link.shared_references for q in queries[:50]
               for link in graph.links(q, papers[:200])) >= 1


def test_explanations_and_counts_on_taln(taln, rows):
    query = Counter(a for a, _ in rows).most_common(1)[0][0]  # the paper citing most
    ids = candidates(rows, query, taln.read("papers", ["paper_id"])["paper_id"].to_pylist(),
                     random.Random(1))
    results = related_results(taln, [(i, 0.5) for i in ids])
    explain(taln, query, results)
    for result, link in zip(results, brute_force(rows, query, ids), strict=True):
        assert (result.cites, result.cited_by, result.shared_references,
                result.co_cited) == (link.cites, link.cited_by, link.shared_references,
                                     link.co_cited)
        assert ("cited by the query paper" in result.why) == link.cites
        assert ("cites the query paper" in result.why) == link.cited_by
        n = link.shared_references
        assert (f"{n} shared reference{'s' if n > 1 else ''}" in result.why) == (n > 0)
    assert any(r.cites for r in results) and any(r.shared_references > 1 for r in results)
    details = paper_details(taln, query)
    assert details["references"] == sum(1 for a, _ in rows if a == query)
    assert details["cited_by"] == sum(1 for _, b in rows if b == query)


def test_result_metadata_equals_the_papers_table(taln):
    con = taln.connect()
    expected = con.execute("""
        SELECT paper_id, title, language, year, venue, doi,
               [t.title FOR t IN coalesce(translations, []) IF t.language = 'en'][1]
        FROM papers USING SAMPLE 50 (reservoir, 3)""").fetchall()
    results = related_results(taln, [(row[0], 0.25) for row in expected])
    for row, result in zip(expected, results, strict=True):
        paper_id, title, language, year, venue, doi, english = row
        assert result == Result(paper_id, 0.25, title, english if language != "en" else None,
                                language, year, venue, doi)
    assert any(r.english_title for r in results)  # TALN's French papers have English titles
    assert find_paper(taln, expected[0][0]) == expected[0][0]


def test_a_new_build_is_loaded_again_and_a_torn_one_refused(tmp_path):
    root = tmp_path / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    corpus = Corpus(root)
    before = load_citation_graph(corpus)
    assert load_citation_graph(corpus) is before and load_paper_records(corpus) is \
        load_paper_records(corpus)
    papers = len(load_paper_records(corpus).rows)
    ingest([SAMPLE / "unarxive"], root)  # a new build id in the manifest
    after = load_citation_graph(corpus)
    assert after is not before
    assert len(load_paper_records(corpus).rows) == papers + 7
    torn = Corpus(shutil.copytree(root, tmp_path / "torn"))
    manifest = orjson.loads((torn.root / "manifest.json").read_bytes())
    manifest["build"]["id"] = "0" * 16  # as if the manifest were newer than the tables
    (torn.root / "manifest.json").write_bytes(orjson.dumps(manifest))
    with pytest.raises(CorpusError, match=r"citations\.parquet: from build"):
        load_citation_graph(torn)


def test_module_examples():
    assert doctest.testmod(citation_graph_module).failed == 0


def test_empty_tables_and_rows_missing_an_id_link_nothing():
    empty = pa.table({"citing_id": pa.array([], pa.string()),
                      "cited_id": pa.array([], pa.string())})
    assert CitationGraph.from_table(empty).links("a", ["b"]) == [Links(False, False, 0, 0)]
    graph = CitationGraph.from_table(pa.table({"citing_id": ["a", "b", None],
                                               "cited_id": ["x", None, "x"]}))
    assert graph.citer_count("x") == 1 and graph.reference_count("b") == 0


def test_paper_records_equal_the_papers_table(taln):
    cursor = taln.connect().execute("""
        SELECT paper_id, doi, title, abstract, abstract_source, doc_type AS type, language,
               year, venue, authors, keywords,
               [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english
        FROM papers""")
    names = [d[0] for d in cursor.description]
    expected = []
    for row in cursor.fetchall():
        paper = dict(zip(names, row, strict=True))
        english = paper.pop("english") or {}
        english = english if paper["language"] != "en" else {}
        expected.append({**paper, "english_title": english.get("title") or None,
                         "english_abstract": english.get("abstract") or None})
    ids = [p["paper_id"] for p in expected]
    assert papers_by_id(taln, [*ids, "no-such-paper"]) == expected
    assert sum(1 for p in expected if p["english_abstract"]) > 500
    query = ids[7]
    assert {k: v for k, v in paper_details(taln, query).items()
            if k not in ("references", "cited_by")} == expected[7]


def test_summary_columns_of_records_read_as_the_whole_records(taln):
    """``get`` with columns (a result's summary, read from Python lists) gives what the whole
    records give for those columns, in the ids' order, unknown ids left out."""
    records = load_paper_records(taln)
    ids = random.Random(3).sample(sorted(records.rows), 40)
    asked = [*ids[:20], "no-such-paper", *ids[20:], ids[0]]
    columns = ["title", "english_title", "language", "year", "venue", "doi"]
    whole = records.get(asked)
    assert len(whole) == 41 and [r["paper_id"] for r in whole] == [*ids, ids[0]]
    summary = records.get(asked, columns)
    assert summary == [{c: r[c] for c in columns} for r in whole]
    assert [list(r) for r in summary] == [columns] * 41
    assert any(r["english_title"] for r in summary) and any(r["year"] for r in summary)
    assert records.get(["no-such-paper"], columns) == [] == records.get([], columns)
