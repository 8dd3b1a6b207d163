"""Language identification of papers with CLD3, as OpenMSD did, on title + abstract.

>>> identify(["Une MétaGrammaire pour les adjectifs du français", ""])
[('fr', 1.0), (None, None)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

# CLD3 still answers with a few retired ISO 639-1 codes.
_RETIRED = {"iw": "he", "ji": "yi", "jw": "jv", "in": "id"}
MAX_BYTES = 1000


class LanguageIdentifier(Protocol):
    """Anything that maps texts to ``(language, confidence)``; ``(None, None)`` when unknown."""

    def __call__(self, texts: Sequence[str]) -> list[tuple[str | None, float | None]]: ...


class CLD3:
    """Google's CLD3 (``cld3-py``): language code and probability of each text."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        import gcld3

        self._model = gcld3.NNetLanguageIdentifier(min_num_bytes=0, max_num_bytes=max_bytes)

    def __call__(self, texts: Sequence[str]) -> list[tuple[str | None, float | None]]:
        out: list[tuple[str | None, float | None]] = []
        for text in texts:
            if not text or not text.strip():
                out.append((None, None))
                continue
            result = self._model.FindLanguage(text=text)
            if result.language == "und":
                out.append((None, None))
                continue
            code = _RETIRED.get(result.language, result.language)
            out.append((code, round(float(result.probability), 4)))
        return out


_default: CLD3 | None = None


def paper_text(title: str | None, abstract: str | None) -> str:
    """The text language is identified on: title and abstract."""
    return " ".join(part for part in (title, abstract) if part)


def identify(texts: Sequence[str], identifier: LanguageIdentifier | None = None
             ) -> list[tuple[str | None, float | None]]:
    """Languages and confidences of ``texts`` with ``identifier`` (CLD3 by default)."""
    global _default
    if identifier is None:
        _default = _default or CLD3()
        identifier = _default
    return identifier(texts)
