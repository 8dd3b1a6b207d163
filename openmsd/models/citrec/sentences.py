"""Sentences of a text: pySBD (a maintained rule-based multilingual splitter).

>>> split_sentences("Nous avons testé. Les résultats sont bons.", "fr")
['Nous avons testé.', 'Les résultats sont bons.']
>>> document_sentences("One line. Two.\\nThree")
['One line.', 'Two.', 'Three']
"""

from __future__ import annotations

import pickle
from functools import cache
from pathlib import Path
from typing import Any

_SPLITS: dict[tuple[str, str], tuple[str, ...]] = {}
"""(text, language) → its sentences: what :func:`split_sentences` remembers."""
REMEMBERED = 200_000


@cache
def _segmenter(language: str) -> Any:
    import pysbd  # optional: the serve extra

    return pysbd.Segmenter(language=language, clean=False)


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of ``text`` (pySBD, in ``language`` when it has rules for it, else
    English), stripped, empty ones left out. Remembered (the last 200,000 texts): pySBD is
    slow, and every training run of a process splits the same candidates again;
    :func:`save_splits` / :func:`load_splits` carry them to the next process."""
    from pysbd.languages import LANGUAGE_CODES  # optional: the serve extra

    key = (text, language if language in LANGUAGE_CODES else "en")
    if key not in _SPLITS:
        if len(_SPLITS) >= REMEMBERED:
            _SPLITS.pop(next(iter(_SPLITS)))
        _SPLITS[key] = tuple(s.strip() for s in _segmenter(key[1]).segment(text) if s.strip())
    return list(_SPLITS[key])


def save_splits(path: Path) -> int:
    """Write the splits remembered in this process to ``path`` (atomically); how many."""
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(_SPLITS))
    tmp.replace(path)
    return len(_SPLITS)


def load_splits(path: Path) -> int:
    """Remember the splits :func:`save_splits` wrote (none when ``path`` does not exist);
    how many were read."""
    if not Path(path).is_file():
        return 0
    stored: dict[tuple[str, str], tuple[str, ...]] = pickle.loads(Path(path).read_bytes())
    _SPLITS.update(stored)
    return len(stored)


def document_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of a document whose lines may each hold several: every line is split."""
    return [s for line in text.splitlines() if line.strip()
            for s in split_sentences(line, language)]
