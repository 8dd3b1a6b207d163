"""Per-query AP and nDCG@10 from the ranks of the relevant documents (trec_eval semantics).

With binary relevance both metrics are functions of where the relevant documents land in the
full ranking of the candidates (:func:`openmsd.eval.ranks.relevant_ranks`):

* AP = (1/R) Σᵢ i / rankᵢ over the R relevant documents in rank order: every relevant
  document counts, however deep (trec_eval's ``map`` on a complete run);
* nDCG@10 = Σ_{rank ≤ 10} 1/log₂(rank + 1) divided by the same sum for the ideal ranking of
  min(R, 10) relevant documents (trec_eval's ``ndcg_cut_10``).

Tables in, tables out: a ``ranked`` table has the key columns (model, task, query, …), ``doc``
and ``rank``; :func:`per_query` returns one row per key with ``n_relevant``, ``AP`` and
``nDCG@10`` (fractions). ``keep`` restricts the relevant documents to a subset (a language
direction) and takes the others out of the candidates, so they neither help nor hurt.

>>> import pyarrow as pa
>>> ranked = pa.table({"query": ["q", "q"], "doc": ["a", "c"], "rank": [2, 4]})
>>> per_query(ranked, ["query"]).to_pylist()[0]["AP"]
0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pyarrow as pa

from openmsd.io import arrow_table


def _columns(keys: Sequence[str]) -> str:
    return ", ".join(f'"{key}"' for key in keys)


def per_query(ranked: pa.Table, keys: Sequence[str], keep: str | None = None) -> pa.Table:
    """``n_relevant``, ``AP`` and ``nDCG@10`` per distinct ``keys`` of ``ranked`` (columns
    ``keys`` + ``rank``). ``keep``: a SQL condition on ``ranked``'s columns choosing the
    relevant documents evaluated; the ones it leaves out are removed from the candidates (each
    kept document moves up by the left-out ones ranked above it)."""
    group = _columns(keys)
    condition = keep or "true"
    con = duckdb.connect()
    con.register("ranked", ranked)
    return arrow_table(con, f"""
        WITH adjusted AS (
            SELECT {group}, "rank" - sum(CASE WHEN {condition} THEN 0 ELSE 1 END)
                       OVER (PARTITION BY {group} ORDER BY "rank"
                             ROWS UNBOUNDED PRECEDING) AS "rank", ({condition}) AS kept
            FROM ranked),
        ordered AS (
            SELECT {group}, "rank",
                   row_number() OVER (PARTITION BY {group} ORDER BY "rank") AS i
            FROM adjusted WHERE kept)
        SELECT {group}, count(*) AS n_relevant,
               sum(i / "rank") / count(*) AS "AP",
               coalesce(sum(CASE WHEN "rank" <= 10 THEN 1 / log2("rank" + 1) END), 0)
                   / sum(CASE WHEN i <= 10 THEN 1 / log2(i + 1) END) AS "nDCG@10"
        FROM ordered GROUP BY ALL ORDER BY ALL""")
