"""Sentences of a text: pySBD (a maintained rule-based multilingual splitter).

>>> split_sentences("Nous avons testé. Les résultats sont bons.", "fr")
['Nous avons testé.', 'Les résultats sont bons.']
>>> document_sentences("One line. Two.\\nThree")
['One line.', 'Two.', 'Three']
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any


@cache
def _segmenter(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of ``text`` (pySBD, in ``language`` when it has rules for it, else
    English), stripped, empty ones left out. Remembered (the last 200,000 texts): pySBD is
    slow, and every training run of a process splits the same candidates again."""
    from pysbd.languages import LANGUAGE_CODES

    return list(_split(text, language if language in LANGUAGE_CODES else "en"))


@lru_cache(maxsize=200_000)
def _split(text: str, language: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _segmenter(language).segment(text) if s.strip())


def document_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of a document whose lines may each hold several: every line is split."""
    return [s for line in text.splitlines() if line.strip()
            for s in split_sentences(line, language)]
