"""Ranking: one scorer protocol for BM25, dense models, the citation graph and their fusions.

:func:`load_scorer` turns a name (``bm25``, ``e5-small-multilingual``, ``co-citation``,
``hybrid``, ``e5-small-multilingual+bm25``) into a :class:`Scorer` over a collection of
:class:`Papers`; ``score(queries, candidates)`` gives exact scores and ``top_k(queries, k,
filters)`` candidates.
"""

from openmsd.rank.fusion import Fusion
from openmsd.rank.load import (
    FUSIONS,
    HYBRID,
    HYBRID_GRAPH,
    UnknownScorerError,
    available,
    default_dense,
    dense_models,
    load_scorer,
    ranker_path,
)
from openmsd.rank.papers import corpus_papers
from openmsd.rank.scorer import Papers, Queries, Scorer
from openmsd.rank.topk import top_k, top_k_of_scores

__all__ = ["FUSIONS", "HYBRID", "HYBRID_GRAPH", "Fusion", "Papers", "Queries", "Scorer",
           "UnknownScorerError", "available", "corpus_papers", "default_dense", "dense_models",
           "load_scorer", "ranker_path", "top_k", "top_k_of_scores"]
