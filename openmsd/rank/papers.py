"""The collection of a corpus (or of some of its papers) for the scorers."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import pyarrow as pa

from openmsd.corpus.store import Corpus
from openmsd.io import arrow_table
from openmsd.models.formatting import paper_input
from openmsd.rank.scorer import Papers

#: Each paper's text, language and English text (its own English version, if not English).
PAPERS_SQL = """
SELECT paper_id, title, abstract, coalesce(language, 'und') AS language,
       CASE WHEN language IS DISTINCT FROM 'en' THEN english.title END AS en_title,
       CASE WHEN language IS DISTINCT FROM 'en' THEN english.abstract END AS en_abstract
FROM (SELECT *, [t FOR t IN coalesce(translations, []) IF t.language = 'en'][1] AS english
      FROM papers)
"""


def english_texts(table: pa.Table, summaries: Mapping[str, str] | None = None) -> list[str]:
    """The English text of each row of a :data:`PAPERS_SQL` table: its English title and
    abstract, else its English summary (``openmsd enrich``), else ""."""
    summaries = summaries or {}
    out = []
    for paper_id, language, title, en_title, en_abstract in zip(
            *(table[c].to_pylist() for c in ("paper_id", "language", "title",
                                             "en_title", "en_abstract")), strict=True):
        own = paper_input(en_title, en_abstract)
        if not own and paper_id in summaries:
            own = paper_input(en_title or (title if language == "en" else None),
                              summaries[paper_id])
        out.append(own)
    return out


def corpus_papers(corpus: Corpus, ids: Collection[str] | None = None,
                  summaries: Mapping[str, str] | None = None) -> Papers:
    """The corpus's papers (or those of ``ids``) in id order, with text or not."""
    con = corpus.connect()
    where = ""
    if ids is not None:
        con.register("chosen", pa.table({"paper_id": pa.array(sorted(ids), pa.string())}))
        where = "WHERE paper_id IN (SELECT paper_id FROM chosen)"
    table = arrow_table(con, f"SELECT * FROM ({PAPERS_SQL}) {where} ORDER BY paper_id")
    texts = [paper_input(t, a) for t, a in zip(table["title"].to_pylist(),
                                               table["abstract"].to_pylist(), strict=True)]
    return Papers(table["paper_id"].to_pylist(), texts, table["language"].to_pylist(),
                  english_texts(table, summaries), corpus)
