"""Evaluation: metrics, SDSM tasks, retrieval and citation-recommendation evaluation.

The face is lazy (PEP 562): a name loads its own submodule on first use. The whole face
imports torch and sentence-transformers (the SDSM evaluator, MP-BERT4CR), which retrieval
evaluation and the metrics do not need.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

if TYPE_CHECKING:
    from openmsd.eval.adapter_evaluator import sdsm_per_query
    from openmsd.eval.citrec import (
        GROUPS,
        PREFETCH,
        CitrecEvalError,
        Queries,
        evaluate,
        location_ranks,
        metric_values,
        plot_table3,
        score_rows,
        summarise,
        table3,
        write_citrec_report,
    )
    from openmsd.eval.langid import accuracy, bioc_rows, scielo_rows, taln_rows
    from openmsd.eval.metrics.hit_rate import hit_rate
    from openmsd.eval.metrics.reciprocal_rank import reciprocal_rank
    from openmsd.eval.metrics.table import per_query
    from openmsd.eval.pools import evaluate_pool_files
    from openmsd.eval.ranks import DenseScorer, ScorerRows, relevant_ranks
    from openmsd.eval.report import (
        COLUMNS,
        breakdown_rows,
        header,
        markdown,
        markdown_table,
        pools_view,
        sdsm_view,
        table_rows,
        write_report,
    )
    from openmsd.eval.retrieval import (
        CUTOFF,
        RetrievalEvalError,
        evaluate_files,
        evaluate_retrieval,
        text_papers,
    )
    from openmsd.eval.sdsm import (
        DIRECTIONS,
        METRICS,
        RESOURCE_LEVELS,
        TASKS,
        Pool,
        SDSMError,
        check_protocol,
        common_pool,
        evaluate_sdsm,
        hide_links,
        load_pool,
        model_ranks,
        paired_t_test,
        pool_papers,
        score_model,
    )
    from openmsd.eval.sdsm_evaluator import SDSMEvaluator

__all__ = [
    "COLUMNS", "CUTOFF", "DIRECTIONS", "GROUPS", "METRICS", "PREFETCH",
    "RESOURCE_LEVELS", "TASKS", "CitrecEvalError", "DenseScorer", "Pool",
    "Queries", "RetrievalEvalError", "SDSMError", "SDSMEvaluator", "ScorerRows", "accuracy",
    "bioc_rows", "breakdown_rows", "check_protocol", "common_pool", "evaluate", "evaluate_files",
    "evaluate_pool_files", "evaluate_retrieval", "evaluate_sdsm", "header", "hide_links",
    "hit_rate", "load_pool", "location_ranks", "markdown", "markdown_table", "metric_values",
    "model_ranks", "paired_t_test", "per_query", "plot_table3", "pool_papers", "pools_view",
    "reciprocal_rank", "relevant_ranks", "scielo_rows", "score_model", "score_rows",
    "sdsm_per_query", "sdsm_view", "summarise", "table3", "table_rows", "taln_rows", "text_papers",
    "write_citrec_report", "write_report",
]

__getattr__, __dir__ = lazy_face(__name__)
