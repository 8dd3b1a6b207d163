"""Evaluation: metrics, SDSM tasks, retrieval and citation-recommendation evaluation.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.eval.adapter_evaluator import sdsm_per_query
    from openmsd.eval.citrec import (
        CONTEXT_SIGNALS,
        GROUPS,
        PREFETCH,
        SENTENCE_SIGNALS,
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

_WHERE: dict[str, str] = {
    "sdsm_per_query": "adapter_evaluator",
    "COLUMNS": "report",
    "CUTOFF": "retrieval",
    "CitrecEvalError": "citrec",
    "DIRECTIONS": "sdsm",
    "DenseScorer": "ranks",
    "GROUPS": "citrec",
    "METRICS": "sdsm",
    "PREFETCH": "citrec",
    "SENTENCE_SIGNALS": "citrec",
    "CONTEXT_SIGNALS": "citrec",
    "Pool": "sdsm",
    "Queries": "citrec",
    "RESOURCE_LEVELS": "sdsm",
    "RetrievalEvalError": "retrieval",
    "SDSMError": "sdsm",
    "SDSMEvaluator": "sdsm_evaluator",
    "ScorerRows": "ranks",
    "TASKS": "sdsm",
    "accuracy": "langid",
    "bioc_rows": "langid",
    "breakdown_rows": "report",
    "check_protocol": "sdsm",
    "common_pool": "sdsm",
    "evaluate": "citrec",
    "location_ranks": "citrec",
    "metric_values": "citrec",
    "summarise": "citrec",
    "evaluate_files": "retrieval",
    "evaluate_pool_files": "pools",
    "evaluate_retrieval": "retrieval",
    "evaluate_sdsm": "sdsm",
    "header": "report",
    "hide_links": "sdsm",
    "hit_rate": "metrics.hit_rate",
    "load_pool": "sdsm",
    "markdown": "report",
    "markdown_table": "report",
    "model_ranks": "sdsm",
    "paired_t_test": "sdsm",
    "per_query": "metrics.table",
    "plot_table3": "citrec",
    "pool_papers": "sdsm",
    "pools_view": "report",
    "reciprocal_rank": "metrics.reciprocal_rank",
    "relevant_ranks": "ranks",
    "scielo_rows": "langid",
    "score_model": "sdsm",
    "score_rows": "citrec",
    "sdsm_view": "report",
    "table3": "citrec",
    "table_rows": "report",
    "taln_rows": "langid",
    "text_papers": "retrieval",
    "write_citrec_report": "citrec",
    "write_report": "report",
}

__all__ = [
    "COLUMNS", "CONTEXT_SIGNALS", "CUTOFF", "DIRECTIONS", "GROUPS", "METRICS", "PREFETCH",
    "RESOURCE_LEVELS", "SENTENCE_SIGNALS", "TASKS", "CitrecEvalError", "DenseScorer", "Pool",
    "Queries", "RetrievalEvalError", "SDSMError", "SDSMEvaluator", "ScorerRows", "accuracy",
    "bioc_rows", "breakdown_rows", "check_protocol", "common_pool", "evaluate", "evaluate_files",
    "evaluate_pool_files", "evaluate_retrieval", "evaluate_sdsm", "header", "hide_links",
    "hit_rate", "load_pool", "location_ranks", "markdown", "markdown_table", "metric_values",
    "model_ranks", "paired_t_test", "per_query", "plot_table3", "pool_papers", "pools_view",
    "reciprocal_rank", "relevant_ranks", "scielo_rows", "score_model", "score_rows",
    "sdsm_per_query", "sdsm_view", "summarise", "table3", "table_rows", "taln_rows", "text_papers",
    "write_citrec_report", "write_report",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
