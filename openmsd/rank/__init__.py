"""Ranking: one scorer protocol for BM25, dense models, the citation graph and their fusions.

:func:`load_scorer` turns a name (``bm25``, ``e5-small-multilingual``, ``co-citation``,
``hybrid``, ``e5-small-multilingual+bm25``) into a :class:`Scorer` over a collection of
:class:`Papers`; ``score(queries, candidates)`` gives exact scores and ``top_k(queries, k,
filters)`` candidates.
"""

from openmsd.artifact import ArtifactError
from openmsd.rank.authorship import AUTHOR_SCORERS
from openmsd.rank.calibration import Calibration
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
from openmsd.rank.held_out import HeldOutDense
from openmsd.rank.learned import (
    KINDS,
    LEARNED,
    LearnedFusion,
    LearnedModel,
    evidence_weights,
    feature_names,
    learned_fusion,
    pair_features,
    weighs,
)
from openmsd.rank.library import LibraryQuery, MissingVectorError, without_vectors
from openmsd.rank.load import (
    ENGLISH_MODEL,
    FUSIONS,
    HYBRID,
    HYBRID_GRAPH,
    UNTUNED_METHODS,
    adapters_of,
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
    ranker_path,
    save_tuned,
    tuned,
)
from openmsd.rank.metadata import METADATA_SCORERS
from openmsd.rank.non_papers import NON_PAPER_SLACK, left_out_line, papers_first
from openmsd.rank.papers import PAPERS_SQL, corpus_papers, english_texts
from openmsd.rank.resolve import (
    DEFAULT_RANKERS,
    RankerChoiceError,
    UnknownModelError,
    dense_key,
    index_backend,
    manuscript_model,
    question_ranker,
    served_backend,
)
from openmsd.rank.scorer import Papers, Queries, Scorer, score_pools
from openmsd.rank.spec import RankerSpec, RankerSpecError, UnknownScorerError
from openmsd.rank.topk import top_k, top_k_of_scores

__all__ = [
    "AUTHOR_SCORERS",
    "CONTEXT_SIGNALS",
    "DEFAULT_RANKERS",
    "ENGLISH_MODEL",
    "ENGLISH_PAIRS",
    "FEEDBACK",
    "FUSIONS",
    "HYBRID",
    "HYBRID_GRAPH",
    "KINDS",
    "LEARNED",
    "LINKS",
    "METADATA_SCORERS",
    "NON_PAPER_SLACK",
    "PAPERS_SQL",
    "SENTENCE_SIGNALS",
    "UNTUNED_METHODS",
    "ArtifactError",
    "Calibration",
    "Contribution",
    "DenseScorer",
    "Fallback",
    "Fusion",
    "HeldOutDense",
    "LearnedFusion",
    "LearnedModel",
    "LibraryQuery",
    "MissingVectorError",
    "Papers",
    "Queries",
    "RankerChoiceError",
    "RankerSpec",
    "RankerSpecError",
    "Scorer",
    "UnknownModelError",
    "UnknownScorerError",
    "adapters_of",
    "available",
    "blend",
    "combine",
    "corpus_adapter",
    "corpus_papers",
    "default_dense",
    "default_spec",
    "dense_key",
    "dense_models",
    "english_key",
    "english_texts",
    "evidence_weights",
    "fallbacks",
    "feature_names",
    "features",
    "fuse",
    "fusion_spec",
    "heard",
    "index_backend",
    "is_builtin",
    "is_dense",
    "learned_fusion",
    "leaves",
    "left_out_line",
    "load_encoder",
    "load_scorer",
    "manuscript_model",
    "pair_features",
    "papers_first",
    "question_ranker",
    "ranker_path",
    "save_tuned",
    "score_pools",
    "served_backend",
    "top_k",
    "top_k_of_scores",
    "transformed",
    "tuned",
    "weighs",
    "without_vectors",
]
