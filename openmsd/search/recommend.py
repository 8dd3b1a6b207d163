"""Citation recommendation for manuscript text: which corpus papers to cite where.

A first, untrained recommender (issue 9 can swap in its trained model behind the same call):

1. the text is split into sentences by pySBD, in the text's language (CLD3) when pySBD has
   rules for it, else with its English rules;
2. citation locations are the sentences holding a citation marker (``[12]``, ``[3, 5-7]``,
   ``(Smith, 2020)``, ``(Smith et al. 2020; Doe 2019)``, ``Smith et al. (2020)``,
   ``\\cite{key}``); a text without markers has a location at every sentence;
3. a location's context is its sentence with the one before and the one after, markers removed;
4. the contexts are embedded as queries by the encoder of the corpus index and searched in it.

>>> [s for s, _ in citation_markers("As shown in [12] and by (Smith et al., 2020).")]
['[12]', '(Smith et al., 2020)']
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from openmsd.corpus.langid import identify
from openmsd.corpus.store import Corpus
from openmsd.index.vector_index import VectorIndex, load_index
from openmsd.models.encoder import DenseEncoder
from openmsd.search.related import _results

MAX_LOCATIONS = 50
"""At most this many locations are searched (the first ones in the text)."""

_YEAR = r"(?:1[89]|20)\d{2}[a-z]?"
_AUTHOR = r"[A-Z][\w'’\-]+(?:\s+(?:and|&|et|y|e|und)\s+[A-Z][\w'’\-]+)?(?:\s+et\s+al\.?)?"
MARKER = re.compile(
    r"\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]"                        # [12], [3, 5-7]
    r"|\\(?:no)?cite[a-zA-Z]*\*?(?:\[[^\]]*\])*\{[^}]*\}"        # \cite{key}, \citep[p. 3]{a,b}
    rf"|\((?:[^()]*?\b{_AUTHOR},?\s+{_YEAR}[^()]*?)\)"          # (Smith, 2020; Doe 2019)
    rf"|\b{_AUTHOR}\s+\({_YEAR}(?:[,;]\s*{_YEAR})*\)"           # Smith et al. (2020)
)


def citation_markers(sentence: str) -> list[tuple[str, int]]:
    """The citation markers of a sentence and their character offsets."""
    return [(m.group(0), m.start()) for m in MARKER.finditer(sentence)]


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of ``text`` (pySBD, in ``language`` when it has rules for it, else
    English), stripped, empty ones left out."""
    import pysbd
    from pysbd.languages import LANGUAGE_CODES

    language = language if language in LANGUAGE_CODES else "en"
    segmenter = pysbd.Segmenter(language=language, clean=False)
    return [s.strip() for s in segmenter.segment(text) if s.strip()]


def _without_markers(sentence: str) -> str:
    """The sentence with its citation markers removed (they carry no topic)."""
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s{2,}", " ", MARKER.sub(" ", sentence))).strip()


def locations(sentences: list[str], at: str | None = None) -> list[int]:
    """Indexes of the sentences to recommend for: those with a citation marker, or every
    sentence when none has one; only those containing ``at`` when it is given."""
    if at is not None:
        return [i for i, s in enumerate(sentences) if at in s]
    marked = [i for i, s in enumerate(sentences) if citation_markers(s)]
    return marked or list(range(len(sentences)))


def recommend(corpus: Corpus, text: str, encoder: DenseEncoder, model: str, k: int = 10, *,
              at: str | None = None, languages: list[str] | None = None,
              years: tuple[int | None, int | None] | None = None,
              index: VectorIndex | None = None,
              max_locations: int = MAX_LOCATIONS) -> list[dict[str, Any]]:
    """Papers to cite at each citation location of ``text``, best first.

    One dict per location: ``location`` (sentence number, from 0), ``sentence``, ``markers``
    (the citation markers found in it), ``context`` (the sentences embedded: the one before,
    this one, the one after) and ``results`` (the top ``k`` papers, as
    :class:`openmsd.search.related.Result` dicts). ``ValueError`` for an empty text or an
    ``at`` that is in no sentence."""
    if not text.strip():
        raise ValueError("recommend: the manuscript text is empty")
    language = identify([text[:2000]])[0][0]
    sentences = split_sentences(text, language)
    where = locations(sentences, at)
    if not where:
        raise ValueError(f"recommend: no sentence contains {at!r}")
    where = where[:max_locations]
    contexts = [sentences[max(0, i - 1):i + 2] for i in where]
    queries = [" ".join(_without_markers(s) for s in context) for context in contexts]
    index = index or load_index(corpus, model)
    vectors = np.asarray(encoder.encode(queries, "query"), np.float32)
    hits = index.search(vectors, k, languages, years)
    return [{"location": i, "sentence": sentences[i],
             "markers": [m for m, _ in citation_markers(sentences[i])],
             "context": context,
             "results": [r.as_dict() for r in _results(corpus, found)]}
            for i, context, found in zip(where, contexts, hits, strict=True)]
