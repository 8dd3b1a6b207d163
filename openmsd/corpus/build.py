"""Build the corpus tables from the staged inputs.

Staged papers with the same key are merged keeping, per field, the first non-null value in
ingest order (input order, then record order) and recording every source, as OpenMSD merges
Crossref and Unpaywall on DOIs. Languages are identified on the merged title + abstract
(reused from the previous build for papers whose title, abstract and declared language did not
change). References are resolved to corpus papers through the alias table (DOI, OpenAlex,
arXiv, S2, ... identifiers), then by title (:mod:`openmsd.corpus.resolve`); citations are the
resolved links between two different corpus papers; contexts inherit their reference's cited
paper.

All set operations run in DuckDB over the staged Parquet files; Python sees only batches
(language identification) and the references left for title matching.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from openmsd.corpus import langid
from openmsd.corpus.resolve import resolve_titles
from openmsd.corpus.schema import CITATIONS, CONTEXTS, PAPERS, REFERENCES, SCHEMA_VERSION
from openmsd.corpus.store import Corpus, ParquetSink, arrow_reader, arrow_table
from openmsd.crashpoint import crash_point
from openmsd.ingest.report import Report

BATCH = 50_000
MEMORY_LIMIT = os.environ.get("OPENMSD_MEMORY_LIMIT", "1GB")
ORD = "(part::BIGINT << 40) + seq"
# The alias under which a paper key itself is cited (see identifiers.key_aliases).
KEY_ALIAS = "CASE WHEN regexp_matches({0}, '^10\\.[0-9]{{4,9}}/') THEN 'doi:' || {0} ELSE {0} END"
LINKED = ("id", "title", "title-fuzzy")

_STRINGS = ["doi", "title", "abstract", "declared_language", "venue", "full_text"]
_LISTS = ["authors", "keywords", "categories", "translations"]


def _first(column: str, present: str) -> str:
    return f"arg_min({column}, {ORD}) FILTER (WHERE {present}) AS {column}"


MERGE_SQL = f"""
SELECT key AS paper_id,
  {", ".join(_first(c, f"{c} IS NOT NULL AND {c} <> ''") for c in _STRINGS)},
  {_first("year", "year IS NOT NULL")},
  {", ".join(_first(c, f"len({c}) > 0") for c in _LISTS)},
  list_sort(list_distinct(list(source))) AS sources,
  list_sort(list_distinct(flatten(list(aliases)))) AS aliases
