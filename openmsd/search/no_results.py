"""Why an answer found nothing: an empty corpus, or filters no paper passes (with what the
corpus has), else the caller's own reason."""

from __future__ import annotations

from openmsd.corpus import Corpus

__all__ = ["no_results_reason"]


def no_results_reason(corpus: Corpus, languages: list[str] | None,
                      years: tuple[int | None, int | None] | None, otherwise: str) -> str:
    """Why a search of ``corpus`` filtered by ``languages`` and ``years`` found nothing, in
    words (``otherwise`` when neither an empty corpus nor a filter explains it)."""
    con = corpus.connect()
    papers, low, high = con.execute("SELECT count(*), min(year), max(year) FROM papers").fetchone()
    if not papers:
        return ("the corpus has no papers: add some with 'openmsd ingest FILES --out "
                f"{corpus.root}'")
    if languages or years:
        held = [lang for lang, in con.execute("SELECT DISTINCT coalesce(language, 'und') AS l "
                                              "FROM papers ORDER BY l").fetchall()]
        filters = []
        if languages:
            filters.append(f"--lang {' '.join(languages)} (its languages: {', '.join(held)})")
        if years:
            filters.append(f"--year {years[0] or ''}-{years[1] or ''} (its papers are from "
                           f"{low}-{high})")
        return "no paper matches " + " and ".join(filters)
    return otherwise
