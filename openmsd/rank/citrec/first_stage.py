"""Citation recommendation's first stage: the candidates of a citation location, from its own
sentence first and its wider context second.

* :func:`fused_hits`: a fused ranker (BM25 + dense, :data:`openmsd.rank.HYBRID` where the
  corpus holds the model: :func:`fused_ranker`) scores the own sentence and the fundamental
  context over the union of their top candidates, mixed by :class:`RankWeights`;
* :func:`prefetch_ids`: that ranker's top candidates of the fundamental context, which a second
  stage reorders (:mod:`.two_stage`, :mod:`.rerank`);
* :func:`dense_hits`: a dense model's index searched with the weighted mix of the sentence's
  and the context's query vectors (:func:`mixed_vectors`).

Where the corpus has learned a query head from its citation contexts (:mod:`.prefetch_head`),
each stage encodes the location's texts through it (``head``).

Every function takes the scorer (or index) to rank with; which one a corpus gives is its
caller's business.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex
from openmsd.models import normalise
from openmsd.rank.citrec.prefetch_head import PrefetchHead, adapt_queries
from openmsd.rank.citrec.rerank import PREFETCH_DEPTH
from openmsd.rank.load import HYBRID, leaves
from openmsd.rank.scorer import Papers, Queries, Scorer
from openmsd.rank.spec import RankerSpec

__all__ = ["Filters", "RankWeights", "dense_hits", "fused_hits", "fused_ranker", "mixed_vectors",
           "prefetch_ids", "rank_weights"]

Filters = Callable[[Papers], Any]
"""The rows of a scorer's papers a query may rank (None: all), e.g. by language and year."""


@dataclass(frozen=True)
class RankWeights:
    """How a location's query mixes its own sentence and its wider context (its fundamental
    context and, for MP-BERT4CR, the macro context): ``sentence`` first, ``context`` second.
    A citrec model's ``citrec.json`` may set ``sentence_weight`` / ``context_weight``."""

    sentence: float = 0.6
    context: float = 0.4


def rank_weights(encoder: Any) -> RankWeights:
    """The weights of ``encoder``'s config (a citrec model's settings), else the defaults."""
    settings = getattr(encoder, "settings", None)
    default = RankWeights()
    return RankWeights(float(getattr(settings, "sentence_weight", default.sentence)),
                       float(getattr(settings, "context_weight", default.context)))


def fused_ranker(corpus: Corpus, model: str) -> str:
    """The fused ranker ``recommend`` ranks with when no trained citation model is given: the
    corpus's :data:`openmsd.rank.HYBRID` where it holds ``model`` (a vector key), else the
    reciprocal-rank fusion of ``bm25@same`` and ``model``: the words and the model asked for."""
    held = {leaf.stored_model for leaf in leaves(HYBRID, corpus)}
    return HYBRID if RankerSpec.parse(model).stored_model in held else f"bm25@same+{model}"


def prefetch_ids(scorer: Scorer, texts: list[str], depth: int, filters: Filters,
                 head: PrefetchHead | None = None) -> list[list[str]]:
    """``scorer``'s top ``depth`` paper ids for each text, best first, among the rows
    ``filters(scorer.papers)`` allows; ``head``: the corpus's learned query head, which its
    dense member of the head's model encodes the texts through."""
    queries = adapt_queries(scorer, Queries.of_texts(texts), head)
    rows, _ = scorer.top_k(queries, depth, filters(scorer.papers))
    return [[scorer.papers.ids[r] for r in found if r >= 0] for found in rows]


def fused_hits(scorer: Scorer, own: list[str], texts: list[str], weights: RankWeights, k: int,
               filters: Filters, depth: int = PREFETCH_DEPTH, head: PrefetchHead | None = None
               ) -> list[list[tuple[str, float]]]:
    """For each location, ``scorer``'s top ``depth`` papers for its own sentence (``own``) and
    for its fundamental context (``texts``), both scored over that union by the scorer,
    ordered by ``weights.sentence × the sentence's score + weights.context × the context's``;
    the best ``k`` as (paper id, score). ``head``: the corpus's learned query head
    (:func:`~openmsd.rank.citrec.prefetch_head.adapt_queries`)."""
    allowed = filters(scorer.papers)
    sentences = adapt_queries(scorer, Queries.of_texts(own), head)
    contexts = adapt_queries(scorer, Queries.of_texts(texts), head)
    first, _ = scorer.top_k(sentences, depth, allowed)
    second, _ = scorer.top_k(contexts, depth, allowed)
    out = []
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        pool = np.array(list(dict.fromkeys(int(r) for r in (*a, *b) if r >= 0)), np.int64)
        fused = (weights.sentence * np.asarray(scorer.score(sentences.subset([i]), pool))[0]
                 + weights.context * np.asarray(scorer.score(contexts.subset([i]), pool))[0]
                 ) if len(pool) else np.zeros(0)
        order = np.argsort(-fused, kind="stable")[:k]
        out.append([(scorer.papers.ids[pool[j]], float(fused[j])) for j in order])
    return out


def mixed_vectors(sentences: np.ndarray, contexts: np.ndarray, weights: RankWeights,
                  head: PrefetchHead | None = None) -> np.ndarray:
    """The unit query vectors ``weights.sentence`` × each own sentence's vector +
    ``weights.context`` × its context's (through ``head``, the corpus's learned query head of
    this model, when given)."""
    vectors = normalise(weights.sentence * sentences + weights.context * contexts)
    return vectors if head is None else head.apply(vectors)


def dense_hits(index: VectorIndex, vectors: np.ndarray, depth: int,
               languages: list[str] | None = None,
               years: tuple[int | None, int | None] | None = None
               ) -> list[list[tuple[str, float]]]:
    """The nearest ``depth`` papers of each query vector in a dense model's ``index`` (FAISS),
    in ``languages`` and the year range, as (paper id, cosine)."""
    return index.search(vectors, depth, languages, years)
