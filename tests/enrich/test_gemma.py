"""The local Gemma-3-270M (slow: builds the model on first use, then ~1-8 tokens/s on CPU)."""

from __future__ import annotations

import pytest

from openmsd.corpus.store import Corpus
from openmsd.corpus.summaries import read_summaries
from openmsd.enrich.run import enrich

pytestmark = pytest.mark.slow


def test_gemma_summarises_french_in_english(corpus_dir):
    from openmsd.enrich.gemma import LocalGemma

    corpus = Corpus(corpus_dir)
    result = enrich(corpus, "llm", 64, LocalGemma(), attempts=2)
    assert result.enriched + result.failed == 3 and result.no_abstract == 1
    assert result.enriched >= 2 and result.tokens_per_s > 0
    for row in read_summaries(corpus, "llm", 64).to_pylist():
        assert row["source"] == "gemma3-270m" and 0 < row["tokens"] <= 64
