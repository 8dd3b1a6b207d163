"""Citation recommendation for manuscript text: which corpus papers to cite where.

1. the text is cut into paragraphs at blank lines and each paragraph into sentences by pySBD,
   in the text's language (CLD3) when pySBD has rules for it, else with its English rules;
2. citation locations are the sentences holding a citation marker (``[12]``, ``[3, 5-7]``,
   ``(Smith, 2020)``, ``(Smith et al. 2020; Doe 2019)``, ``Smith et al. (2020)``,
   ``\\cite{key}``, ``{{cite:…}}``, ``[@key]``; :mod:`openmsd.models.citrec.markers`); a text
   without markers has a location at every paragraph (its first sentence);
3. a location's context is its *fundamental* context (its sentence with the one before and the
   one after; a marker-less paragraph: its sentences), markers removed; an encoder that reads a
   macro context (MP-BERT4CR, ``encoder.supplemental`` > 0) also gets that many sentences
   spread evenly over the text before it (MP-BERT4CR's dynamic context, deterministic here);
4. the contexts are embedded as queries by the encoder of the corpus index and searched in it;
   each result names the context sentences that point to it most (each sentence embedded
   alone, compared with the paper's vector).

Reading files (LaTeX, Markdown, JATS, unarXive) is :mod:`openmsd.search.manuscript`'s job.

>>> [s for s, _ in citation_markers("As shown in [12] and by (Smith et al., 2020).")]
['[12]', '(Smith et al., 2020)']
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from openmsd.corpus.langid import identify
from openmsd.corpus.store import Corpus
from openmsd.index.vector_index import VectorIndex, load_index
from openmsd.models.citrec.context import fundamental, pick
from openmsd.models.citrec.markers import MARKER, citation_markers, without_markers
from openmsd.models.citrec.sentences import split_sentences
from openmsd.models.encoder import DenseEncoder
from openmsd.search.manuscript import paragraphs_of
from openmsd.search.related import _results

__all__ = ["MARKER", "MAX_LOCATIONS", "citation_markers", "locations", "recommend",
           "split_sentences"]

MAX_LOCATIONS = 50
"""Locations embedded and searched at once; by default :func:`recommend` answers only the
first this many (the HTTP API's bound), ``max_locations=None`` all of them in such batches."""
MAX_PARAGRAPH_CONTEXT = 10
"""A marker-less paragraph's context: at most its first this many sentences."""
DRIVERS = 2
"""Context sentences named per result."""
log = logging.getLogger("openmsd.recommend")


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


def _paragraph_sentences(text: str, language: str | None) -> tuple[list[str], list[int]]:
    """All sentences of the text and the index of each paragraph's first sentence."""
    sentences: list[str] = []
    starts = []
    for paragraph in paragraphs_of(text):
        found = split_sentences(paragraph, language)
        if found:
            starts.append(len(sentences))
            sentences.extend(found)
    return sentences, starts


def _context(sentences: list[str], i: int, marked: bool, starts: list[int]) -> list[str]:
    if marked:
        return fundamental(sentences, i)
    end = next((s for s in starts if s > i), len(sentences))
    return sentences[i:min(end, i + MAX_PARAGRAPH_CONTEXT)]


def _drivers(encoder: DenseEncoder, index: VectorIndex, contexts: list[list[str]],
             hits: list[list[tuple[str, float]]]) -> list[dict[str, list[dict[str, Any]]]]:
    """Per location, per result paper: the context sentences most similar to it, best first.
    All locations' sentences are embedded in one batch."""
    unique = list(dict.fromkeys(c for s in (x for ctx in contexts for x in ctx)
                                if (c := without_markers(s))))
    papers = list(dict.fromkeys(p for found in hits for p, _ in found))
    if not unique or not papers:
        return [{} for _ in contexts]
    vectors = np.asarray(encoder.encode(unique, "query"), np.float32)
    position = {s: i for i, s in enumerate(unique)}
    try:
        paper_vectors = {p: index.index.reconstruct(index.row(p)) for p in papers}
    except (ValueError, RuntimeError) as error:  # no row, or an index without its vectors
        log.warning("recommend: driver sentences left out: the index cannot give back the "
                    "vectors of the papers found (%s: %s)", type(error).__name__, error)
        return [{} for _ in contexts]
    out = []
    for context, found in zip(contexts, hits, strict=True):
        mine = [(s, position[c]) for s in context if (c := without_markers(s))]
        if not mine:
            out.append({})
            continue
        own = vectors[[i for _, i in mine]]
        drivers = {}
        for paper_id, _ in found:
            scores = own @ paper_vectors[paper_id]
            drivers[paper_id] = [{"sentence": mine[j][0], "score": round(float(scores[j]), 4)}
                                 for j in np.argsort(-scores)[:DRIVERS]]
        out.append(drivers)
    return out


def recommend(corpus: Corpus, text: str, encoder: DenseEncoder, model: str, k: int = 10, *,
              at: str | None = None, languages: list[str] | None = None,
              years: tuple[int | None, int | None] | None = None,
              index: VectorIndex | None = None,
              max_locations: int | None = MAX_LOCATIONS, supplemental: int | None = None,
              explain: bool = False) -> list[dict[str, Any]]:
    """Papers to cite at each citation location of ``text``, best first.

    One dict per location: ``location`` (sentence index, from 0), ``sentence_number`` (from 1,
    as the command line prints it), ``sentence``, ``markers``
    (the citation markers found in it), ``context`` (the fundamental context: the one before,
    this one, the one after, or a marker-less paragraph), ``supplemental`` (the macro context
    sentences, for encoders that read one) and ``results`` (the top ``k`` papers, as
    :class:`openmsd.search.related.Result` dicts, each with ``drivers``: the context sentences
    that point to it most, when ``explain``). ``max_locations``: only the first that many
    locations (None: all of them, embedded :data:`MAX_LOCATIONS` at a time, so a whole paper
    costs the memory of one batch). ``supplemental``: how many macro-context sentences
    (default: the encoder's ``supplemental``, else none). ``ValueError`` for an empty text or
    an ``at`` that is in no sentence."""
    if not text.strip():
        raise ValueError("recommend: the manuscript text is empty")
    language = identify([text[:2000]])[0][0]
    sentences, starts = _paragraph_sentences(text, language)
    if not sentences:
        raise ValueError("recommend: the manuscript has no sentence")
    where = locations(sentences, at, starts)
    if not where:
        raise ValueError(f"recommend: no sentence contains {at!r}")
    where = where[:max_locations]
    marked = any(citation_markers(s) for s in sentences) or at is not None
    extra = supplemental if supplemental is not None else int(getattr(encoder, "supplemental",
                                                                      0))
    index = index or load_index(corpus, model)
    out = []
    for start in range(0, len(where), MAX_LOCATIONS):
        chunk = where[start:start + MAX_LOCATIONS]
        contexts = [_context(sentences, i, marked, starts) for i in chunk]
        macros = [pick(sentences[:max(0, i - 1)], extra) for i in chunk]
        queries = [("\n" if extra else " ").join(
                       s for s in (without_markers(x) for x in macro + context) if s)
                   for macro, context in zip(macros, contexts, strict=True)]
        vectors = np.asarray(encoder.encode(queries, "query"), np.float32)
        hits = index.search(vectors, k, languages, years)
        explained = (_drivers(encoder, index, [m + c for m, c in zip(macros, contexts,
                                                                     strict=True)], hits)
                     if explain else [{} for _ in chunk])
        for i, context, macro, found, drivers in zip(chunk, contexts, macros, hits, explained,
                                                     strict=True):
            results = []
            for result in _results(corpus, found):
                row = result.as_dict()
                row["drivers"] = drivers.get(result.paper_id, [])
                results.append(row)
            out.append({"location": i, "sentence_number": i + 1, "sentence": sentences[i],
                        "markers": [m for m, _ in citation_markers(sentences[i])],
                        "context": context, "supplemental": macro, "results": results})
    return out
