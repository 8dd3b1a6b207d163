"""Citation recommendation's ranking (MP-BERT4CR, Zhang & Ma 2021): a corpus's citation
locations and their held-out split (:mod:`.data`), the candidates' contexts (:mod:`.contexts`),
the first stage (:mod:`.first_stage`) and its learned query head (:mod:`.prefetch_head`), the
two-stage reciprocal-rank fusion (:mod:`.two_stage`), the learned rerank (:mod:`.rerank`) and
the citation-graph signals (:mod:`.graph`). Each stage takes the scorers, indexes and graphs it
ranks with as parameters: ``recommend`` (:mod:`openmsd.search.recommend`), ``eval citrec`` and
``train citrec`` give them theirs."""

from openmsd.rank.citrec.contexts import PaperContexts
from openmsd.rank.citrec.data import (
    SPLITS,
    TRAIN_MANIFEST,
    CitrecData,
    CitrecDataError,
    Location,
    candidate_mask,
    held_out,
    load,
    split_locations,
)
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
from openmsd.rank.citrec.graph import (
    GRAPH_FEATURES,
    graph_rows,
    graph_scores,
    graph_signals,
    link_matrix,
    visible_citing,
)
from openmsd.rank.citrec.prefetch_head import (
    PREFETCH_HEAD_FILE,
    PrefetchHead,
    adapt_queries,
    prefetch_head_path,
    read_prefetch_head,
    remove_prefetch_head,
    write_prefetch_head,
)
from openmsd.rank.citrec.rerank import (
    FEATURES,
    LANGUAGE_PAIR,
    NONNEGATIVE,
    PREFETCH_DEPTH,
    candidate_features,
    fit_fusion,
    profile_scores,
    rerank_hits,
    rerank_rows,
    top_candidates,
)
from openmsd.rank.citrec.two_stage import (
    FUSION_WEIGHTS,
    choose_fusion_weight,
    index_cosines,
    learned_rerank,
    recall_at,
    two_stage,
    two_stage_hits,
    two_stage_weight,
    weighted_rrf,
)

__all__ = [
    "FEATURES", "FUSION_WEIGHTS", "GRAPH_FEATURES", "LANGUAGE_PAIR", "NONNEGATIVE",
    "PREFETCH_DEPTH", "PREFETCH_HEAD_FILE", "SPLITS", "TRAIN_MANIFEST", "CitrecData",
    "CitrecDataError", "Filters", "Location", "PaperContexts", "PrefetchHead", "RankWeights",
    "adapt_queries", "candidate_features", "candidate_mask", "choose_fusion_weight",
    "dense_hits", "fit_fusion", "fused_hits", "fused_ranker", "graph_rows", "graph_scores",
    "graph_signals", "held_out", "index_cosines", "learned_rerank", "link_matrix", "load",
    "mixed_vectors", "prefetch_head_path", "prefetch_ids", "profile_scores", "rank_weights",
    "read_prefetch_head", "recall_at", "remove_prefetch_head", "rerank_hits", "rerank_rows",
    "split_locations", "top_candidates", "two_stage", "two_stage_hits", "two_stage_weight",
    "visible_citing", "weighted_rrf", "write_prefetch_head",
]
