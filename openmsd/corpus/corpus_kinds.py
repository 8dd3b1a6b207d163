"""The records of a corpus that are not papers (:mod:`openmsd.corpus.kinds`), read from its
``papers.parquet``, or, for a corpus built before kinds were recorded, computed on open."""

from __future__ import annotations

from openmsd.corpus.kinds import record_kinds
from openmsd.corpus.store import Corpus
from openmsd.io import arrow_table

__all__ = ["non_papers"]

#: The columns :func:`record_kinds` reads, from a corpus's tables (``has_references`` from its
#: references).
_KIND_SQL = """
SELECT p.paper_id, {doc_type} AS doc_type, p.title, p.categories, p.abstract, p.translations,
       p.full_text, p.paper_id IN (SELECT citing_id FROM "references") AS has_references
FROM papers p"""


def non_papers(corpus: Corpus) -> dict[str, str]:
    """Each record of ``corpus`` that is not a paper: its id -> its kind. From the ``kind``
    column of ``papers.parquet``; a corpus built before kinds were recorded has none, and
    its kinds are computed here, as an ingest would, from its titles, section headings,
    abstracts, full texts and references (not from the source's type, which it did not
    keep)."""
    con = corpus.connect()
    names = {row[0] for row in con.execute("DESCRIBE papers").fetchall()}
    if "kind" in names:
        return dict(con.execute("SELECT paper_id, kind FROM papers "
                                "WHERE kind IS NOT NULL AND kind <> 'paper'").fetchall())
    table = arrow_table(con, _KIND_SQL.format(
        doc_type="p.doc_type" if "doc_type" in names else "NULL::VARCHAR"))
    kinds, _ = record_kinds(table)
    return {paper_id: kind for paper_id, kind in zip(
        table["paper_id"].to_pylist(), kinds.to_pylist(), strict=True) if kind != "paper"}
