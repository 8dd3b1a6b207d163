"""Free text as evaluation data: the citation contexts of a corpus's train and dev papers, each
a one-sentence query whose cited paper is its answer (``benchmarks/context_retrieval.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from openmsd.corpus import Corpus
from openmsd.rank import Papers
from openmsd.relations import RelationsError, read_split

__all__ = ["citation_contexts"]


def citation_contexts(corpus: Corpus, papers: Papers, splits: Sequence[str] | None = None
                      ) -> pa.Table:
    """The citation contexts of ``corpus`` whose reference resolved to a paper of the
    collection ``papers``: a table of ``citing_id``, ``text``, ``cited_id`` in a stable order;
    with ``splits``, only those of the citing papers of these relation splits (empty when the
    corpus has no contexts)."""
    schema = pa.schema([("citing_id", pa.string()), ("text", pa.string()),
                        ("cited_id", pa.string())])
    con = corpus.connect()
    if "contexts" not in {row[0] for row in con.execute("SHOW TABLES").fetchall()}:
        return schema.empty_table()
    rows = con.execute("SELECT citing_id, text, cited_id FROM contexts WHERE cited_id IS NOT "
                       "NULL AND text IS NOT NULL ORDER BY citing_id, position, cited_id"
                       ).fetchall()
    citing: set[str] | None = None
    if splits is not None:
        citing = set()
        for split in splits:
            try:
                citing |= set(read_split(corpus, split)["paper_id"].to_pylist())
            except RelationsError:
                continue
    kept = [row for row in rows
            if row[2] in papers.position and (citing is None or row[0] in citing)]
    return pa.Table.from_pylist([dict(zip(schema.names, row, strict=True)) for row in kept],
                                schema)
