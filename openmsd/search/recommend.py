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
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from openmsd.corpus import Corpus, identify
from openmsd.identifiers import normalize_title
from openmsd.index import VectorIndex, load_index
from openmsd.ingest import MARKER, citation_markers, paragraphs_of, without_markers
from openmsd.models import (
    DenseEncoder,
    RerankFusion,
    alike_groups,
    finished_content,
    fundamental,
    pick,
    split_sentences,
)
from openmsd.rank import (
    CONTEXT_SIGNALS,
    GRAPH_FEATURES,
    HYBRID,
    NON_PAPER_SLACK,
    PREFETCH_DEPTH,
    SENTENCE_SIGNALS,
    Filters,
    PrefetchHead,
    Queries,
    RankWeights,
    Scorer,
    dense_hits,
    dense_members,
    fused_ranker,
    graph_rows,
    index_cosines,
    learned_rerank,
    mixed_vectors,
    papers_first,
    prefetch_ids,
    rank_weights,
    read_prefetch_head,
    score_pools,
    two_stage_hits,
    two_stage_weight,
)
from openmsd.rank import fused_hits as rank_fused_hits
from openmsd.rank import rerank_hits as rank_rerank_hits
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
    "MARKER",
    "MAX_LOCATIONS",
    "CitationRequest",
    "Driver",
    "Location",
    "RankWeights",
    "Recommendation",
    "citation_locations",
    "citation_markers",
    "cited_count",
    "fused_hits",
    "language_warning",
    "locations",
    "manuscript_papers",
    "recommend_citations",
    "rerank_hits",
    "split_sentences",
]

MAX_LOCATIONS = 50
"""Locations embedded and searched at once; by default :func:`recommend` answers only the
first this many (the HTTP API's bound), ``max_locations=None`` all of them in such batches."""
MAX_PARAGRAPH_CONTEXT = 10
"""A marker-less paragraph's context: at most its first this many sentences."""
MAX_PARAGRAPH_CHARS = 10_000
"""A paragraph longer than this is split into sentences this many characters at a time."""
DRIVERS = 2
"""Context sentences named per result."""
log = logging.getLogger("openmsd.recommend")
T = TypeVar("T")
TITLE_MAX = 300
"""A first paragraph this short, without a marker, is taken as the manuscript's title."""


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


def language_warning(language: str | None, encoder: DenseEncoder) -> str | None:
    """A warning when the manuscript's ``language`` (ISO 639-1) is none that ``encoder``'s
    model covers (:data:`MODEL_LANGUAGES`; a model not listed there: no warning).

    >>> from types import SimpleNamespace
    >>> language_warning("el", SimpleNamespace(name="minilm-en"))[:40]
    "the manuscript's language (el) is not on"
    """
    from openmsd.rank import RankerSpec

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


def _paragraph_sentences(paragraphs: list[str], language: str | None
                         ) -> tuple[list[str], list[int]]:
    """All sentences of the paragraphs and the index of each paragraph's first sentence (a
    paragraph over :data:`MAX_PARAGRAPH_CHARS` split in pieces of that size, :func:`_pieces`)."""
    sentences: list[str] = []
    starts = []
    for paragraph in paragraphs:
        found = [s for piece in _pieces(paragraph, MAX_PARAGRAPH_CHARS)
                 for s in split_sentences(piece, language)]
        if found:
            starts.append(len(sentences))
            sentences.extend(found)
    return sentences, starts


def _context(sentences: list[str], i: int, marked: bool, starts: list[int]) -> list[str]:
    if marked:
        return fundamental(sentences, i)
    end = next((s for s in starts if s > i), len(sentences))
    return sentences[i:min(end, i + MAX_PARAGRAPH_CONTEXT)]


def _drivers(sentence_vectors: dict[str, np.ndarray], paper_vectors: dict[str, np.ndarray],
             context: list[str], own: str, found: list[tuple[str, float]],
             weights: RankWeights) -> dict[str, list[Driver]]:
    """Per result paper: the sentences of this location's ``context`` most similar to it,
    best first by similarity × weight (``own``, the location's sentence: ``weights.sentence``,
    its neighbours: ``weights.context``, scaled so the larger weight is 1)."""
    mine = [(s, c) for s in context if (c := without_markers(s)) in sentence_vectors]
    if not mine or not found:
        return {}
    top = max(weights.sentence, weights.context) or 1.0
    factor = np.array([(weights.sentence if s == own else weights.context) / top
                       for s, _ in mine], np.float32)
    matrix = np.stack([sentence_vectors[c] for _, c in mine])
    drivers = {}
    for paper_id, _ in found:
        vector = paper_vectors.get(paper_id)
        if vector is None:
            continue
        scores = matrix @ vector
        order = np.argsort(-(scores * factor), kind="stable")[:DRIVERS]
        drivers[paper_id] = [Driver(mine[j][0], round(float(scores[j]), 4), mine[j][0] == own)
                             for j in order]
    return drivers


