"""What an adapter learns from and is judged on, as rows of vector positions.

* :func:`positive_rows`: the train split's pairs of a positive set
  (:func:`openmsd.relations.positive_pairs`), as ``(anchor, positive, -1)`` rows;
* :func:`triple_rows`: the Specter triples (hard negatives) or SciNCL triples (graph-embedding
  neighbours as positives) ``openmsd relations`` wrote, as ``(anchor, positive, negative)``;
* :func:`judgements`: a split's DC / CC / BC pairs as the SDSM tasks' relevant pairs
  (``task``, ``query``, ``doc``, both directions), for model selection.

Rows naming a paper without a stored vector are left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import ibis
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from ibis import _

from openmsd.corpus import Corpus
from openmsd.relations import positive_pairs, relations_dir

__all__ = [
    "EXTRAS", "TASKS", "AdapterDataError", "Rows", "judgements", "positive_rows", "split_ids",
    "triple_rows",
]

#: Extra examples an adapter can learn from: ``relations/NAME.parquet`` triples.
EXTRAS = ("specter", "scincl")
#: The SDSM tasks and their relation (as :data:`openmsd.eval.TASKS`).
TASKS = {"citation": "dc", "co-citation": "cc", "bib-coupling": "bc"}


class AdapterDataError(ValueError):
    """Relations missing, or too few pairs to learn from."""


@dataclass
class Rows:
    """``(anchor, positive, negative)`` positions (negative -1: in-batch negatives only) and
    how many rows were left out because a paper had no vector."""

    rows: np.ndarray
    no_vector: int = 0


def _file(corpus: Corpus, name: str) -> str:
    path = relations_dir(corpus) / f"{name}.parquet"
    if not path.exists():
        raise AdapterDataError(f"{corpus.root}: no relations ({path} is missing); run "
                               f"'openmsd relations {corpus.root}' first")
    return str(path)


def split_ids(corpus: Corpus, split: str) -> list[str]:
    """The papers of ``split`` (``relations/splits.parquet``), sorted."""
    table = pq.read_table(_file(corpus, "splits"), columns=["paper_id", "split"])
    return sorted(p for p, s in zip(table["paper_id"].to_pylist(), table["split"].to_pylist(),
                                    strict=True) if s == split)


def _positions(columns: list[pa.Array | pa.ChunkedArray], where: Mapping[str, int]) -> Rows:
    """Rows of the columns' paper ids as positions in ``where``; a row naming a paper not in
    ``where`` is left out and counted (vectorised: millions of pairs on a large corpus)."""
    keys = pa.array(list(where.keys()), pa.string())
    values = np.fromiter(where.values(), np.int64, len(where))
    found = [pc.index_in(column, value_set=keys) for column in columns]
    known = np.logical_and.reduce([f.is_valid().to_numpy(zero_copy_only=False) for f in found])
    rows = np.stack([values[f.fill_null(0).to_numpy(zero_copy_only=False)] for f in found],
                    axis=1)[known] if len(where) else np.zeros((0, len(columns)), np.int64)
    return Rows(rows.reshape(-1, len(columns)).astype(np.int64), int((~known).sum()))


def positive_rows(corpus: Corpus, positive_set: str, where: Mapping[str, int],
                  balanced: bool = False, seed: int = 0) -> Rows:
    """The train split's pairs of ``positive_set`` as ``(a, b, -1)`` rows of positions in
    ``where`` (paper id -> row of the vector matrix), in pair order (sorted ids)."""
    con = ibis.duckdb.connect()
    pairs = con.read_parquet(_file(corpus, "pairs")).filter(_.split == "train")
    table = positive_pairs(pairs, positive_set, seed, balanced).order_by(
        ["paper_a", "paper_b"]).to_pyarrow()
    found = _positions([table["paper_a"], table["paper_b"]], where)
    found.rows = np.hstack([found.rows, np.full((len(found.rows), 1), -1, np.int64)])
    return found


def triple_rows(corpus: Corpus, name: str, where: Mapping[str, int]) -> Rows:
    """The triples of ``relations/NAME.parquet`` (``specter``, ``scincl``) as positions."""
    table = pq.read_table(_file(corpus, name), columns=["query_id", "positive_id",
                                                        "negative_id"])
    return _positions([table[c] for c in table.column_names], where)


def judgements(corpus: Corpus, split: str) -> pa.Table:
    """The SDSM tasks' relevant pairs of ``split``: ``task``, ``query``, ``doc`` (each pair
    in both directions), sorted."""
    con = ibis.duckdb.connect()
    pairs = con.read_parquet(_file(corpus, "pairs")).filter(_.split == split)
    task = _.relation.cases(*[(r, t) for t, r in TASKS.items()])
    both = ibis.union(pairs.select(task=task, query=_.paper_a, doc=_.paper_b),
                      pairs.select(task=task, query=_.paper_b, doc=_.paper_a), distinct=True)
    return both.order_by(["task", "query", "doc"]).to_pyarrow()
