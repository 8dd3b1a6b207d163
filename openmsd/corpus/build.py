"""Build the corpus tables from the staged inputs.

Staged papers with the same key are merged keeping, per field, the first non-null value in
ingest order (input order, then record order) and recording every source, as OpenMSD merges
Crossref and Unpaywall on DOIs. Each merged record gets its kind (a paper, or an erratum, an
editorial, paratext, ...: :mod:`openmsd.corpus.kinds`) from its type, title, section heading
and whether it has an abstract, a full text or a reference. Languages are identified on the
merged title + abstract (reused from the previous build for papers whose title, abstract and
declared language did not change) in two passes: paper by paper, then, once every venue's
sure papers are counted over the whole corpus (one aggregation), with the venue prior where
the identifiers were unsure.
References are resolved to corpus papers through the alias table (DOI, OpenAlex, arXiv, S2, ...
identifiers), then by title (:mod:`openmsd.corpus.resolve`); citations are the resolved links
between two different corpus papers; contexts inherit their reference's cited paper.

All set operations are SQL over the staged Parquet files, written once and run on an engine
(:mod:`openmsd.corpus.sql`: DuckDB in process, or Spark); Python sees only batches (language
identification) and the references left for title matching.
"""

from __future__ import annotations

import functools
import hashlib
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from openmsd.corpus import langid
from openmsd.corpus.kinds import record_kinds
from openmsd.corpus.layout import staged_files
from openmsd.corpus.resolve import RESULT, resolve_titles
from openmsd.corpus.schema import (
    CITATIONS,
    CONTEXTS,
    PAPERS,
    REFERENCES,
    SCHEMA_VERSION,
    TABLES,
)
from openmsd.corpus.sql import DuckDBSql, SqlEngine
from openmsd.corpus.store import Corpus
from openmsd.crashpoint import crash_point
from openmsd.memory import chosen_limit
from openmsd.phases import Phases
from openmsd.report import Report

BATCH = 50_000
ORD = "(part::BIGINT << 40) + seq"
# The order a paper's fields are taken in: an input's precedence (its ordinal, unless the
# ingest put it first: a snapshot's newer partitions before the snapshot), then reader order.
MERGE_ORD = "(precedence::BIGINT << 40) + seq"
# The alias under which a paper key itself is cited (see identifiers.key_aliases).
KEY_ALIAS = "CASE WHEN regexp_matches({0}, '^10\\.[0-9]{{4,9}}/') THEN 'doi:' || {0} ELSE {0} END"
LINKED = ("id", "title", "title-fuzzy")

_STRINGS = ["doi", "title", "abstract", "declared_language", "venue", "full_text", "doc_type"]
_LISTS = ["authors", "keywords", "categories", "translations"]


def _first(column: str, present: str) -> str:
    return f"arg_min({column}, {MERGE_ORD}) FILTER (WHERE {present}) AS {column}"


MERGE_SQL = f"""
SELECT m.*, c.citing IS NOT NULL AS has_references, NULL::VARCHAR AS kind,
       NULL::VARCHAR AS kind_reason
FROM (
  SELECT key AS paper_id,
    {", ".join(_first(c, f"{c} IS NOT NULL AND {c} <> ''") for c in _STRINGS)},
    arg_min(source, {MERGE_ORD}) FILTER (WHERE abstract IS NOT NULL AND abstract <> '')
      AS abstract_source,
    {_first("year", "year IS NOT NULL")},
    {", ".join(_first(c, f"array_length({c}) > 0") for c in _LISTS)},
    list_sort(list_distinct(list(source))) AS sources,
    list_sort(list_distinct(flatten(list(aliases)))) AS aliases
  FROM staged_papers GROUP BY key) m
LEFT JOIN (SELECT DISTINCT citing FROM staged_references) c ON c.citing = m.paper_id
ORDER BY m.paper_id
"""


