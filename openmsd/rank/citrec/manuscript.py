"""A manuscript's citation locations: its sentences, where to recommend, and each location's
contexts (MP-BERT4CR's fundamental and macro contexts).

A text is cut into paragraphs (by its reader) and each paragraph into sentences by pySBD in the
text's language (:func:`manuscript_sentences`); the locations are the sentences holding a
citation marker, else every paragraph's first sentence (:func:`locations`); a marked location's
context is its sentence with the one before and the one after, a marker-less one its
paragraph's first sentences (:func:`location_context`); an encoder that reads a macro context
also gets sentences spread evenly over the text before it (:func:`macro_context`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from openmsd.ingest import citation_markers
from openmsd.models import fundamental, pick, split_sentences
from openmsd.rank.spec import RankerSpec

__all__ = ["MAX_PARAGRAPH_CHARS", "MAX_PARAGRAPH_CONTEXT", "MODEL_LANGUAGES", "cited_count",
           "language_warning", "location_context", "locations", "macro_context",
           "manuscript_sentences"]

MAX_PARAGRAPH_CONTEXT = 10
"""A marker-less paragraph's context: at most its first this many sentences."""
MAX_PARAGRAPH_CHARS = 10_000
"""A paragraph longer than this is split into sentences this many characters at a time."""

XLMR_LANGUAGES = frozenset([
    "af", "am", "ar", "as", "az", "be", "bg", "bn", "br", "bs", "ca", "cs", "cy", "da", "de",
    "el", "en", "eo", "es", "et", "eu", "fa", "fi", "fr", "fy", "ga", "gd", "gl", "gu", "ha",
    "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "jv", "ka", "kk", "km", "kn", "ko",
    "ku", "ky", "la", "lo", "lt", "lv", "mg", "mk", "ml", "mn", "mr", "ms", "my", "ne", "nl",
    "no", "om", "or", "pa", "pl", "ps", "pt", "ro", "ru", "sa", "sd", "si", "sk", "sl", "so",
    "sq", "sr", "su", "sv", "sw", "ta", "te", "th", "tl", "tr", "ug", "uk", "ur", "uz", "vi",
    "xh", "yi", "zh"])
"""The languages of XLM-R's pre-training data, which multilingual e5 inherits."""
MODEL_LANGUAGES = {
    "e5-small-multilingual": XLMR_LANGUAGES,
    "muse-v3": frozenset(["ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru",
                          "th", "tr", "zh"]),
    "minilm-en": frozenset({"en"}),
}
"""The languages each bundled model was trained on (a trained model: its base's)."""


def language_warning(language: str | None, encoder: Any) -> str | None:
    """A warning when the manuscript's ``language`` (ISO 639-1) is none that ``encoder``'s
    model covers (:data:`MODEL_LANGUAGES`; a model not listed there: no warning).

    >>> from types import SimpleNamespace
    >>> language_warning("el", SimpleNamespace(name="minilm-en"))[:40]
    "the manuscript's language (el) is not on"
    """
    settings = getattr(encoder, "settings", None)
    name = getattr(settings, "base", None) or getattr(encoder, "name", "")
    name = RankerSpec.parse(name).stored_model if name else name
    covered = MODEL_LANGUAGES.get(name)
    if covered is None or not language or language in covered:
        return None
    return (f"the manuscript's language ({language}) is not one that {name} was trained on "
            f"({', '.join(sorted(covered)) if len(covered) < 20 else f'{len(covered)} languages'}"
            "): its recommendations may be poor; choose a model that covers it (--model)")


_RANGE = re.compile(r"(\d+)\s*[–-]\s*(\d+)")


def cited_count(sentence: str) -> int:
    """How many works the markers of a sentence cite: ``[3, 5-7]`` 4, ``{{cite:a,b}}`` 2,
    ``(Smith 2020; Doe 2019)`` 2, two markers at least 2.

    >>> cited_count("As in [3, 5-7] and (Doe, 2019).")
    5
    """
    total = 0
    for marker, _ in citation_markers(sentence):
        if marker.startswith("["):
            ranges = _RANGE.findall(marker)
            singles = re.findall(r"\d+", _RANGE.sub(" ", marker))
            n = len(singles) + sum(max(1, int(b) - int(a) + 1) for a, b in ranges
                                   if int(b) - int(a) < 50)
            total += max(1, n or marker.count("@"))
        elif marker.startswith("{{") or marker.startswith("\\"):
            total += max(1, marker.count(",") + 1)
        else:
            total += max(1, marker.count(";") + 1)
    return total


def locations(sentences: list[str], at: str | None = None,
              paragraph_starts: list[int] | None = None) -> list[int]:
    """Indexes of the sentences to recommend for: those with a citation marker, or the first
    sentence of every paragraph (``paragraph_starts``; default: every sentence) when none has
    one; only those containing ``at`` when it is given."""
    if at is not None:
        return [i for i, s in enumerate(sentences) if at in s]
    marked = [i for i, s in enumerate(sentences) if citation_markers(s)]
    if marked:
        return marked
    return list(paragraph_starts) if paragraph_starts is not None else list(range(len(sentences)))


def _pieces(paragraph: str, size: int) -> Iterator[str]:
    """``paragraph`` in pieces of at most ``size`` characters, each cut after the last
    sentence end (``. ``, ``? ``, ``! ``) in its second half, else at its last space: pySBD's
    time grows faster than a paragraph's length, so a very long one is split piece by piece.
    A paragraph of at most ``size`` characters is one piece.

    >>> list(_pieces("Alpha beta gamma. Delta epsilon. Zeta.", 24))
    ['Alpha beta gamma.', 'Delta epsilon. Zeta.']
    """
    while len(paragraph) > size:
        window = paragraph[:size + 1]
        cut = max(window.rfind(". "), window.rfind("? "), window.rfind("! "))
        cut = cut + 1 if cut >= size // 2 else window.rfind(" ")
        cut = cut if cut > 0 else size
        yield paragraph[:cut].strip()
        paragraph = paragraph[cut:].lstrip()
    if paragraph:
        yield paragraph


def manuscript_sentences(paragraphs: list[str], language: str | None
                         ) -> tuple[list[str], list[int]]:
    """All sentences of the paragraphs and the index of each paragraph's first sentence (a
    paragraph over :data:`MAX_PARAGRAPH_CHARS` split in pieces of that size)."""
    sentences: list[str] = []
    starts = []
    for paragraph in paragraphs:
        found = [s for piece in _pieces(paragraph, MAX_PARAGRAPH_CHARS)
                 for s in split_sentences(piece, language)]
        if found:
            starts.append(len(sentences))
            sentences.extend(found)
    return sentences, starts


def location_context(sentences: list[str], i: int, marked: bool, starts: list[int]
                     ) -> list[str]:
    """The context of the location at sentence ``i``: its fundamental context where the text
    has markers (``marked``), else its paragraph's first :data:`MAX_PARAGRAPH_CONTEXT`
    sentences from it (``starts``: each paragraph's first sentence)."""
    if marked:
        return fundamental(sentences, i)
    end = next((s for s in starts if s > i), len(sentences))
    return sentences[i:min(end, i + MAX_PARAGRAPH_CONTEXT)]


def macro_context(sentences: list[str], i: int, extra: int) -> list[str]:
    """The ``extra`` macro-context sentences of the location at sentence ``i``: :func:`pick`
    of the sentences before its fundamental context (without copying them)."""
    return [sentences[j] for j in pick(range(max(0, i - 1)), extra)]  # type: ignore[arg-type]
