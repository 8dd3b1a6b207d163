"""Retrieval metrics from the ranks of the relevant documents, one function per metric.

Every metric takes a (queries × slots) matrix of ranks (:mod:`~openmsd.eval.metrics.rows`: a
row holds one query's relevant documents' 1-based ranks, ``inf`` when not ranked, ``nan``
padding) and returns one value per query, as ranx's core does. Which ranking produced the
ranks is :mod:`openmsd.eval.ranks`' business. :func:`per_query` applies AP and nDCG@10 to a
table of ranks (the SDSM tasks and pools); :mod:`~openmsd.eval.metrics.significance` holds the
t-tests (scipy). pytrec_eval and ranx are the tests' oracles.
"""

from openmsd.eval.metrics.average_precision import average_precision
from openmsd.eval.metrics.hit_rate import hit_rate
from openmsd.eval.metrics.ndcg import ndcg
from openmsd.eval.metrics.recall import recall
from openmsd.eval.metrics.reciprocal_rank import reciprocal_rank
from openmsd.eval.metrics.rows import rank_rows
from openmsd.eval.metrics.significance import confidence_half_width, paired_t_test
from openmsd.eval.metrics.table import per_query

__all__ = ["average_precision", "confidence_half_width", "hit_rate", "ndcg", "paired_t_test",
           "per_query", "rank_rows", "recall", "reciprocal_rank"]
