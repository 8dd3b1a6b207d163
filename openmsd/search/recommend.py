"""Citation recommendation for manuscript text: which corpus papers to cite where.

1. the text is cut into paragraphs at blank lines and each paragraph into sentences by pySBD,
   in the text's language (CLD3) when pySBD has rules for it, else with its English rules;
2. citation locations are the sentences holding a citation marker (``[12]``, ``[3, 5-7]``,
   ``(Smith, 2020)``, ``(Smith et al. 2020; Doe 2019)``, ``Smith et al. (2020)``,
   ``\\cite{key}``, ``{{cite:…}}``, ``[@key]``; :mod:`openmsd.ingest.markers`); a text
   without markers has a location at every paragraph (its first sentence);
3. a location's context is its *fundamental* context (its sentence with the one before and the
   one after; a marker-less paragraph: its sentences), markers removed; an encoder that reads a
   macro context (MP-BERT4CR, ``encoder.supplemental`` > 0) also gets that many sentences
   spread evenly over the text before it (MP-BERT4CR's dynamic context, deterministic here);
4. each location is ranked by its own sentence first and its wider context second: the query
   vector is ``sentence_weight`` × the sentence's vector + ``context_weight`` × the context's
   (weights from the model's config, :class:`openmsd.rank.RankWeights` by default), searched
   in the corpus index; the manuscript itself (its DOI, id or normalised title) is never a
   result. With a trained MP-BERT4CR model (its ``citrec.json`` has the ``fusion_weight``
   that ``train citrec`` chose on dev) the default is **two stages**
   (:func:`openmsd.rank.two_stage_hits`): the fused ranker (:data:`openmsd.rank.HYBRID`,
   BM25 + dense) prefetches :data:`openmsd.rank.PREFETCH_DEPTH` candidates for the
   fundamental context, and they are reranked by the weighted RRF of the model's cosine (its
   index's vectors) and the prefetch's rank. Without a trained model the default is the
   **fused ranker** (:func:`fused_hits`: BM25 and the dense model fused,
   :func:`openmsd.rank.fused_ranker`), scoring the own sentence and the context with the same
   weights: on the citation locations of TALN and the unarXive sample it finds more cited
   papers than the dense model alone (``benchmarks/recommend_untrained.py``, docs/citrec.md);
5. each result names the sentences of *that location's* context that point to it most (each
   sentence embedded alone, compared with the paper's vector; the location's own sentence
   weighted as in 4) and the other results it is co-cited with in the corpus; a location
   citing several papers (``[3, 5-7]``, two markers) also gets ``cocited_set``: that many
   results, the best one and those most co-cited with it (MP-BERT4CR's multi-positive point).

Reading files (LaTeX, Markdown, JATS, unarXive) is :mod:`openmsd.ingest.manuscript`'s job; every
ranking decision (the first stage, the two stages, the learned rerank, the graph signals) is
:mod:`openmsd.rank.citrec`'s: this module gives it the corpus's scorers, index and graph.

>>> [s for s, _ in citation_markers("As shown in [12] and by (Smith et al., 2020).")]
['[12]', '(Smith et al., 2020)']
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from openmsd.corpus import Corpus, identify
from openmsd.identifiers import normalize_title
from openmsd.index import VectorIndex, load_index
from openmsd.ingest import citation_markers, paragraphs_of, without_markers
from openmsd.rank import (
    NON_PAPER_SLACK,
    CorpusSignals,
    Driver,
    LocationRanking,
    QueryEncoder,
    cited_count,
    cocitations,
    cocited_set,
    language_warning,
    location_context,
    location_drivers,
    location_hits,
    location_ranking,
    locations,
    macro_context,
    manuscript_sentences,
    paper_vectors,
    papers_first,
)
from openmsd.search.citation_graph import load_citation_graph
from openmsd.search.paper_records import load_paper_records
from openmsd.search.ranking import allowed
from openmsd.search.related import (
    PaperNotFoundError,
    Result,
    find_paper,
    non_paper_kinds,
    related_results,
)
from openmsd.search.resources import resources_of

__all__ = [
    "MAX_LOCATIONS",
    "CitationRequest",
    "Location",
    "Recommendation",
    "citation_locations",
    "corpus_signals",
    "manuscript_papers",
    "recommend_citations",
]

MAX_LOCATIONS = 50
"""Locations embedded and searched at once; by default :func:`recommend` answers only the
first this many (the HTTP API's bound), ``max_locations=None`` all of them in such batches."""
log = logging.getLogger("openmsd.recommend")
TITLE_MAX = 300
"""A first paragraph this short, without a marker, is taken as the manuscript's title."""


def _title_index(corpus: Corpus) -> dict[str, list[str]]:
    """Normalised title (and English title) → paper ids, built once per corpus build."""
    records = load_paper_records(corpus)

    def build() -> dict[str, list[str]]:
        index: dict[str, list[str]] = {}
        table = records.table
        for column in ("title", "english_title"):
            for paper_id, title in zip(table["paper_id"].to_pylist(),
                                       table[column].to_pylist(), strict=True):
                key = normalize_title(title)
                if key:
                    index.setdefault(key, []).append(paper_id)
        return index

    return resources_of(corpus).kept("title index", id(records), build)


def manuscript_papers(corpus: Corpus, ids: Sequence[str] = (), title: str | None = None
                      ) -> set[str]:
    """The corpus papers that are the manuscript itself: by id, DOI or alias (``ids``) and by
    normalised title."""
    found = set()
    for key in ids:
        if key and key.strip():
            with contextlib.suppress(PaperNotFoundError):
                found.add(find_paper(corpus, key.strip()))
    key = normalize_title(title)
    if key:
        found.update(_title_index(corpus).get(key, []))
    return found


def corpus_signals(corpus: Corpus, languages: list[str] | None = None,
                   years: tuple[int | None, int | None] | None = None) -> CorpusSignals:
    """What ranking a location reads of ``corpus``: its kept rankers, its citation graph and
    the rows of a scorer's papers in ``languages`` and the year range."""
    return CorpusSignals(resources_of(corpus).scorer, lambda: load_citation_graph(corpus),
                         lambda papers: allowed(corpus, papers, languages, years),
                         languages, years)


def _cocitations(corpus: Corpus, ids: list[str]) -> dict[str, dict[str, int]]:
    """For each of ``ids``, the others it is co-cited with in the corpus and how often."""
    try:
        graph = load_citation_graph(corpus)
    except (FileNotFoundError, OSError):
        return {}
    return cocitations(graph, ids)


@dataclass(frozen=True)
class CitationRequest:
    """What to recommend citations for: a manuscript's ``text`` and how to rank for it.

    ``model``: the vector key of the dense model whose index is searched; ``k``: papers per
    location; ``at``: only the sentences containing it; ``languages``, ``years``: filters.
    The manuscript itself is never a result: papers whose id / DOI is in ``manuscript_ids``
    or whose normalised title is ``manuscript_title`` (default: the text's first paragraph
    when it is short and has no marker) are left out. ``max_locations``: only the first that
    many locations (None: all of them, embedded :data:`MAX_LOCATIONS` at a time).
    ``supplemental``: how many macro-context sentences (default: the encoder's
    ``supplemental``, else none). ``explain``: name each result's driver sentences.
    ``two_stage``: None (default): a trained MP-BERT4CR encoder's two stages, else the fused
    ranker (:func:`fused_hits`); True: the two stages (:func:`two_stage_hits`, weight 0.5
    without a trained one); False: ``model``'s index alone. ``include_non_papers``: records
    that are not papers (errata, editorials, ...: :mod:`openmsd.corpus.kinds`) are results
    too; by default they are left out, and counted in each location's ``left_out``."""

    text: str
    model: str
    k: int = 10
    at: str | None = None
    languages: list[str] | None = None
    years: tuple[int | None, int | None] | None = None
    max_locations: int | None = MAX_LOCATIONS
    supplemental: int | None = None
    explain: bool = False
    manuscript_ids: Sequence[str] = ()
    manuscript_title: str | None = None
    two_stage: bool | None = None
    include_non_papers: bool = False


@dataclass
class Recommendation(Result):
    """A paper to cite at one location: a :class:`~openmsd.search.related.Result`, the
    sentences of the location's context that point to it most (``drivers``, when asked to
    explain) and the other results it is co-cited with in the corpus (named in ``why``)."""

    drivers: list[Driver] = field(default_factory=list)
    co_cited_with: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "why": list(self.why),
                "drivers": [d.as_dict() for d in self.drivers],
                "co_cited_with": list(self.co_cited_with)}


