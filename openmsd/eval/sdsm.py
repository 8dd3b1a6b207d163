"""OpenMSD's SDSM tasks: citation, co-citation and bibliographic-coupling prediction.

For a test split (IDT, ODT, both as ``test``, or any split of ``relations/splits.parquet``),
every paper of the split is a candidate (the *pool*), and every paper with at least one
partner of a relation in that split's pairs is a query of that relation's task. A model ranks
the whole pool for each query (never the query itself); MAP and nDCG@10 are computed from the
exact ranks of the relevant papers (:mod:`openmsd.eval.ranks`, :mod:`openmsd.eval.metrics`).

Relevant papers: ``citation`` — the query's DC partners (``dc="both"``: the papers it cites
and the papers citing it; ``"cited"`` or ``"citing"`` for one side); ``co-citation`` and
``bib-coupling`` — its CC / BC partners. Besides the three tasks and their average, each model
is broken down by query language, by language direction (En→En, En→nonEn, nonEn→En,
nonEn→nonEn: the relevant papers of the other directions are taken out of the candidates),
and by resource level of the query language (its share of the train split: ``high`` ≥ 10 %,
``medium`` ≥ 1 %, ``low`` below, ``unseen`` when the train split has none). Every figure comes
with the number of queries behind it; a figure with no query is ``None``, never NaN.

Models are scored on a common pool: papers without text, or without a stored vector for any
of the dense models asked for, are left out of the pool for all models and counted, so that
per-query AP can be compared between models by a paired t-test.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from openmsd.corpus import Corpus
from openmsd.eval.metrics import confidence_half_width, per_query
from openmsd.eval.metrics import paired_t_test as t_test
from openmsd.eval.ranks import Scorer as RowScorer
from openmsd.eval.ranks import ScorerRows, relevant_ranks
from openmsd.io import arrow_table
from openmsd.models import embed_corpus, find_adapter, load_vectors, paper_input
from openmsd.rank import (
    PAPERS_SQL,
    Papers,
    Scorer,
    english_texts,
    is_dense,
    leaves,
    load_encoder,
    load_scorer,
)
from openmsd.relations import RelationsError, read_split, relations_dir

#: The tasks, in the papers' column order, and the relation each is built from.
TASKS: dict[str, str] = {"citation": "dc", "co-citation": "cc", "bib-coupling": "bc"}
METRICS = ("MAP", "nDCG@10")
DIRECTIONS = ("en->en", "en->non-en", "non-en->en", "non-en->non-en")
RESOURCE_LEVELS = ("high", "medium", "low", "unseen")
DcSide = Literal["both", "cited", "citing"]


class SDSMError(ValueError):
    """Nothing to evaluate: no relations, an unknown split, an empty pool."""


@dataclass
class Pool:
    """The candidate papers of a split and the relevant pairs of its tasks.

    ``papers``: ``paper_id``, ``language``, ``text`` (pool order: by id); ``judgements``:
    ``task``, ``query``, ``doc`` (paper ids), ``direction``; ``left_out``: papers of the split
    not in the pool, by reason."""

    split: str
    papers: pa.Table
    judgements: pa.Table
    resource_levels: dict[str, str]
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return self.papers["paper_id"].to_pylist()


def load_pool(corpus: Corpus, split: str, dc: DcSide = "both",
              summaries: Mapping[str, str] | None = None) -> Pool:
    """The pool and judgements of ``split`` from ``corpus``'s relations (``openmsd relations``),
    the papers' texts enriched with ``summaries`` (English summaries by paper id) when given.
    :class:`SDSMError` when the relations are missing or the split has no papers."""
    directory = relations_dir(corpus)
    if not (directory / "pairs.parquet").exists():
        raise SDSMError(f"{corpus.root}: no relations; run 'openmsd relations {corpus.root}'")
    if dc not in ("both", "cited", "citing"):
        raise SDSMError(f"dc must be both, cited or citing, not {dc!r}")
    try:
        members_of_split = read_split(corpus, split)
    except RelationsError as error:
        raise SDSMError(str(error)) from None
    try:
        train = read_split(corpus, "train")["language"].to_pylist()
    except RelationsError:  # relations without a train split: every language is unseen
        train = []
    train_languages = Counter(language or "und" for language in train)
    con = corpus.connect()
    path = str(directory / "pairs.parquet").replace("'", "''")
    con.execute(f"CREATE VIEW pairs AS SELECT * FROM read_parquet('{path}')")
    con.register("split_members", members_of_split)
    con.execute("CREATE TEMP TABLE chosen AS SELECT unnest(?) AS split",
                [pc.unique(members_of_split["split"]).to_pylist()])
    members = arrow_table(con, f"""
        SELECT s.paper_id, coalesce(s.language, 'und') AS language, p.title, p.abstract,
               p.en_title, p.en_abstract
        FROM split_members s LEFT JOIN ({PAPERS_SQL}) p USING (paper_id)
        ORDER BY s.paper_id""")
    summaries = summaries or {}
    texts = [paper_input(t, a, summaries.get(p))
             for p, t, a in zip(members["paper_id"].to_pylist(), members["title"].to_pylist(),
                                members["abstract"].to_pylist(), strict=True)]
    has_text = np.array([bool(t) for t in texts])
    papers = pa.table({"paper_id": members["paper_id"], "language": members["language"],
                       "text": texts, "english": english_texts(members, summaries)}
                      ).filter(pa.array(has_text))
    if papers.num_rows == 0:
        raise SDSMError(f"{corpus.root}: split {split!r} has no paper with a title or abstract")
    sides = {"both": "TRUE", "cited": "side = 'cited'", "citing": "side = 'citing'"}[dc]
    con.register("pool", papers.select(["paper_id", "language"]))
    judgements = arrow_table(con, f"""
        WITH chosen_pairs AS (
            SELECT relation, paper_a, paper_b FROM pairs JOIN chosen USING (split)),
        directed AS (
            SELECT relation, paper_a AS query, paper_b AS doc, 'cited' AS side
            FROM chosen_pairs
            UNION ALL
            SELECT relation, paper_b, paper_a, 'citing' FROM chosen_pairs),
        tasks AS (SELECT * FROM (VALUES {", ".join(f"('{t}', '{r}')" for t, r in TASKS.items())})
                  AS t(task, relation))
        SELECT DISTINCT task, query, doc,
               CASE WHEN q.language = 'en' THEN 'en' ELSE 'non-en' END || '->' ||
               CASE WHEN d.language = 'en' THEN 'en' ELSE 'non-en' END AS direction
        FROM directed JOIN tasks USING (relation)
        JOIN pool q ON q.paper_id = query JOIN pool d ON d.paper_id = doc
        WHERE relation <> 'dc' OR {sides}
        ORDER BY ALL""")
    return Pool(split, papers, judgements, resource_levels(train_languages),
                {"no_text": int((~has_text).sum())})


def resource_levels(train_counts: Mapping[str, int], high: float = 0.10,
                    medium: float = 0.01) -> dict[str, str]:
    """Each language's resource level from its share of the train split's papers."""
    total = sum(train_counts.values())
    return {language: "high" if n >= high * total else "medium" if n >= medium * total
            else "low" for language, n in train_counts.items()}


def restrict(pool: Pool, keep: np.ndarray, reason: str) -> Pool:
    """``pool`` without the papers where ``keep`` is false (counted under ``reason``) and
    without the judgements that name them."""
    if keep.all():
        return pool
    papers = pool.papers.filter(pa.array(keep))
    kept = pa.array(papers["paper_id"].to_pylist(), pa.string())
    judgements = pool.judgements.filter(pc.and_(pc.is_in(pool.judgements["query"], kept),
                                                pc.is_in(pool.judgements["doc"], kept)))
    left_out = {**pool.left_out, reason: pool.left_out.get(reason, 0) + int((~keep).sum())}
    return Pool(pool.split, papers, judgements, pool.resource_levels, left_out)


def model_ranks(pool: Pool, scorer: RowScorer, budget: int | None = None,
                progress: Callable[[int], None] | None = None) -> pa.Table:
    """``pool.judgements`` with the ``rank`` of each relevant paper in its query's ranking of
    the whole pool by ``scorer`` (whose rows and columns are the pool in order)."""
    position = {paper: i for i, paper in enumerate(pool.ids)}
    judged = pool.judgements
    query_index = np.array([position[q] for q in judged["query"].to_pylist()], np.int64)
    doc_index = np.array([position[d] for d in judged["doc"].to_pylist()], np.int64)
    queries, pair_query = np.unique(query_index, return_inverse=True)
    kwargs = {"budget": budget} if budget else {}
    ranks = relevant_ranks(scorer, queries, pair_query, doc_index,
                           tie_order=np.arange(len(position)), progress=progress, **kwargs)
    return judged.append_column("rank", pa.array(ranks))


def _summary(values: pa.Table) -> dict[str, Any]:
    """Mean MAP and nDCG@10 in %, their 95 % confidence half-widths, and the query count."""
    n = values.num_rows
    out: dict[str, Any] = {"n_queries": n}
    for metric, column in (("MAP", "AP"), ("nDCG@10", "nDCG@10")):
        data = np.asarray(values[column].to_numpy(zero_copy_only=False), np.float64) * 100
        out[metric] = round(float(data.mean()), 4) if n else None
        out[f"{metric} ci95"] = round(confidence_half_width(data), 4) if n > 1 else None
    return out


def _average(tasks: Mapping[str, dict[str, Any]], queries: int) -> dict[str, Any]:
    """The mean of the tasks that have queries (the papers' Average column)."""
    scored = [v for v in tasks.values() if v["n_queries"]]
    out: dict[str, Any] = {"n_queries": queries, "tasks": len(scored)}
    for metric in METRICS:
        out[metric] = round(sum(v[metric] for v in scored) / len(scored), 4) if scored else None
    return out


def _grouped(rows: pa.Table, column: str, groups: Sequence[str] | None = None
             ) -> dict[str, dict[str, Any]]:
    """Per value of ``column``: per task and on average (see :func:`_tasks`)."""
    values = groups or sorted(set(rows[column].to_pylist()))
    return {value: _tasks(rows.filter(pc.equal(rows[column], value))) for value in values}


def _tasks(rows: pa.Table) -> dict[str, dict[str, Any]]:
    out = {task: _summary(rows.filter(pc.equal(rows["task"], task))) for task in TASKS}
    out["average"] = _average(out, len(set(rows["query"].to_pylist())))
    return out


def score_model(pool: Pool, ranked: pa.Table) -> tuple[dict[str, Any], pa.Table]:
    """The figures of one model from its ranked judgements: per task and average, by query
    language, by direction, by resource level; and its per-query table (``task``, ``query``,
    ``language``, ``n_relevant``, ``AP``, ``nDCG@10``)."""
    languages = pa.table({"query": pool.papers["paper_id"], "language": pool.papers["language"]})
    queries = _with_language(per_query(ranked, ["task", "query"]), languages)
    result: dict[str, Any] = _tasks(queries)
    result["by_language"] = _grouped(queries, "language")
    levels = [pool.resource_levels.get(lang, "unseen")
              for lang in queries["language"].to_pylist()]
    result["by_resource"] = _grouped(
        queries.append_column("resource", pa.array(levels, pa.string())), "resource",
        RESOURCE_LEVELS)
    directed = pa.concat_tables([_direction(ranked, d) for d in DIRECTIONS])
    result["by_direction"] = _grouped(directed, "direction", DIRECTIONS)
    return result, queries


def _direction(ranked: pa.Table, direction: str) -> pa.Table:
    table = per_query(ranked, ["task", "query"], keep=f"direction = '{direction}'")
    return table.append_column("direction", pa.array([direction] * table.num_rows, pa.string()))


def _with_language(queries: pa.Table, languages: pa.Table) -> pa.Table:
    con = duckdb.connect()
    con.register("q", queries)
    con.register("l", languages)
    return arrow_table(con, "SELECT q.*, l.language FROM q JOIN l USING (query) ORDER BY ALL")


def paired_t_test(a: pa.Table, b: pa.Table, metric: str = "AP") -> dict[str, Any]:
    """Two-tailed paired t-test (:func:`openmsd.eval.metrics.paired_t_test`) of per-query
    ``metric`` of two models over the queries both have, per task: ``{task: {"t": ..., "p":
    ..., "n_queries": ..., "mean_difference": ...}}`` (difference a − b, in points; ``t``/``p``
    None when fewer than two queries or no variance)."""
    con = duckdb.connect()
    con.register("a", a)
    con.register("b", b)
    joined = arrow_table(con, f"""SELECT task, a."{metric}" AS x, b."{metric}" AS y
                                  FROM a JOIN b USING (task, query)""")
    out = {}
    for task in TASKS:
        rows = joined.filter(pc.equal(joined["task"], task))
        out[task] = t_test(rows["x"].to_numpy(zero_copy_only=False) * 100,
                           rows["y"].to_numpy(zero_copy_only=False) * 100)
    return out


PROTOCOLS = ("text-only", "hidden-links")


def pool_papers(corpus: Corpus, pool: Pool) -> Papers:
    """The pool as the scorers' collection (pool order)."""
    return Papers(pool.ids, pool.papers["text"].to_pylist(),
                  pool.papers["language"].to_pylist(), pool.papers["english"].to_pylist(),
                  corpus)


def check_protocol(scorer: Scorer, protocol: str) -> Scorer:
    """``scorer``, or :class:`SDSMError` when the text-only protocol meets a scorer that reads
    the citation graph (the relevant papers are its links)."""
    if protocol == "text-only" and scorer.signal == "graph":
        raise SDSMError(f"{scorer.name!r} reads the citation graph, which the text-only "
                        "protocol does not allow (the relevant papers are its links): use "
                        "--protocol hidden-links")
    return scorer


def hide_links(pool: Pool, seed: int = 0) -> tuple[Pool, list[tuple[str, str]]]:
    """The hidden-links protocol: for each citation query of ``pool``, a seeded half (rounded
    up) of its direct-citation partners is hidden. Returns the pool whose judgements are the
    hidden pairs only (task ``citation``), and the hidden pairs (to leave out of the graph)."""
    cited = pool.judgements.filter(pc.equal(pool.judgements["task"], "citation"))
    partners: dict[str, list[str]] = {}
    for query, doc in zip(cited["query"].to_pylist(), cited["doc"].to_pylist(), strict=True):
        partners.setdefault(query, []).append(doc)
    hidden: set[frozenset[str]] = set()
    for query in sorted(partners):
        docs = sorted(partners[query])
        rng = np.random.default_rng([seed, *query.encode()])
        chosen = rng.permutation(len(docs))[:math.ceil(len(docs) / 2)]
        hidden.update(frozenset((query, docs[i])) for i in chosen)
    keep = np.array([frozenset((q, d)) in hidden for q, d in
                     zip(cited["query"].to_pylist(), cited["doc"].to_pylist(), strict=True)],
                    bool)
    judgements = cited.filter(pa.array(keep, pa.bool_()))
    pairs = sorted(tuple(sorted(pair)) for pair in hidden)
    return (Pool(pool.split, pool.papers, judgements, pool.resource_levels, pool.left_out),
            [(a, b) for a, b in pairs])


def dense_leaves(corpus: Corpus, models: Sequence[str]) -> list[str]:
    """The dense models behind ``models`` (fusions expanded)."""
    return list(dict.fromkeys(
        leaf.bare.vector_key for name in models for leaf in leaves(name, corpus)
        if is_dense(leaf, corpus)))


def embed_pool(corpus: Corpus, pool: Pool, models: Sequence[str]) -> None:
    """Store vectors of the pool's papers for each dense model behind ``models`` (resumable:
    papers already embedded are skipped)."""
    for name in dense_leaves(corpus, models):
        if find_adapter(name, corpus) is None:  # an adapter's vectors are mapped, not encoded
            embed_corpus(corpus, load_encoder(name), name, paper_ids=pool.ids)


def common_pool(corpus: Corpus, pool: Pool, models: Sequence[str]
                ) -> tuple[Pool, dict[str, dict[str, Any]]]:
    """``pool`` restricted to papers every dense model behind ``models`` has a vector for, and
    per name its vector coverage: ``{"missing_vectors": n}``; :class:`SDSMError` naming the
    command to run when a dense model has no vectors at all."""
    coverage: dict[str, np.ndarray] = {}
    ids = pool.ids
    for name in dense_leaves(corpus, models):
        try:
            have, _ = load_vectors(corpus, name)
        except FileNotFoundError as error:
            raise SDSMError(f"{error} (or evaluate with --embed)") from None
        present = set(have)
        coverage[name] = np.array([paper in present for paper in ids], bool)
    keep = np.ones(len(ids), bool)
    for mask in coverage.values():
        keep &= mask
    status = {name: {"missing_vectors": int(sum(int((~coverage[leaf]).sum())
                                                for leaf in dense_leaves(corpus, [name])))}
              for name in models}
    return restrict(pool, keep, "missing_vectors"), status


@dataclass
class SDSMResult:
    """The ``--json`` object (``split``, ``models``) and the per-query tables."""

    summary: dict[str, Any]
    per_query: dict[str, pa.Table]


def evaluate_sdsm(corpus: Corpus, models: Sequence[str], split: str = "idt",
                  dc: DcSide = "both", baseline: str | None = None, seed: int = 0,
                  embed: bool = False,
                  progress: Callable[[str, int, int], None] | None = None,
                  protocol: str = "text-only") -> SDSMResult:
    """Evaluate ``models`` (any ranker name, :func:`openmsd.rank.load_scorer`) on the SDSM
    tasks of ``split``; with ``embed``, pool papers a dense model has no vector for are
    embedded first (and stored). ``protocol``: ``text-only`` (the papers' protocol; graph
    scorers refused) or ``hidden-links`` (:func:`hide_links`; the graph without the hidden
    links). Significance: each model against ``baseline`` (default: ``bm25`` when evaluated,
    else the first model), paired t-test on per-query AP per task."""
    if not models:
        raise SDSMError("no model to evaluate")
    if protocol not in PROTOCOLS:
        raise SDSMError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    pool = load_pool(corpus, split, dc)
    if embed:
        embed_pool(corpus, pool, models)
    pool, status = common_pool(corpus, pool, models)
    if pool.papers.num_rows < 2:
        raise SDSMError(f"{corpus.root}: split {split!r} has {pool.papers.num_rows} paper(s) "
                        "with text and vectors: nothing to rank")
    hidden: list[tuple[str, str]] = []
    if protocol == "hidden-links":
        pool, hidden = hide_links(pool, seed)
    counts = {task: 0 for task in TASKS}
    for task in pool.judgements["task"].to_pylist():
        counts[task] += 1
    summary: dict[str, Any] = {
        "split": split, "dc": dc, "protocol": protocol, "pool": pool.papers.num_rows,
        "left_out": pool.left_out, "relevant_pairs": counts,
        "hidden_links": len(hidden), "resource_levels": pool.resource_levels, "models": {}}
    tables: dict[str, pa.Table] = {}
    queries = len(set(pool.judgements["query"].to_pylist()))
    cache: dict[str, Scorer] = {}
    papers = pool_papers(corpus, pool)
    scorers = {name: check_protocol(load_scorer(name, papers, seed=seed, hidden=hidden,
                                                cache=cache), protocol)
               for name in models}  # every name checked before the first is scored
    for name, scorer in scorers.items():
        ranked = model_ranks(pool, ScorerRows(scorer), progress=(
            (lambda n, name=name: progress(name, n, queries)) if progress else None))
        figures, tables[name] = score_model(pool, ranked)
        summary["models"][name] = {**figures, **status[name]}
    reference = baseline or ("bm25" if "bm25" in tables else next(iter(tables), None))
    if reference is not None and reference not in tables:
        raise SDSMError(f"baseline {reference!r} is not among the models scored: "
                        f"{', '.join(tables)}")
    summary["significance"] = {
        "baseline": reference, "test": "paired two-tailed t-test on per-query AP",
        "models": {name: paired_t_test(table, tables[reference])
                   for name, table in tables.items() if name != reference}}
    return SDSMResult(summary, tables)


