"""Ranking: one scorer protocol for BM25, dense models, the citation graph and their fusions.

:func:`load_scorer` turns a name (``bm25``, ``e5-small-multilingual``, ``co-citation``,
``hybrid``, ``e5-small-multilingual+bm25``) into a :class:`Scorer` over a collection of
:class:`Papers`; ``score(queries, candidates)`` gives exact scores and ``top_k(queries, k,
filters)`` candidates.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.rank.authorship import AUTHOR_SCORERS
    from openmsd.rank.citation_signals import CONTEXT_SIGNALS, ENGLISH_PAIRS, SENTENCE_SIGNALS
    from openmsd.rank.dense import DenseScorer, load_encoder
    from openmsd.rank.feedback import FEEDBACK, LINKS
    from openmsd.rank.fusion import (
        Contribution,
        Fallback,
        Fusion,
        blend,
        combine,
        features,
        fuse,
        heard,
        transformed,
    )
    from openmsd.rank.load import (
        BACKENDS,
        ENGLISH_MODEL,
        FUSIONS,
        HYBRID,
        HYBRID_GRAPH,
        UNTUNED_METHODS,
        UnknownScorerError,
        available,
        corpus_adapter,
        default_dense,
        default_spec,
        dense_models,
        english_key,
        fallbacks,
        fusion_spec,
        is_builtin,
        is_dense,
        leaves,
        load_scorer,
        model_name,
        ranker_path,
        tuned,
    )
    from openmsd.rank.metadata import METADATA_SCORERS
    from openmsd.rank.papers import PAPERS_SQL, corpus_papers, english_texts
    from openmsd.rank.scorer import Papers, Queries, Scorer, score_pools
    from openmsd.rank.topk import top_k, top_k_of_scores

_WHERE: dict[str, str] = {
    "AUTHOR_SCORERS": "authorship",
    "CONTEXT_SIGNALS": "citation_signals",
    "ENGLISH_PAIRS": "citation_signals",
    "SENTENCE_SIGNALS": "citation_signals",
    "BACKENDS": "load",
    "Contribution": "fusion",
    "DenseScorer": "dense",
    "ENGLISH_MODEL": "load",
    "FEEDBACK": "feedback",
    "FUSIONS": "load",
    "Fallback": "fusion",
    "Fusion": "fusion",
    "blend": "fusion",
    "heard": "fusion",
    "transformed": "fusion",
    "HYBRID": "load",
    "HYBRID_GRAPH": "load",
    "LINKS": "feedback",
    "METADATA_SCORERS": "metadata",
    "PAPERS_SQL": "papers",
    "Papers": "scorer",
    "Queries": "scorer",
    "Scorer": "scorer",
    "UNTUNED_METHODS": "load",
    "UnknownScorerError": "load",
    "available": "load",
    "corpus_adapter": "load",
    "english_key": "load",
    "model_name": "load",
    "fusion_spec": "load",
    "combine": "fusion",
    "corpus_papers": "papers",
    "default_dense": "load",
    "default_spec": "load",
    "dense_models": "load",
    "english_texts": "papers",
    "fallbacks": "load",
    "features": "fusion",
    "fuse": "fusion",
    "is_builtin": "load",
    "is_dense": "load",
    "leaves": "load",
    "load_encoder": "dense",
    "load_scorer": "load",
    "ranker_path": "load",
    "score_pools": "scorer",
    "top_k": "topk",
    "top_k_of_scores": "topk",
    "tuned": "load",
}

__all__ = [
    "AUTHOR_SCORERS",
    "BACKENDS",
    "CONTEXT_SIGNALS",
    "ENGLISH_MODEL",
    "ENGLISH_PAIRS",
    "FEEDBACK",
    "FUSIONS",
    "HYBRID",
    "HYBRID_GRAPH",
    "LINKS",
    "METADATA_SCORERS",
    "PAPERS_SQL",
    "SENTENCE_SIGNALS",
    "UNTUNED_METHODS",
    "Contribution",
    "DenseScorer",
    "Fallback",
    "Fusion",
    "Papers",
    "Queries",
    "Scorer",
    "UnknownScorerError",
    "available",
    "blend",
    "combine",
    "corpus_adapter",
    "corpus_papers",
    "default_dense",
    "default_spec",
    "dense_models",
    "english_key",
    "english_texts",
    "fallbacks",
    "features",
    "fuse",
    "fusion_spec",
    "heard",
    "is_builtin",
    "is_dense",
    "leaves",
    "load_encoder",
    "load_scorer",
    "model_name",
    "ranker_path",
    "score_pools",
    "top_k",
    "top_k_of_scores",
    "transformed",
    "tuned",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