def _union(parts: list[tuple[int, Path]], name: str,
           precedence: dict[int, int] | None = None) -> str:
    """One SELECT over the staged files ``name`` of ``parts`` (ordinal, staged dir), each
    row with its ``part`` and ``input`` (the ordinal), its ``precedence`` (``precedence`` of
    the ordinal, else the ordinal) and its ``seq`` within the part."""
    first_of = precedence or {}
    selects = [f"SELECT * REPLACE (seq + {first} AS seq), {ordinal} AS part, {ordinal} AS input, "
               f"{first_of.get(ordinal, ordinal)} AS precedence "
               f"FROM read_parquet('{_quote(path)}')"
               for ordinal, part in parts for path, first in staged_files(part, name)]
    # by name: a part staged before a column was added reads it as null
    return " UNION ALL BY NAME ".join(selects)


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


LANGID = pa.schema([*PAPERS, ("lang_sure", pa.string()),
                    ("lang_candidates", pa.list_(pa.string())),
                    ("lang_probabilities", pa.list_(pa.float64())),
                    ("has_references", pa.bool_())])
"""The merged papers after the first language pass: each new paper's language before the venue
prior, the language it counts for in its venue's prior, the candidates the prior may pick, and
whether it has a reference (its kind is decided with the prior: :func:`_apply_priors`)."""


def _detect_languages(batch: pa.RecordBatch, identifier: langid.LanguageIdentifier | None
                      ) -> pa.RecordBatch:
    """First pass: identify the language of the papers of a batch whose text is new, paper by
    paper (:func:`langid.detect`; no paper depends on another, so any partition will do)."""
    known = batch["known"].to_pylist()
    todo = [i for i, k in enumerate(known) if not k]
    titles, abstracts = batch["title"].to_pylist(), batch["abstract"].to_pylist()
    declared = batch["declared_language"].to_pylist()
    keywords, venues = batch["keywords"].to_pylist(), batch["venue"].to_pylist()
    found = langid.detect([langid.paper_text(titles[i], abstracts[i], keywords[i])
                           for i in todo], [declared[i] for i in todo], identifier,
                          [titles[i] for i in todo], [venues[i] for i in todo])
    languages = batch["known_language"].to_pylist()
    confidences = batch["known_confidence"].to_pylist()
    sure: list[str | None] = [None] * len(known)
    ranked: list[list[str] | None] = [None] * len(known)
    probabilities: list[list[float] | None] = [None] * len(known)
    for i, detection in zip(todo, found, strict=True):
        languages[i], confidences[i] = detection.language, detection.confidence
        sure[i] = detection.sure
        if detection.candidates:
            ranked[i] = [language for language, _ in detection.candidates]
            probabilities[i] = [p for _, p in detection.candidates]
    columns = {name: batch[name] for name in batch.schema.names}
    columns.update(language=pa.array(languages, pa.string()),
                   language_confidence=pa.array(confidences, pa.float32()),
                   lang_sure=pa.array(sure, pa.string()),
                   lang_candidates=pa.array(ranked, pa.list_(pa.string())),
                   lang_probabilities=pa.array(probabilities, pa.list_(pa.float64())))
    return pa.RecordBatch.from_pydict(columns).select(LANGID.names).cast(LANGID)


def _venue_priors(engine: SqlEngine, table: str) -> dict[str, Counter[str]]:
    """Per venue, its papers surely in each language, counted over the whole corpus (one
    aggregation: DuckDB in process, Spark on the cluster)."""
    priors: dict[str, Counter[str]] = {}
    for venue, language, papers in engine.rows(
            f"SELECT venue, lang_sure, count(*) AS papers FROM {table} "
            "WHERE lang_sure IS NOT NULL AND venue IS NOT NULL "
            "GROUP BY venue, lang_sure ORDER BY venue, lang_sure"):
        priors.setdefault(venue, Counter())[language] = papers
    return priors


