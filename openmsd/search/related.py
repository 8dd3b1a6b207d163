"""Related papers of a paper, and free-text search, with why each result is related.

``related`` embeds nothing: it looks the paper's vector up in the index and searches with it
(the paper itself is never a result). ``search`` embeds the text as a query. Each result
carries the paper's metadata (with its English title when it is not English) and, where the
citation graph knows, why it is related: it is cited by or cites the query paper, shares n
references with it (bibliographic coupling), or is co-cited with it n times.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from openmsd.corpus.identifiers import key_aliases, normalize_doi
from openmsd.corpus.store import Corpus
from openmsd.index.vector_index import VectorIndex, load_index
from openmsd.models.encoder import DenseEncoder


class PaperNotFoundError(LookupError):
    """A paper id or DOI that names no corpus paper."""


@dataclass
class Result:
    """One related paper."""

    paper_id: str
    score: float
    title: str | None
    english_title: str | None
    language: str | None
    year: int | None
    venue: str | None
    doi: str | None
    cites: bool = False
    cited_by: bool = False
    shared_references: int = 0
    co_cited: int = 0
    why: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_paper(corpus: Corpus, key: str) -> str:
    """The ``paper_id`` of a paper id, a DOI (any form), or any alias (``openalex:W1``)."""
    con = corpus.connect()
    doi = normalize_doi(key)
    candidates = [key, *([doi, f"doi:{doi}"] if doi else []), *key_aliases(key)]
    for candidate in candidates:
        row = con.execute("SELECT paper_id FROM papers WHERE paper_id = ? "
                          "OR list_contains(aliases, ?) LIMIT 1",
                          [candidate, candidate]).fetchone()
        if row:
            return row[0]
    raise PaperNotFoundError(f"{corpus.root}: no paper with id or DOI {key!r}")


def _explain(corpus: Corpus, query_id: str | None, results: list[Result]) -> None:
    if query_id is None or not results:
        return
    con = corpus.connect()
    ids = [r.paper_id for r in results]
    rows = con.execute("""
        WITH c AS (SELECT citing_id, cited_id FROM citations),
        ids AS (SELECT unnest(?::VARCHAR[]) AS id)
        SELECT ids.id,
          EXISTS (SELECT 1 FROM c WHERE citing_id = ? AND cited_id = ids.id) AS cites,
          EXISTS (SELECT 1 FROM c WHERE citing_id = ids.id AND cited_id = ?) AS cited_by,
          (SELECT count(*) FROM c a JOIN c b ON a.cited_id = b.cited_id
             WHERE a.citing_id = ? AND b.citing_id = ids.id) AS shared,
          (SELECT count(*) FROM c a JOIN c b ON a.citing_id = b.citing_id
             WHERE a.cited_id = ? AND b.cited_id = ids.id) AS co_cited
        FROM ids""", [ids, query_id, query_id, query_id, query_id]).fetchall()
    found = {row[0]: row[1:] for row in rows}
    for result in results:
        cites, cited_by, shared, co_cited = found[result.paper_id]
        result.cites, result.cited_by = bool(cites), bool(cited_by)
        result.shared_references, result.co_cited = int(shared), int(co_cited)
        why = []
        if cites:
            why.append("cited by the query paper")
        if cited_by:
            why.append("cites the query paper")
        if shared:
            why.append(f"{shared} shared reference{'s' if shared > 1 else ''}")
        if co_cited:
            why.append(f"co-cited {co_cited} time{'s' if co_cited > 1 else ''}")
        result.why = why


def _results(corpus: Corpus, hits: list[tuple[str, float]]) -> list[Result]:
    if not hits:
        return []
    con = corpus.connect()
    rows = con.execute("""
        SELECT paper_id, title, language, year, venue, doi,
               [t.title FOR t IN coalesce(translations, []) IF t.language = 'en'][1]
                 AS english_title
        FROM papers WHERE paper_id IN (SELECT unnest(?::VARCHAR[]))""",
                       [[h[0] for h in hits]]).fetchall()
    meta = {r[0]: r for r in rows}
    out = []
    for paper_id, score in hits:
        _, title, language, year, venue, doi, english = meta[paper_id]
        out.append(Result(paper_id, round(score, 4), title,
                          english if language != "en" else None, language, year, venue, doi))
    return out


def related(corpus: Corpus, key: str, model: str, k: int = 10,
            languages: list[str] | None = None,
            years: tuple[int | None, int | None] | None = None,
            index: VectorIndex | None = None) -> list[Result]:
    """The ``k`` papers nearest to paper ``key`` (id or DOI) in ``model``'s index."""
    paper_id = find_paper(corpus, key)
    index = index or load_index(corpus, model)
    ids = index.ids
    try:
        row = ids.index(paper_id)
    except ValueError:
        raise PaperNotFoundError(f"{corpus.root}: paper {paper_id!r} has no vector for "
                                 f"{model!r} (no title or abstract?); run 'openmsd embed' and "
                                 "'openmsd index build' after ingesting it") from None
    vector = index.index.reconstruct(row)[None, :]
    hits = index.search(vector, k, languages, years, exclude=[paper_id])[0]
    results = _results(corpus, hits)
    _explain(corpus, paper_id, results)
    return results


def search(corpus: Corpus, text: str, encoder: DenseEncoder, model: str, k: int = 10,
           languages: list[str] | None = None,
           years: tuple[int | None, int | None] | None = None,
           index: VectorIndex | None = None) -> list[Result]:
    """The ``k`` papers nearest to free ``text`` (a title, an abstract, a query)."""
    if not text.strip():
        raise ValueError("search: the query text is empty")
    index = index or load_index(corpus, model)
    vector = np.asarray(encoder.encode([text], "query"), np.float32)
    return _results(corpus, index.search(vector, k, languages, years)[0])