def _paper_vectors(index: VectorIndex, papers: list[str]) -> dict[str, np.ndarray]:
    """The index's vectors of ``papers`` (those it can give back)."""
    out = {}
    for paper_id in papers:
        try:
            out[paper_id] = index.vector(index.row(paper_id))
        except (ValueError, RuntimeError) as error:  # no row, or an index without its vectors
            log.warning("recommend: driver sentences left out: the index cannot give back the "
                        "vectors of the papers found (%s: %s)", type(error).__name__, error)
            return {}
    return out


def _ranked_by(corpus: Corpus, ranker: str, rank: Callable[[Scorer], T]) -> T:
    """``rank(scorer)`` with ``ranker`` over ``corpus``; with ``bm25@same`` where its dense
    member cannot encode queries here (logged)."""
    resources = resources_of(corpus)
    try:
        return rank(resources.scorer(ranker))
    except (ValueError, FileNotFoundError) as error:  # its dense member cannot encode
        log.warning("recommend: bm25@same alone: %s cannot rank here (%s)", ranker, error)
        return rank(resources.scorer("bm25@same"))


def _filters(corpus: Corpus, languages: list[str] | None,
             years: tuple[int | None, int | None] | None) -> Filters:
    """The rows of a scorer's papers in ``languages`` and the year range."""
    return lambda papers: allowed(corpus, papers, languages, years)


def _prefetch(corpus: Corpus, texts: list[str], depth: int, languages: list[str] | None,
              years: tuple[int | None, int | None] | None, head: PrefetchHead | None = None
              ) -> list[list[str]]:
    """The fused ranker's (:data:`openmsd.rank.HYBRID`; ``bm25@same`` when its dense member
    cannot encode queries here, logged) top ``depth`` paper ids for each text, best first
    (:func:`openmsd.rank.prefetch_ids`; ``head``: the corpus's learned query head)."""
    filters = _filters(corpus, languages, years)
    return _ranked_by(corpus, HYBRID, lambda scorer: prefetch_ids(scorer, texts, depth, filters,
                                                                  head))


def fused_hits(corpus: Corpus, own: list[str], texts: list[str], ranker: str,
               weights: RankWeights, k: int, languages: list[str] | None = None,
               years: tuple[int | None, int | None] | None = None,
               depth: int = PREFETCH_DEPTH, head: PrefetchHead | None = None
               ) -> list[list[tuple[str, float]]]:
    """``recommend``'s ranking without a trained citation model: :func:`openmsd.rank.fused_hits`
    with the corpus's fused ``ranker`` (its own sentence first, then its fundamental context;
    ``head``: the corpus's learned query head); the best ``k`` as (paper id, score)."""
    filters = _filters(corpus, languages, years)
    return _ranked_by(corpus, ranker, lambda scorer: rank_fused_hits(
        scorer, own, texts, weights, k, filters, depth, head))


def _pool_scores(scorer: Scorer, queries: Queries, prefetched: list[list[str]]
                 ) -> list[np.ndarray]:
    """Each location's query (row ``i`` of ``queries``: its own sentence, or its fundamental
    context) scored by ``scorer`` against its prefetched papers (``prefetched[i]``): the same
    values as one ``score`` call per query, with fewer encoder calls. A dense member encodes
    the queries of one token count together (:func:`openmsd.models.alike_groups`: no padding,
    so each vector is the one the query alone gets, bit for bit on one thread), then every
    pool is scored from those vectors (:func:`openmsd.rank.score_pools`: BM25 analyses every
    query in one call)."""
    for dense in dense_members(scorer):
        if dense.name in queries.vectors or not len(queries):
            continue
        vectors = np.zeros((len(queries), dense.vectors.shape[1]), np.float32)
        for group in alike_groups(dense.encoder(), queries.texts, "query"):
            vectors[group] = dense.query_vectors(queries.subset(group))
        queries.vectors[dense.name] = vectors
    return score_pools(scorer, queries, [np.array([scorer.papers.position[p] for p in ids],
                                                  np.int64) for ids in prefetched])