def _apply_priors(batch: pa.RecordBatch, priors: dict[str, Counter[str]]) -> pa.RecordBatch:
    """Second pass: the venue prior applied to the papers the identifiers were unsure of."""
    ranked, probabilities = batch["lang_candidates"].to_pylist(), \
        batch["lang_probabilities"].to_pylist()
    languages = batch["language"].to_pylist()
    confidences = batch["language_confidence"].to_pylist()
    venues = batch["venue"].to_pylist()
    todo = [i for i, r in enumerate(ranked) if r]
    detections = [langid.Detection(languages[i], confidences[i], None,
                                   list(zip(ranked[i], probabilities[i], strict=True)))
                  for i in todo]
    for i, (language, confidence) in zip(todo, langid.with_priors(
            detections, [venues[i] for i in todo], priors), strict=True):
        languages[i], confidences[i] = language, confidence
    columns = {name: batch[name] for name in PAPERS.names}
    columns["language"] = pa.array(languages, pa.string())
    columns["language_confidence"] = pa.array(confidences, pa.float32())
    columns["kind"], columns["kind_reason"] = record_kinds(batch)
    return pa.RecordBatch.from_pydict(columns).select(PAPERS.names).cast(PAPERS)


def derive(engine: SqlEngine, out: str | Path, report: Report, names: dict[int, str],
           meta: dict[str, str], identifier: langid.LanguageIdentifier | None = None,
           on_papers: Callable[[int], None] | None = None, previous: Path | None = None,
           phases: Phases | None = None) -> dict[str, int]:
    """Merge, identify languages, resolve references and write the four corpus tables as
    ``OUT/{papers,references,citations,contexts}.parquet`` on ``engine``, from its tables
    ``staged_papers``, ``staged_references``, ``staged_contexts`` (with a ``part`` ordinal
    column, ``names`` mapping it to the part's file or folder; ``staged_papers`` also has
    ``input``, the ordinal of the input given: duplicates are reported within an input).
    Problems go to ``report``; returns counts. ``phases`` gets the seconds spent identifying
    (merge, both language passes, the papers table), resolving references (and contexts)
    and writing the other tables.
    """
    phase = phases or Phases()
    out = str(out).rstrip("/")
    with phase("identify"):
        _report_duplicates(engine, report, names)
        merge = _with_previous_languages(MERGE_SQL, previous)
        detected = f"{out}/_work/langid.parquet"
        if "://" not in out:
            Path(out, "_work").mkdir(exist_ok=True)
        engine.write(merge, detected, LANGID, {},
                     functools.partial(_detect_languages, identifier=identifier),
                     on_batch=on_papers)
        engine.load("langid_pass", detected)
        n_papers = engine.write("SELECT * FROM langid_pass ORDER BY paper_id",
                                f"{out}/papers.parquet", PAPERS, meta,
                                functools.partial(_apply_priors,
                                                  priors=_venue_priors(engine, "langid_pass")))
        engine.load("papers", f"{out}/papers.parquet")
    with phase("resolve references"):
        _build_alias_map(engine, report)
        counts = _resolve_references(engine, report, names)
        _build_contexts(engine, report, names)
        for done in ("refs", "id_hits"):  # the sorts below get their memory
            engine.drop(done)
    with phase("write"):
        n_refs = engine.write("SELECT * FROM refs_final ORDER BY row",
                              f"{out}/references.parquet", REFERENCES, meta)
        engine.drop("refs_final")  # the citations are read back from the table written
        engine.load("references_written", f"{out}/references.parquet")
        n_cit = engine.write(CITATIONS_SQL, f"{out}/citations.parquet", CITATIONS, meta)
        n_ctx = engine.write("SELECT * FROM contexts_final ORDER BY part, seq",
                             f"{out}/contexts.parquet", CONTEXTS, meta)
    counts.update(papers=n_papers, references=n_refs, citations=n_cit, contexts=n_ctx)
    return counts


