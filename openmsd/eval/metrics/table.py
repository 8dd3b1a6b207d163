"""Per-query AP and nDCG@10 of a table of ranks (trec_eval semantics).

With binary relevance both metrics are functions of where the relevant documents land in the
full ranking of the candidates (:func:`openmsd.eval.ranks.relevant_ranks`):
:func:`~openmsd.eval.metrics.average_precision` (trec_eval's ``map`` on a complete run) and
:func:`~openmsd.eval.metrics.ndcg` at 10 (trec_eval's ``ndcg_cut_10``).

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
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from openmsd.eval.metrics.average_precision import average_precision
from openmsd.eval.metrics.ndcg import ndcg
from openmsd.eval.metrics.rows import rank_rows
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
    table = arrow_table(con, f"""
        WITH adjusted AS (
            SELECT {group}, "rank" - sum(CASE WHEN {condition} THEN 0 ELSE 1 END)
                       OVER (PARTITION BY {group} ORDER BY "rank"
                             ROWS UNBOUNDED PRECEDING) AS "rank", ({condition}) AS kept
            FROM ranked)
        SELECT {group}, count(*) AS n_relevant, list("rank" ORDER BY "rank") AS ranks
        FROM adjusted WHERE kept GROUP BY ALL ORDER BY {group}""")
    counts = table["n_relevant"].to_numpy()
    rows = rank_rows(np.repeat(np.arange(len(counts)), counts),
                     pc.list_flatten(table["ranks"]).to_numpy(), len(counts))
    return table.drop_columns(["ranks"]).append_column(
        "AP", pa.array(average_precision(rows))).append_column(
        "nDCG@10", pa.array(ndcg(rows, 10)))