def rerank_hits(corpus: Corpus, texts: list[str], own: list[str], profiles: np.ndarray,
                index: VectorIndex, fusion: RerankFusion, k: int,
                languages: list[str] | None = None,
                years: tuple[int | None, int | None] | None = None,
                depth: int = PREFETCH_DEPTH, exclude: Collection[str] = (),
                head: PrefetchHead | None = None) -> list[list[tuple[str, float]]]:
    """``recommend``'s two stages with a trained model's learned fusion
    (:func:`openmsd.rank.rerank_hits`), given the corpus's rankers: the fused ranker's top
    ``depth`` papers for each fundamental-context text, the cosine of the manuscript's whole
    finished content (``profiles``) with each candidate's vector in ``index``, the BM25 and
    dense scores of the location's own sentence (``own``) and the English-only model's on it
    and on the fundamental context (:data:`~openmsd.rank.CONTEXT_SIGNALS`; a ranker the corpus
    cannot run, e.g. a corpus without minilm-en vectors, gives no evidence: zeros, logged
    once) and, when the fusion weighs them, the corpus's citation graph (the papers of
    ``exclude`` not read; ``head``: the corpus's learned query head for the prefetch); the best
    ``k`` as (paper id, fused score)."""
    resources = resources_of(corpus)
    prefetched = _prefetch(corpus, texts, depth, languages, years, head)
    graph = None
    wants_graph = bool(set(GRAPH_FEATURES) & set(fusion.features))
    if wants_graph:
        with contextlib.suppress(FileNotFoundError, OSError):
            graph = load_citation_graph(corpus)
    scorers = {}
    rankers = {**SENTENCE_SIGNALS, **CONTEXT_SIGNALS}
    missing: dict[str, list[str]] = {}
    for feature, name in rankers.items():
        if feature in fusion.features:
            try:
                scorers[feature] = resources.scorer(name)
            except (ValueError, FileNotFoundError) as error:
                missing.setdefault(f"{name} ({error})", []).append(feature)
    for why, features in missing.items():  # once per ranker the corpus cannot run
        log.warning("recommend: rerank feature%s %s left out (0): %s",
                    "s" * (len(features) > 1), ", ".join(features), why)
    sentences = Queries.of_texts(own)  # each one's language identified once for all
    contexts = Queries.of_texts(texts) if set(CONTEXT_SIGNALS) & set(scorers) else None
    scores = {feature: _pool_scores(scorer, contexts if feature in CONTEXT_SIGNALS
                                    else sentences, prefetched)
              for feature, scorer in scorers.items()}
    return rank_rerank_hits(
        prefetched, {feature: scores.get(feature) for feature in rankers},
        lambda i, ids: index_cosines(index, profiles[i], ids), fusion, k,
        (lambda i, ids: graph_rows(graph, ids, exclude, (
            lambda papers, q=profiles[i]: index_cosines(index, q, papers))
            if "neighbours" in fusion.features else None)) if wants_graph else None)


def _cocitations(corpus: Corpus, ids: list[str]) -> dict[str, dict[str, int]]:
    """For each of ``ids``, the others it is co-cited with in the corpus and how often."""
    try:
        graph = load_citation_graph(corpus)
    except (FileNotFoundError, OSError):
        return {}
    out: dict[str, dict[str, int]] = {}
    for paper_id in ids:
        others = [p for p in ids if p != paper_id]
        counts = {p: link.co_cited for p, link in zip(others, graph.links(paper_id, others),
                                                      strict=True) if link.co_cited}
        if counts:
            out[paper_id] = counts
    return out


def _cocited_set(results: list[Recommendation], cocited: dict[str, dict[str, int]], n: int
                 ) -> list[str]:
    """``n`` results to cite together: the best, then those most co-cited with the chosen
    ones (ties and papers co-cited with none by rank)."""
    chosen = [results[0].paper_id] if results else []
    rest = [r.paper_id for r in results[1:]]
    while rest and len(chosen) < n:
        best = max(rest, key=lambda p: (sum(cocited.get(c, {}).get(p, 0) for c in chosen),
                                        -rest.index(p)))
        chosen.append(best)
        rest.remove(best)
    return chosen


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


@dataclass(frozen=True)
class Driver:
    """A sentence of a location's context that points to a recommended paper."""

    sentence: str
    score: float
    own_sentence: bool

    def as_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "score": self.score,
                "own_sentence": self.own_sentence}


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


def recommend_citations(corpus: Corpus, request: CitationRequest, encoder: DenseEncoder,
                        index: VectorIndex | None = None) -> list[Location]:
    """Papers to cite at each citation location of ``request.text``, best first, found with
    ``encoder`` (the query encoder of ``request.model``) in ``index`` (default: the corpus's
    index of ``request.model``). ``ValueError`` for an empty text or an ``at`` that is in no
    sentence. All the locations at once: :func:`citation_locations` gives them as they are
    ranked."""
    return list(citation_locations(corpus, request, encoder, index))


