"""The languages a corpus's papers are in, and the one check of a language filter that the
command line and the web API share: a filter no paper can pass is an error naming it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from openmsd.corpus import UND, Corpus

__all__ = ["corpus_languages", "language_problem"]


@lru_cache(maxsize=16)
def _languages(path: Path, stamp: int) -> tuple[str, ...]:
    column = pq.ParquetFile(path).read(columns=["language"])["language"]
    return tuple(sorted(str(v) for v in pc.unique(pc.fill_null(column, UND)).to_pylist()))


def corpus_languages(corpus: Corpus) -> list[str]:
    """The languages of the corpus's papers (``und`` for a paper of none), sorted; read once
    per build of ``papers.parquet``."""
    path = corpus.table_path("papers")
    return list(_languages(path, path.stat().st_mtime_ns))


def language_problem(corpus: Corpus, languages: list[str] | None) -> str | None:
    """Why a filter on ``languages`` can give no result (no paper of the corpus is in any of
    them), naming them and the corpus's languages; None when some paper passes it (or no
    filter).

    >>> language_problem(Corpus("/nowhere"), None) is None
    True
    """
    if not languages:
        return None
    held = corpus_languages(corpus)
    if set(languages) & set(held):
        return None
    asked = ", ".join(repr(language) for language in languages)
    return (f"no paper of {corpus.root} is in {asked}; its languages: "
            f"{', '.join(held) or 'none'}")
