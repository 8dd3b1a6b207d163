"""Ranking a manuscript's citation locations: which stages rank them
(:func:`location_ranking`), the papers each location gets (:func:`location_hits`), the
sentences of its context that point to each (:func:`location_drivers`).

The stages are this package's: the fused first stage (:mod:`.first_stage`), the learned
rerank (:mod:`.rerank`), the two-stage fusion (:mod:`.two_stage`) or the model's index alone.
What they read of the corpus (its rankers by name, its citation graph, the filters of the
question) comes in as :class:`CorpusSignals`: ``recommend`` gives the corpus's own.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex
from openmsd.ingest import without_markers
from openmsd.models import DenseEncoder, RerankFusion, alike_groups, finished_content
from openmsd.rank.citation_signals import CONTEXT_SIGNALS, SENTENCE_SIGNALS
from openmsd.rank.citrec.first_stage import (
    Filters,
    RankWeights,
    dense_hits,
    fused_hits,
    fused_ranker,
    mixed_vectors,
    prefetch_ids,
    rank_weights,
)
from openmsd.rank.citrec.graph import GRAPH_FEATURES, graph_rows
from openmsd.rank.citrec.prefetch_head import PrefetchHead, read_prefetch_head
from openmsd.rank.citrec.rerank import PREFETCH_DEPTH, rerank_hits
from openmsd.rank.citrec.two_stage import (
    index_cosines,
    learned_rerank,
    two_stage_hits,
    two_stage_weight,
)
from openmsd.rank.explain import dense_members
from openmsd.rank.load import HYBRID
from openmsd.rank.scorer import Queries, Scorer, score_pools

__all__ = ["DRIVERS", "CorpusSignals", "Driver", "LocationRanking", "location_drivers",
           "location_hits", "location_ranking", "paper_vectors", "pool_scores",
           "rerank_locations"]

DRIVERS = 2
"""Context sentences named per result."""
log = logging.getLogger("openmsd.recommend")
T = TypeVar("T")
Hits = list[list[tuple[str, float]]]


@dataclass(frozen=True)
class CorpusSignals:
    """What a location's ranking reads of a corpus: its rankers by name (``scorer``), its
    citation graph (``graph``: ``FileNotFoundError`` or ``OSError`` where it has none) and
    the question's filters (``languages``, ``years``; ``filters``: the allowed rows of a
    scorer's papers)."""

    scorer: Callable[[str], Scorer]
    graph: Callable[[], Any]
    filters: Filters
    languages: list[str] | None = None
    years: tuple[int | None, int | None] | None = None


@dataclass(frozen=True)
class LocationRanking:
    """How a manuscript's locations are ranked: with the fused ranker ``fused`` (a ranker
    name), the learned rerank ``learned``, the two-stage fusion of weight ``fusion``, or the
    index of ``model`` alone (all three None); ``weights``: the own sentence's and the
    context's; ``head``: the corpus's learned first-stage query head."""

    model: str
    weights: RankWeights
    fusion: float | None
    learned: RerankFusion | None
    fused: str | None
    head: PrefetchHead | None = None

    @property
    def label(self) -> str:
        """``fused``, ``dense`` or ``two-stage``, as a location's ``ranking`` says."""
        return "fused" if self.fused is not None else "dense" if self.fusion is None \
            else "two-stage"

    @property
    def reads_index_queries(self) -> bool:
        """Whether the own sentences are encoded for the index (not by a fused ranker)."""
        return self.fused is None and self.learned is None