def citation_locations(corpus: Corpus, request: CitationRequest, encoder: DenseEncoder,
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
    sentences, starts = _paragraph_sentences(paragraphs, language)
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
    weights = rank_weights(encoder)
    fusion = two_stage_weight(encoder)
    two_stage = request.two_stage
    if two_stage and fusion is None:
        fusion = 0.5
    if two_stage is False:
        fusion = None
    learned = learned_rerank(encoder) if fusion is not None else None
    fused = fused_ranker(corpus, model) if fusion is None and two_stage is None else None
    index = index or load_index(corpus, model)
    # records that are not papers are ranked, then left out: ranked deeper for them
    kinds = {} if request.include_non_papers else non_paper_kinds(corpus)
    depth = k + len(itself) + min(len(kinds), max(k, NON_PAPER_SLACK))
    del paragraphs
    return _ranked_locations(corpus, request, encoder, index, _Plan(
        sentences, starts, where, marked, extra, itself, weights, fusion, learned, fused, kinds,
        depth, read_prefetch_head(corpus)))


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
    weights: RankWeights
    fusion: float | None
    learned: RerankFusion | None
    fused: str | None
    kinds: dict[str, str]
    depth: int
    head: PrefetchHead | None = None
    """The corpus's learned first-stage query head (``openmsd train citrec-prefetch``)."""


def _macro(sentences: list[str], i: int, extra: int) -> list[str]:
    """The ``extra`` macro-context sentences of the location at sentence ``i``: :func:`pick`
    of the sentences before its fundamental context (without copying them)."""
    return [sentences[j] for j in pick(range(max(0, i - 1)), extra)]  # type: ignore[arg-type]


def _ranked_locations(corpus: Corpus, request: CitationRequest, encoder: DenseEncoder,
                      index: VectorIndex, plan: _Plan) -> Iterator[Location]:
    """The locations of ``plan`` ranked :data:`MAX_LOCATIONS` at a time, yielded in order."""
    k, languages, years, explain = request.k, request.languages, request.years, request.explain
    sentences, starts, where, marked, extra = (plan.sentences, plan.starts, plan.where,
                                               plan.marked, plan.extra)
    itself, weights, fusion, learned, fused = (plan.itself, plan.weights, plan.fusion,
                                               plan.learned, plan.fused)
    kinds, depth, head = plan.kinds, plan.depth, plan.head
    clean = [without_markers(x) or x for x in sentences] if learned is not None else []
    for start in range(0, len(where), MAX_LOCATIONS):
        chunk = where[start:start + MAX_LOCATIONS]
        contexts = [_context(sentences, i, marked, starts) for i in chunk]
        macros = [_macro(sentences, i, extra) for i in chunk]
        queries = [("\n" if extra else " ").join(
                       s for s in (without_markers(x) for x in macro + context) if s)
                   for macro, context in zip(macros, contexts, strict=True)]
        own = [without_markers(sentences[i]) or sentences[i] for i in chunk]
        dense = own if fused is None and learned is None else []  # the index's query vectors
        unique = list(dict.fromkeys(dense + ([c for ctx in contexts for s in ctx
                                              if (c := without_markers(s))] if explain else [])))
        sentence_vectors = dict(zip(unique, np.asarray(encoder.encode(unique, "query"),
                                                       np.float32), strict=True)) if unique else {}
        texts = [" ".join(without_markers(x) for x in context) for context in contexts]
        if fused is not None:
            found_lists = fused_hits(corpus, own, texts, fused, weights, depth,
                                     languages, years, head=head)
        elif learned is not None:
            found_lists = rerank_hits(
                corpus, texts, own, encoder.encode_profiles(  # type: ignore[attr-defined]
                    [finished_content(clean, i) for i in chunk]),
                index, learned, depth, languages, years, exclude=itself, head=head)
        else:
            first = head if fusion is None and head is not None and head.maps(
                request.model) else None  # the dense index is the first stage
            vectors = mixed_vectors(np.stack([sentence_vectors[s] for s in own]),
                                    np.asarray(encoder.encode(queries, "query"), np.float32),
                                    weights, first)
            found_lists = (dense_hits(index, vectors, depth, languages, years)
                           if fusion is None else two_stage_hits(
                               _prefetch(corpus, texts, PREFETCH_DEPTH, languages, years, head),
                               vectors, index, fusion, depth))
        kept = [papers_first(lambda n, f=found: [h for h in f if h[0] not in itself][:n], k,
                             kinds, lambda hit: hit[0]) for found in found_lists]
        hits = [found for found, _ in kept]
        papers = list(dict.fromkeys(p for found in hits for p, _ in found))
        paper_vectors = _paper_vectors(index, papers) if explain else {}
        for i, context, macro, found, (_, left) in zip(chunk, contexts, macros, hits, kept,
                                                       strict=True):
            results = [Recommendation(**vars(r)) for r in related_results(corpus, found)]
            drivers = _drivers(sentence_vectors, paper_vectors, context, sentences[i], found,
                               weights) if explain else {}
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
                context=context, supplemental=macro,
                ranking=("fused" if fused is not None else "dense"
                         if fusion is None else "two-stage"),
                results=results,
                cocited_set=_cocited_set(results, cocited, cites) if cites >= 2 else None,
                left_out=dict(left))