FROM staged_papers GROUP BY key ORDER BY key
"""


def _union(parts: list[tuple[int, Path]], name: str) -> str:
    selects = [f"SELECT *, {ordinal} AS part FROM read_parquet('{_quote(path / name)}')"
               for ordinal, path in parts]
    return " UNION ALL ".join(selects)


def _quote(path: Path) -> str:
    return str(path).replace("'", "''")


def build_id(digests: list[str]) -> str:
    """A deterministic id of a build: the schema version and the staged inputs, in order."""
    text = "\n".join([f"schema={SCHEMA_VERSION}", *digests])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _with_previous_languages(merge_sql: str, previous: Path | None) -> str:
    """The merge query plus the language of each paper whose text the previous build saw."""
    if previous is None:
        return (f"SELECT *, NULL AS known_language, NULL::FLOAT AS known_confidence, "
                f"false AS known FROM ({merge_sql})")
    return f"""
        SELECT m.*, o.language AS known_language, o.language_confidence AS known_confidence,
               o.paper_id IS NOT NULL AS known
        FROM ({merge_sql}) m LEFT JOIN read_parquet('{_quote(previous)}') o
          ON o.paper_id = m.paper_id AND o.title IS NOT DISTINCT FROM m.title
         AND o.abstract IS NOT DISTINCT FROM m.abstract
         AND o.declared_language IS NOT DISTINCT FROM m.declared_language
         AND o.keywords IS NOT DISTINCT FROM m.keywords
        ORDER BY m.paper_id"""


def _add_languages(batch: pa.RecordBatch, identifier: langid.LanguageIdentifier | None
                   ) -> pa.RecordBatch:
    """Identify the language of the papers of a batch whose text is new (a paper's venue is
    its group for :func:`langid.identify`'s group prior, counted within the batch)."""
    known = batch["known"].to_pylist()
    todo = [i for i, k in enumerate(known) if not k]
    titles, abstracts = batch["title"].to_pylist(), batch["abstract"].to_pylist()
    declared = batch["declared_language"].to_pylist()
    keywords, venues = batch["keywords"].to_pylist(), batch["venue"].to_pylist()
    found = langid.identify([langid.paper_text(titles[i], abstracts[i], keywords[i])
                             for i in todo], [declared[i] for i in todo], identifier,
                            [titles[i] for i in todo], [venues[i] for i in todo])
    languages = batch["known_language"].to_pylist()
    confidences = batch["known_confidence"].to_pylist()
    for i, (language, confidence) in zip(todo, found, strict=True):
        languages[i], confidences[i] = language, confidence
    columns = {name: batch[name] for name in batch.schema.names}
    columns["language"] = pa.array(languages, pa.string())
    columns["language_confidence"] = pa.array(confidences, pa.float32())
    return pa.RecordBatch.from_pydict(columns)


def _write(con: duckdb.DuckDBPyConnection, sql: str, target: Path, schema: pa.Schema,
           meta: dict[str, str], transform: Callable[[pa.RecordBatch], pa.RecordBatch] | None
           = None, on_batch: Callable[[int], None] | None = None) -> int:
    with ParquetSink(target, schema, meta) as sink:
        for batch in arrow_reader(con, sql, BATCH):
            sink.write(transform(batch) if transform else batch)
            if on_batch:
                on_batch(batch.num_rows)
        return sink.rows


def build(corpus: Corpus, parts: list[tuple[int, Path, str]], report: Report,
          identifier: langid.LanguageIdentifier | None = None,
          on_papers: Callable[[int], None] | None = None, memory_limit: str = MEMORY_LIMIT,
          before_swap: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Rebuild every corpus table from ``parts`` (ordinal, staged dir, input name).

    DuckDB spills to a temporary directory beside the corpus beyond ``memory_limit``.
    ``before_swap(summary)`` runs once the new tables are complete, before they replace the
    old ones (the ingest records the manifest to come there: see :meth:`Corpus.manifest`).

    Returns the build summary stored in the manifest; problems go to ``report``.
    """
    meta = {"openmsd.build": build_id([p.name for _, p, _ in parts])}
    names = {ordinal: name for ordinal, _, name in parts}
    staged = [(ordinal, path) for ordinal, path, _ in parts]
    with tempfile.TemporaryDirectory(dir=corpus.root, prefix=".build-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "build.duckdb"))
        con.execute(f"SET temp_directory = '{_quote(Path(tmp) / 'spill')}'")
        con.execute(f"SET memory_limit = '{memory_limit}'")
        con.execute("SET preserve_insertion_order = true")
        for kind in ("papers", "references", "contexts"):
            con.execute(f"CREATE VIEW staged_{kind} AS {_union(staged, f'staged_{kind}.parquet')}")
        _report_duplicates(con, report, names)

        papers_path = Path(tmp) / "papers.parquet"
        previous = corpus.table_path("papers")
        merge = _with_previous_languages(MERGE_SQL, previous if previous.exists() else None)
        n_papers = _write(con, merge, papers_path, PAPERS, meta,
                          lambda b: _add_languages(b, identifier), on_papers)
        con.execute(f"CREATE VIEW papers AS SELECT * FROM read_parquet('{_quote(papers_path)}')")
        _build_alias_map(con, report)
        counts = _resolve_references(con, report, names)
        n_refs = _write(con, "SELECT * FROM refs_final ORDER BY row",
                        Path(tmp) / "references.parquet", REFERENCES, meta)
        n_cit = _write(con, CITATIONS_SQL, Path(tmp) / "citations.parquet", CITATIONS, meta)
        _build_contexts(con, report, names)
        n_ctx = _write(con, "SELECT * FROM contexts_final ORDER BY part, seq",
                       Path(tmp) / "contexts.parquet", CONTEXTS, meta)
        con.close()
        counts.update(papers=n_papers, references=n_refs, citations=n_cit, contexts=n_ctx)
        summary = {"id": meta["openmsd.build"], "counts": counts}
        if before_swap:
            before_swap(summary)
        crash_point("ingest.before_swap")
        for name in ("papers", "references", "citations", "contexts"):
            (Path(tmp) / f"{name}.parquet").replace(corpus.table_path(name))
    return summary


def _located(input_path: str, loc: str) -> tuple[str, str]:
    """(file, where) of a staged record's ``loc`` (``name:where``) read from ``input_path``."""
    name, _, where = loc.partition(":")
    path = Path(input_path)
    file = path / name if path.is_dir() else path
    return str(file), f"line {where}" if where.isdigit() else where or "file"


def _report_duplicates(con: duckdb.DuckDBPyConnection, report: Report, names: dict[int, str]
                       ) -> None:
    rows = con.execute("""
        SELECT part, key, list(loc ORDER BY seq) AS locs FROM staged_papers
        GROUP BY part, key HAVING count(*) > 1 ORDER BY part, min(seq)""").fetchall()
    for part, key, locs in rows:
        report.problem(*_located(names[part], locs[1]),
                       f"duplicate id: {key!r} already at {locs[0]} ({len(locs)} records; "
                       "merged, first non-null value per field)", kind="warning")


def _build_alias_map(con: duckdb.DuckDBPyConnection, report: Report) -> None:
    con.execute(f"""
        CREATE TABLE alias_map AS
        WITH pairs AS (
          SELECT DISTINCT unnest(list_append(aliases, {KEY_ALIAS.format('paper_id')})) AS alias,
                 paper_id FROM papers)
        SELECT alias, min(paper_id) AS paper_id, count(*) AS n,
               list(paper_id ORDER BY paper_id) AS ids
        FROM pairs GROUP BY alias""")
    for alias, ids in con.execute(
            "SELECT alias, ids FROM alias_map WHERE n > 1 ORDER BY alias").fetchall():
        report.problem("corpus", f"alias {alias}",
                       f"identifier shared by several papers: {', '.join(ids)} "
                       "(references to it are not resolved)", kind="warning")


def _resolve_references(con: duckdb.DuckDBPyConnection, report: Report, names: dict[int, str]
                        ) -> dict[str, int]:
    con.execute(f"""
        CREATE TABLE refs AS
        SELECT (row_number() OVER (ORDER BY part, seq)) - 1 AS row, r.*, m.paper_id AS citing_id
        FROM staged_references r
        LEFT JOIN alias_map m ON m.alias = {KEY_ALIAS.format('r.citing')} AND m.n = 1""")
    con.execute("""
        CREATE TABLE id_hits AS
        SELECT row, list_sort(list_distinct(list(m.paper_id))) AS ids, bool_or(m.n > 1) AS shared
        FROM (SELECT row, unnest(targets) AS alias FROM refs) u
        JOIN alias_map m USING (alias) GROUP BY row""")
    pending = arrow_table(con, """
        SELECT r.row, r.citing_id, r.title, r.year FROM refs r ANTI JOIN id_hits USING (row)
        WHERE r.citing_id IS NOT NULL AND r.title IS NOT NULL ORDER BY r.row""")
    if pending.num_rows:
        candidates = arrow_table(con, """
            SELECT paper_id, year,
                   list_append([t.title FOR t IN coalesce(translations, [])], title) AS titles
            FROM papers""")
        title_hits = resolve_titles(pending, candidates)
    else:
        title_hits = pa.table({"row": pa.array([], pa.int64()),
                               "cited_id": pa.array([], pa.string()),
                               "resolution": pa.array([], pa.string())})
    con.register("title_hits", title_hits)
    con.execute("""
        CREATE TABLE refs_final AS
        SELECT r.row, r.part, r.loc, coalesce(r.citing_id, r.citing) AS citing_id, r.position,
               r.ref_id, r.targets, r.title, r.authors, r.year, r.venue, r.raw,
               CASE WHEN len(h.ids) = 1 THEN h.ids[1] ELSE t.cited_id END AS cited_id,
               CASE WHEN r.citing_id IS NULL THEN 'citing-unknown'
                    WHEN len(h.ids) = 1 AND h.ids[1] = r.citing_id THEN 'self'
                    WHEN len(h.ids) = 1 AND NOT h.shared THEN 'id'
                    WHEN h.ids IS NOT NULL THEN 'ambiguous'
                    WHEN t.resolution IS NOT NULL THEN t.resolution
                    ELSE 'unresolved' END AS resolution,
               r.source
        FROM refs r LEFT JOIN id_hits h USING (row) LEFT JOIN title_hits t USING (row)""")
    con.execute("UPDATE refs_final SET cited_id = NULL WHERE resolution = 'ambiguous'")
    # DISTINCT: a record listing itself as cited and as citing (S2ORC) is one warning
    for part, loc, citing, resolution in con.execute("""
            SELECT part, loc, citing_id, resolution FROM refs_final
            WHERE resolution IN ('self', 'ambiguous')
            GROUP BY ALL ORDER BY min(row)""").fetchall():
        reason = (f"self-citation: {citing} cites itself (not a citation link)"
                  if resolution == "self" else
                  "ambiguous reference: it matches several corpus papers (not guessed)")
        report.problem(*_located(names[part], loc), reason, kind="warning")
    counts = dict(con.execute(
        "SELECT resolution, count(*) FROM refs_final GROUP BY ALL").fetchall())
    return {f"references.{k}": v for k, v in sorted(counts.items())}


CITATIONS_SQL = f"""
SELECT citing_id, cited_id, list_sort(list_distinct(list(source))) AS sources,
       arg_min(resolution, list_position({list(LINKED)}, resolution)) AS resolution
FROM refs_final WHERE resolution IN {LINKED} AND citing_id <> cited_id
GROUP BY citing_id, cited_id ORDER BY citing_id, cited_id
"""


def _build_contexts(con: duckdb.DuckDBPyConnection, report: Report, names: dict[int, str]
                    ) -> None:
    con.execute(f"""
        CREATE TABLE contexts_final AS
        WITH keyed AS (
          SELECT r.citing, r.ref_id, arg_min(f.cited_id, r.row) AS cited_id, count(*) AS n
          FROM refs r JOIN refs_final f USING (row) GROUP BY r.citing, r.ref_id)
        SELECT coalesce(m.paper_id, c.citing) AS citing_id, k.cited_id, c.ref_id, c.text,
               c.position, c.source, c.part, c.seq, c.loc, k.n IS NULL AS orphan
        FROM staged_contexts c
        LEFT JOIN alias_map m ON m.alias = {KEY_ALIAS.format('c.citing')} AND m.n = 1
        LEFT JOIN keyed k ON k.citing = c.citing AND k.ref_id = c.ref_id""")
    for part, loc, ref_id in con.execute("""
            SELECT part, loc, ref_id FROM contexts_final WHERE orphan ORDER BY part, seq
            """).fetchall():
        report.problem(*_located(names[part], loc),
                       f"context of an unknown reference: no reference {ref_id!r} in that paper "
                       "(kept, cited paper unknown)", kind="warning")