def location_ranking(corpus: Corpus, model: str, encoder: DenseEncoder,
                     two_stage: bool | None = None) -> LocationRanking:
    """How ``encoder`` (the query encoder of ``model``, a vector key) ranks ``corpus``'s
    locations: ``two_stage`` None: a trained MP-BERT4CR encoder's two stages (its learned
    rerank where it has one), else the fused ranker; True: the two stages (weight 0.5 without
    a trained one); False: the index alone."""
    fusion = two_stage_weight(encoder)
    if two_stage and fusion is None:
        fusion = 0.5
    if two_stage is False:
        fusion = None
    learned = learned_rerank(encoder) if fusion is not None else None
    fused = fused_ranker(corpus, model) if fusion is None and two_stage is None else None
    return LocationRanking(model, rank_weights(encoder), fusion, learned, fused,
                           read_prefetch_head(corpus))


def _ranked_by(signals: CorpusSignals, ranker: str, rank: Callable[[Scorer], T]) -> T:
    """``rank(scorer)`` with ``ranker``; with ``bm25@same`` where its dense member cannot
    encode queries here (logged)."""
    try:
        return rank(signals.scorer(ranker))
    except (ValueError, FileNotFoundError) as error:  # its dense member cannot encode
        log.warning("recommend: bm25@same alone: %s cannot rank here (%s)", ranker, error)
        return rank(signals.scorer("bm25@same"))


def _prefetch(signals: CorpusSignals, texts: list[str], depth: int,
              head: PrefetchHead | None = None) -> list[list[str]]:
    """The fused ranker's (:data:`openmsd.rank.HYBRID`; ``bm25@same`` when its dense member
    cannot encode queries here, logged) top ``depth`` paper ids for each text, best first
    (``head``: the corpus's learned query head)."""
    return _ranked_by(signals, HYBRID, lambda scorer: prefetch_ids(
        scorer, texts, depth, signals.filters, head))


