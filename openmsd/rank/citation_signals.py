"""The rankers whose scores a citation reranker reads as features of a candidate: on the
location's own sentence (:data:`SENTENCE_SIGNALS`) and on its fundamental context
(:data:`CONTEXT_SIGNALS`). ``recommend`` scores them at answer time and the citation
evaluation at training and test time, so they live below both."""

from __future__ import annotations

from openmsd.models import DEFAULT_MODEL
from openmsd.rank.load import ENGLISH_MODEL as ENGLISH_ONLY

__all__ = ["CONTEXT_SIGNALS", "ENGLISH_PAIRS", "SENTENCE_SIGNALS"]

ENGLISH_PAIRS = f"{ENGLISH_ONLY}@en"
"""The English-only model, heard only where the location's text and the candidate are both
English (``-inf`` elsewhere: the rerank fusion reads such a pair as neutral, z-score 0)."""
SENTENCE_SIGNALS = {"sentence_bm25": "bm25", "sentence_dense": DEFAULT_MODEL,
                    "sentence_en": ENGLISH_PAIRS}
"""The rerank stage's own-sentence features and the rankers that score them (the prefetch's
BM25 and dense members and, on English pairs, the English-only model, on the
location's sentence alone)."""
CONTEXT_SIGNALS = {"fundamental_en": ENGLISH_PAIRS}
"""The rerank stage's features of the location's fundamental context (the prefetch's query)
and their rankers: the English-only model on English pairs."""