@dataclass
class Location:
    """One citation location of a manuscript and the papers to cite there, best first.

    ``location`` (from 0), ``sentence_number`` (from 1), ``sentence``, ``markers`` (the
    citation markers found in it), ``cites`` (how many works they cite), ``context`` (the
    fundamental context: the one before, this one, the one after, or a marker-less
    paragraph), ``supplemental`` (the macro context sentences, for encoders that read one),
    ``ranking`` (``fused``, ``dense`` or ``two-stage``), ``results`` and, when the markers
    cite several works, ``cocited_set``: that many results, the best one and those most
    co-cited with it; ``left_out``: the records that are not papers ranked above its last
    result, left out, by kind."""

    location: int
    sentence_number: int
    sentence: str
    markers: list[str]
    cites: int
    context: list[str]
    supplemental: list[str]
    ranking: str
    results: list[Recommendation]
    cocited_set: list[str] | None = None
    left_out: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The location as JSON shows it (``cocited_set`` only where the markers cite
        several works)."""
        out: dict[str, Any] = {
            "location": self.location, "sentence_number": self.sentence_number,
            "sentence": self.sentence, "markers": list(self.markers), "cites": self.cites,
            "context": list(self.context), "supplemental": list(self.supplemental),
            "ranking": self.ranking, "results": [r.as_dict() for r in self.results],
            "left_out": dict(self.left_out)}
        if self.cocited_set is not None:
            out["cocited_set"] = list(self.cocited_set)
        return out


def recommend_citations(corpus: Corpus, request: CitationRequest, encoder: QueryEncoder,
                        index: VectorIndex | None = None) -> list[Location]:
    """Papers to cite at each citation location of ``request.text``, best first, found with
    ``encoder`` (the query encoder of ``request.model``) in ``index`` (default: the corpus's
    index of ``request.model``). ``ValueError`` for an empty text or an ``at`` that is in no
    sentence. All the locations at once: :func:`citation_locations` gives them as they are
    ranked."""
    return list(citation_locations(corpus, request, encoder, index))


def citation_locations(corpus: Corpus, request: CitationRequest, encoder: QueryEncoder,
                       index: VectorIndex | None = None) -> Iterator[Location]:
    """:func:`recommend_citations`'s locations one by one, in the text's order, ranked
    :data:`MAX_LOCATIONS` at a time: what it holds beside the text and its sentences is one
    such batch, however many locations the text has. The request is checked (``ValueError``)
    before the first location is ranked."""
    text, model, k, at = request.text, request.model, request.k, request.at
    if not text.strip():
        raise ValueError("recommend: the manuscript text is empty")
    language = identify([text[:2000]])[0][0]
    warning = language_warning(language, encoder)
    if warning:
        log.warning("recommend: %s", warning)
    paragraphs = paragraphs_of(text)
    sentences, starts = manuscript_sentences(paragraphs, language)
    if not sentences:
        raise ValueError("recommend: the manuscript has no sentence")
    where = locations(sentences, at, starts)
    if not where:
        raise ValueError(f"recommend: no sentence contains {at!r}")
    where = where[:request.max_locations]
    marked = any(citation_markers(s) for s in sentences) or at is not None
    extra = (request.supplemental if request.supplemental is not None
             else int(getattr(encoder, "supplemental", 0)))
    manuscript_title = request.manuscript_title
    if manuscript_title is None:
        first = paragraphs[0]
        manuscript_title = (first if len(first) <= TITLE_MAX and not citation_markers(first)
                            else None)
    itself = manuscript_papers(corpus, request.manuscript_ids, manuscript_title)
    ranking = location_ranking(corpus, model, encoder, request.two_stage)
    index = index or load_index(corpus, model)
    # records that are not papers are ranked, then left out: ranked deeper for them
    kinds = {} if request.include_non_papers else non_paper_kinds(corpus)
    depth = k + len(itself) + min(len(kinds), max(k, NON_PAPER_SLACK))
    del paragraphs
    return _ranked_locations(corpus, request, encoder, index, _Plan(
        sentences, starts, where, marked, extra, itself, ranking, kinds, depth))


@dataclass(frozen=True)
class _Plan:
    """What :func:`citation_locations` settled before ranking: the text's sentences, the
    locations, and how to rank them."""

    sentences: list[str]
    starts: list[int]
    where: list[int]
    marked: bool
    extra: int
    itself: set[str]
    ranking: LocationRanking
    kinds: dict[str, str]
    depth: int


def _ranked_locations(corpus: Corpus, request: CitationRequest, encoder: QueryEncoder,
                      index: VectorIndex, plan: _Plan) -> Iterator[Location]:
    """The locations of ``plan`` ranked :data:`MAX_LOCATIONS` at a time, yielded in order."""
    k, explain = request.k, request.explain
    sentences, starts, where, marked, extra = (plan.sentences, plan.starts, plan.where,
                                               plan.marked, plan.extra)
    itself, ranking, kinds, depth = plan.itself, plan.ranking, plan.kinds, plan.depth
    signals = corpus_signals(corpus, request.languages, request.years)
    clean = [without_markers(x) or x for x in sentences] if ranking.learned is not None else []
    for start in range(0, len(where), MAX_LOCATIONS):
        chunk = where[start:start + MAX_LOCATIONS]
        contexts = [location_context(sentences, i, marked, starts) for i in chunk]
        macros = [macro_context(sentences, i, extra) for i in chunk]
        queries = [("\n" if extra else " ").join(
                       s for s in (without_markers(x) for x in macro + context) if s)
                   for macro, context in zip(macros, contexts, strict=True)]
        own = [without_markers(sentences[i]) or sentences[i] for i in chunk]
        dense = own if ranking.reads_index_queries else []  # the index's query vectors
        unique = list(dict.fromkeys(dense + ([c for ctx in contexts for s in ctx
                                              if (c := without_markers(s))] if explain else [])))
        sentence_vectors = dict(zip(unique, np.asarray(encoder.encode(unique, "query"),
                                                       np.float32), strict=True)) if unique else {}
        texts = [" ".join(without_markers(x) for x in context) for context in contexts]
        found_lists = location_hits(ranking, signals, encoder, index, own, texts, queries,
                                    sentence_vectors, depth, itself, clean, chunk)
        kept = [papers_first(lambda n, f=found: [h for h in f if h[0] not in itself][:n], k,
                             kinds, lambda hit: hit[0]) for found in found_lists]
        hits = [found for found, _ in kept]
        papers = list(dict.fromkeys(p for found in hits for p, _ in found))
        vectors = paper_vectors(index, papers) if explain else {}
        for i, context, macro, found, (_, left) in zip(chunk, contexts, macros, hits, kept,
                                                       strict=True):
            results = [Recommendation(**vars(r)) for r in related_results(corpus, found)]
            drivers = location_drivers(sentence_vectors, vectors, context, sentences[i], found,
                                       ranking.weights) if explain else {}
            cocited = _cocitations(corpus, [r.paper_id for r in results])
            for row in results:
                row.drivers = drivers.get(row.paper_id, [])
                partners = cocited.get(row.paper_id, {})
                row.co_cited_with = sorted(partners, key=lambda p, c=partners: -c[p])
                row.why = list(row.why) + [f"co-cited with {p} in the corpus"
                                           for p in row.co_cited_with]
            cites = cited_count(sentences[i])
            yield Location(
                location=i, sentence_number=i + 1, sentence=sentences[i],
                markers=[m for m, _ in citation_markers(sentences[i])], cites=cites,
                context=context, supplemental=macro, ranking=ranking.label, results=results,
                cocited_set=(cocited_set([r.paper_id for r in results], cocited, cites)
                             if cites >= 2 else None),
                left_out=dict(left))