def pool_scores(scorer: Scorer, queries: Queries, prefetched: list[list[str]]
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


def rerank_locations(signals: CorpusSignals, texts: list[str], own: list[str],
                     profiles: np.ndarray, index: VectorIndex, fusion: RerankFusion, k: int,
                     depth: int = PREFETCH_DEPTH, exclude: Collection[str] = (),
                     head: PrefetchHead | None = None) -> Hits:
    """The two stages with a trained model's learned fusion: the fused ranker's top ``depth``
    papers for each fundamental-context text, the cosine of the manuscript's whole finished
    content (``profiles``) with each candidate's vector in ``index``, the BM25 and dense
    scores of the location's own sentence (``own``) and the English-only model's on it and on
    the fundamental context (:data:`~openmsd.rank.CONTEXT_SIGNALS`; a ranker the corpus cannot
    run gives no evidence: zeros, logged once) and, when the fusion weighs them, the corpus's
    citation graph (the papers of ``exclude`` not read); the best ``k`` as (paper id, fused
    score)."""
    prefetched = _prefetch(signals, texts, depth, head)
    graph = None
    wants_graph = bool(set(GRAPH_FEATURES) & set(fusion.features))
    if wants_graph:
        with contextlib.suppress(FileNotFoundError, OSError):
            graph = signals.graph()
    scorers = {}
    rankers = {**SENTENCE_SIGNALS, **CONTEXT_SIGNALS}
    missing: dict[str, list[str]] = {}
    for feature, name in rankers.items():
        if feature in fusion.features:
            try:
                scorers[feature] = signals.scorer(name)
            except (ValueError, FileNotFoundError) as error:
                missing.setdefault(f"{name} ({error})", []).append(feature)
    for why, features in missing.items():  # once per ranker the corpus cannot run
        log.warning("recommend: rerank feature%s %s left out (0): %s",
                    "s" * (len(features) > 1), ", ".join(features), why)
    sentences = Queries.of_texts(own)  # each one's language identified once for all
    contexts = Queries.of_texts(texts) if set(CONTEXT_SIGNALS) & set(scorers) else None
    scores = {feature: pool_scores(scorer, contexts if feature in CONTEXT_SIGNALS
                                   else sentences, prefetched)
              for feature, scorer in scorers.items()}
    return rerank_hits(
        prefetched, {feature: scores.get(feature) for feature in rankers},
        lambda i, ids: index_cosines(index, profiles[i], ids), fusion, k,
        (lambda i, ids: graph_rows(graph, ids, exclude, (
            lambda papers, q=profiles[i]: index_cosines(index, q, papers))
            if "neighbours" in fusion.features else None)) if wants_graph else None)


def location_hits(ranking: LocationRanking, signals: CorpusSignals, encoder: DenseEncoder,
                  index: VectorIndex, own: list[str], texts: list[str], queries: list[str],
                  sentence_vectors: dict[str, np.ndarray], depth: int,
                  exclude: Collection[str] = (), clean: Sequence[str] = (),
                  at: Sequence[int] = ()) -> Hits:
    """The best ``depth`` papers (id, score) of each location, ranked as ``ranking`` says:
    ``own``, its sentence without markers; ``texts``, its fundamental context as one text;
    ``queries``, its context with its macro context (the index's query);
    ``sentence_vectors``, the own sentences' query vectors (where
    :attr:`LocationRanking.reads_index_queries`); ``clean``, the manuscript's sentences
    without markers, and ``at``, each location's sentence number (the learned rerank's
    whole-manuscript profile of each location: its finished content)."""
    if ranking.fused is not None:
        return _ranked_by(signals, ranking.fused, lambda scorer: fused_hits(
            scorer, own, texts, ranking.weights, depth, signals.filters, PREFETCH_DEPTH,
            ranking.head))
    if ranking.learned is not None:
        profiles = encoder.encode_profiles(  # type: ignore[attr-defined]
            [finished_content(clean, i) for i in at])
        return rerank_locations(signals, texts, own, profiles, index, ranking.learned, depth,
                                exclude=exclude, head=ranking.head)
    head = ranking.head
    first = head if ranking.fusion is None and head is not None and head.maps(
        ranking.model) else None  # the dense index is the first stage
    vectors = mixed_vectors(np.stack([sentence_vectors[s] for s in own]),
                            np.asarray(encoder.encode(queries, "query"), np.float32),
                            ranking.weights, first)
    if ranking.fusion is None:
        return dense_hits(index, vectors, depth, signals.languages, signals.years)
    return two_stage_hits(_prefetch(signals, texts, PREFETCH_DEPTH, head), vectors, index,
                          ranking.fusion, depth)


@dataclass(frozen=True)
class Driver:
    """A sentence of a location's context that points to a recommended paper."""

    sentence: str
    score: float
    own_sentence: bool

    def as_dict(self) -> dict[str, Any]:
        return {"sentence": self.sentence, "score": self.score,
                "own_sentence": self.own_sentence}


def location_drivers(sentence_vectors: dict[str, np.ndarray],
                     vectors: dict[str, np.ndarray], context: list[str], own: str,
                     found: list[tuple[str, float]], weights: RankWeights
                     ) -> dict[str, list[Driver]]:
    """Per result paper of ``found`` (its vector in ``vectors``): the sentences of this
    location's ``context`` (each read without its markers) most similar to it,
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
        vector = vectors.get(paper_id)
        if vector is None:
            continue
        scores = matrix @ vector
        order = np.argsort(-(scores * factor), kind="stable")[:DRIVERS]
        drivers[paper_id] = [Driver(mine[j][0], round(float(scores[j]), 4), mine[j][0] == own)
                             for j in order]
    return drivers


def paper_vectors(index: VectorIndex, papers: list[str]) -> dict[str, np.ndarray]:
    """The index's vectors of ``papers`` (none, logged, where it cannot give them back)."""
    out = {}
    for paper_id in papers:
        try:
            out[paper_id] = index.vector(index.row(paper_id))
        except (ValueError, RuntimeError) as error:  # no row, or an index without its vectors
            log.warning("recommend: driver sentences left out: the index cannot give back the "
                        "vectors of the papers found (%s: %s)", type(error).__name__, error)
            return {}
    return out