def build_corpus(corpus: Corpus, parts: list[tuple[int, Path, str]], report: Report,
                 identifier: langid.LanguageIdentifier | None = None,
                 on_papers: Callable[[int], None] | None = None, memory_limit: str | None = None,
                 before_swap: Callable[[dict[str, Any]], None] | None = None,
                 phases: Phases | None = None, precedence: dict[int, int] | None = None,
                 deleted: list[str] | None = None) -> dict[str, Any]:
    """Rebuild every corpus table from ``parts`` (ordinal, staged dir, input name).

    A paper's fields are taken from its records in the order of their input's ``precedence``
    (ordinal -> rank; by default the ordinal), first non-null first. The papers with an alias
    in ``deleted`` (``openalex:W...``: works a snapshot's ledger removed) are left out, with
    their references and contexts.

    DuckDB spills to a temporary directory beside the corpus beyond ``memory_limit`` (by
    default :func:`openmsd.memory.memory_limit`).
    ``before_swap(summary)`` runs once the new tables are complete, before they replace the
    old ones (the ingest records the manifest to come there: see :meth:`Corpus.manifest`).

    Returns the build summary stored in the manifest; problems go to ``report``; the seconds
    of each phase to ``phases`` (:func:`derive`'s, the swap counted as writing).
    """
    phase = phases or Phases()
    meta = {"openmsd.build": build_id([p.name for _, p, _ in parts])}
    names = {ordinal: name for ordinal, _, name in parts}
    staged = [(ordinal, path) for ordinal, path, _ in parts]
    with tempfile.TemporaryDirectory(dir=corpus.root, prefix=".build-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "build.duckdb"))
        con.execute(f"SET temp_directory = '{_quote(Path(tmp) / 'spill')}'")
        con.execute(f"SET memory_limit = '{chosen_limit(memory_limit, 'memory_limit')}'")
        con.execute("SET preserve_insertion_order = true")
        for kind in ("papers", "references", "contexts"):
            union = _union(staged, f"staged_{kind}.parquet", precedence)
            con.execute(f"CREATE VIEW {'all' if deleted else 'staged'}_{kind} AS {union}")
        if deleted:
            _leave_out(con, deleted, report)

        previous = corpus.table_path("papers")
        counts = derive(DuckDBSql(con, BATCH), tmp, report, names, meta, identifier, on_papers,
                        previous if previous.exists() else None, phase)
        con.close()
        summary = {"id": meta["openmsd.build"], "counts": counts}
        if before_swap:
            before_swap(summary)
        crash_point("ingest.before_swap")
        with phase("write"):
            for name in TABLES:
                (Path(tmp) / f"{name}.parquet").replace(corpus.table_path(name))
    return summary


def _leave_out(con: duckdb.DuckDBPyConnection, deleted: list[str], report: Report) -> None:
    """The ``staged_*`` views: ``all_*`` without the papers having an alias in ``deleted``,
    nor the references and contexts of those papers."""
    con.register("deleted_aliases", pa.table({"alias": deleted}))
    con.execute("""CREATE TEMP TABLE deleted_keys AS
        SELECT DISTINCT u.key FROM (SELECT key, unnest(aliases) AS alias FROM all_papers) u
        JOIN deleted_aliases d ON d.alias = u.alias""")
    con.execute("CREATE VIEW staged_papers AS SELECT * FROM all_papers "
                "WHERE key NOT IN (SELECT key FROM deleted_keys)")
    for kind in ("references", "contexts"):
        con.execute(f"CREATE VIEW staged_{kind} AS SELECT * FROM all_{kind} "
                    "WHERE citing NOT IN (SELECT key FROM deleted_keys)")
    (left_out,) = con.execute("SELECT count(*) FROM deleted_keys").fetchone()
    report.count("papers.deleted_left_out", left_out)


def _located(input_path: str, loc: str) -> tuple[str, str]:
    """(file, where) of a staged record's ``loc`` (``name:where``) read from ``input_path``."""
    name, _, where = loc.partition(":")
    path = Path(input_path)
    file = path / name if path.is_dir() else path
    return str(file), f"line {where}" if where.isdigit() else where or "file"


def _report_duplicates(engine: SqlEngine, report: Report, names: dict[int, str]) -> None:
    rows = engine.rows("""
        WITH d AS (SELECT input, key FROM staged_papers GROUP BY input, key
                   HAVING count(*) > 1)
        SELECT s.input, s.part, s.key, s.loc FROM staged_papers s
        JOIN d ON s.input = d.input AND s.key = d.key ORDER BY s.part, s.seq""")
    groups: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for origin, part, key, loc in rows:  # in (part, first seq) order, as the records came
        groups.setdefault((origin, key), []).append((part, loc))
    for (_, key), found in groups.items():
        locs = [loc for _, loc in found]
        report.problem(*_located(names[found[1][0]], locs[1]),
                       f"duplicate id: {key!r} already at {locs[0]} ({len(locs)} records; "
                       "merged, first non-null value per field)", kind="warning")


def _build_alias_map(engine: SqlEngine, report: Report) -> None:
    engine.table("alias_map", f"""
        WITH pairs AS (
          SELECT DISTINCT unnest(list_append(aliases, {KEY_ALIAS.format('paper_id')})) AS alias,
                 paper_id FROM papers)
        SELECT alias, min(paper_id) AS paper_id, count(*) AS n,
               list_sort(list(paper_id)) AS ids
        FROM pairs GROUP BY alias""")
    for alias, ids in engine.rows("SELECT alias, ids FROM alias_map WHERE n > 1 ORDER BY alias"):
        report.problem("corpus", f"alias {alias}",
                       f"identifier shared by several papers: {', '.join(ids)} "
                       "(references to it are not resolved)", kind="warning")


def _resolve_references(engine: SqlEngine, report: Report, names: dict[int, str]
                        ) -> dict[str, int]:
    engine.table("refs", f"""
        SELECT {ORD.replace('part', 'r.part').replace('seq', 'r.seq')} AS row, r.*,
               m.paper_id AS citing_id
        FROM staged_references r
        LEFT JOIN alias_map m ON m.alias = {KEY_ALIAS.format('r.citing')} AND m.n = 1""")
    # A reference with one target (most: an OpenAlex work, a DOI) joins the alias map as it
    # is; only those with several are unnested and grouped back.
    engine.table("id_hits", """
        SELECT r.row, [m.paper_id] AS ids, m.n > 1 AS shared
        FROM refs r JOIN alias_map m ON m.alias = r.targets[1]
        WHERE array_length(r.targets) = 1
        UNION ALL
        SELECT u.row, list_sort(list_distinct(list(m.paper_id))) AS ids,
               bool_or(m.n > 1) AS shared
        FROM (SELECT row, unnest(targets) AS alias FROM refs
              WHERE array_length(targets) > 1) u
        JOIN alias_map m ON m.alias = u.alias GROUP BY u.row""")
    pending = engine.arrow("""
        SELECT r.row, r.citing_id, r.title, r.year FROM refs r
        WHERE r.citing_id IS NOT NULL AND r.title IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM id_hits h WHERE h.row = r.row) ORDER BY r.row""")
    if pending.num_rows:
        papers = engine.arrow("SELECT paper_id, year, title, translations FROM papers")
        titles = [[t["title"] for t in translations or []] + [title] for title, translations
                  in zip(papers["title"].to_pylist(), papers["translations"].to_pylist(),
                         strict=True)]
        candidates = pa.table({"paper_id": papers["paper_id"], "year": papers["year"],
                               "titles": pa.array(titles, pa.list_(pa.string()))})
        title_hits = resolve_titles(pending, candidates)
    else:
        title_hits = RESULT.empty_table()
    engine.register("title_hits", title_hits)
    columns = "row, part, loc, citing_id, position, ref_id, targets, title, authors, year, " \
              "venue, raw"
    engine.table("refs_final", f"""
        SELECT {columns}, CASE WHEN resolution = 'ambiguous' THEN NULL ELSE cited_id END
               AS cited_id, resolution, source FROM (
        SELECT r.row, r.part, r.loc, coalesce(r.citing_id, r.citing) AS citing_id, r.position,
               r.ref_id, r.targets, r.title, r.authors, r.year, r.venue, r.raw,
               CASE WHEN array_length(h.ids) = 1 THEN h.ids[1] ELSE t.cited_id END AS cited_id,
               CASE WHEN r.citing_id IS NULL THEN 'citing-unknown'
                    WHEN array_length(h.ids) = 1 AND h.ids[1] = r.citing_id THEN 'self'
                    WHEN array_length(h.ids) = 1 AND NOT h.shared THEN 'id'
                    WHEN h.ids IS NOT NULL THEN 'ambiguous'
                    WHEN t.resolution IS NOT NULL THEN t.resolution
                    ELSE 'unresolved' END AS resolution,
               r.source
        FROM refs r LEFT JOIN id_hits h ON h.row = r.row
        LEFT JOIN title_hits t ON t.row = r.row) resolved""")
    # one warning per (part, loc, citing, resolution): a record listing itself as cited and
    # as citing (S2ORC) is one warning
    for part, loc, citing, resolution in engine.rows("""
            SELECT part, loc, citing_id, resolution FROM refs_final
            WHERE resolution IN ('self', 'ambiguous')
            GROUP BY part, loc, citing_id, resolution ORDER BY min(row)"""):
        reason = (f"self-citation: {citing} cites itself (not a citation link)"
                  if resolution == "self" else
                  "ambiguous reference: it matches several corpus papers (not guessed)")
        report.problem(*_located(names[part], loc), reason, kind="warning")
    counts = dict(engine.rows(
        "SELECT resolution, count(*) FROM refs_final GROUP BY resolution"))
    return {f"references.{k}": v for k, v in sorted(counts.items())}


CITATIONS_SQL = f"""
SELECT citing_id, cited_id, list_sort(list_distinct(list(source))) AS sources,
       arg_min(resolution, CASE resolution {" ".join(f"WHEN '{r}' THEN {i}"
                                                     for i, r in enumerate(LINKED))} END)
         AS resolution
FROM references_written WHERE resolution IN {LINKED} AND citing_id <> cited_id
GROUP BY citing_id, cited_id ORDER BY citing_id, cited_id
"""


def _build_contexts(engine: SqlEngine, report: Report, names: dict[int, str]) -> None:
    engine.table("contexts_final", f"""
        WITH cited AS (SELECT DISTINCT citing, ref_id FROM staged_contexts),
        keyed AS (
          SELECT r.citing, r.ref_id, arg_min(f.cited_id, r.row) AS cited_id, count(*) AS n
          FROM refs r JOIN cited w ON w.citing = r.citing AND w.ref_id = r.ref_id
          JOIN refs_final f ON f.row = r.row GROUP BY r.citing, r.ref_id)
        SELECT coalesce(m.paper_id, c.citing) AS citing_id, k.cited_id, c.ref_id, c.text,
               c.position, c.source, c.part, c.seq, c.loc, k.n IS NULL AS orphan
        FROM staged_contexts c
        LEFT JOIN alias_map m ON m.alias = {KEY_ALIAS.format('c.citing')} AND m.n = 1
        LEFT JOIN keyed k ON k.citing = c.citing AND k.ref_id = c.ref_id""")
    for part, loc, ref_id in engine.rows("""
            SELECT part, loc, ref_id FROM contexts_final WHERE orphan ORDER BY part, seq"""):
        report.problem(*_located(names[part], loc),
                       f"context of an unknown reference: no reference {ref_id!r} in that paper "
                       "(kept, cited paper unknown)", kind="warning")
