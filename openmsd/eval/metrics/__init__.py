"""Retrieval metrics from the ranks of the relevant documents."""

from openmsd.eval.metrics.table import per_query

__all__ = ["per_query"]
