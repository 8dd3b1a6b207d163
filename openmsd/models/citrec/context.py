"""Dynamic context sampling (MP-BERT4CR §4.1.1): which sentences stand for a citing location
and for a cited paper.

* A citing location: the *fundamental* context (the sentence with the citation, the one before,
  the one after) and a *supplemental* context of sentences drawn from the finished content
  before it (defaults 3 + 27).
* A cited paper: its title and abstract sentences (fundamental, default 10) and sentences drawn
  from its body when the full text is known (supplemental, default 30).

With a seeded ``random.Random`` the supplemental sentences are a uniform sample (training: a new
draw each time a location or paper is seen); without one (inference) they are spread evenly over
the content, so the same text always gives the same context. Chosen sentences keep their order.

>>> manuscript_context(["a", "b", "c", "d", "e", "f"], at=4, supplemental=2)
['a', 'b', 'd', 'e', 'f']
>>> paper_context(["T", "A1"], ["b1", "b2", "b3", "b4"], fundamental=2, supplemental=2)
['T', 'A1', 'b1', 'b3']
"""

from __future__ import annotations

import random
from collections.abc import Sequence

MANUSCRIPT_SUPPLEMENTAL = 27
CITATION_FUNDAMENTAL = 10
CITATION_SUPPLEMENTAL = 30


def pick(items: Sequence[str], n: int, rng: random.Random | None = None) -> list[str]:
    """``n`` of ``items`` in their order: a uniform sample with ``rng``, else evenly spread;
    all of them when there are no more than ``n``."""
    if n <= 0:
        return []
    if len(items) <= n:
        return list(items)
    if rng is None:
        chosen = [int(i * len(items) / n) for i in range(n)]
    else:
        chosen = sorted(rng.sample(range(len(items)), n))
    return [items[i] for i in chosen]


def fundamental(sentences: Sequence[str], at: int) -> list[str]:
    """The sentence ``at`` with the one before and the one after (where they exist)."""
    if not 0 <= at < len(sentences):
        raise IndexError(f"sentence {at} is not in a text of {len(sentences)} sentences")
    return list(sentences[max(0, at - 1):at + 2])


def manuscript_context(sentences: Sequence[str], at: int,
                       supplemental: int = MANUSCRIPT_SUPPLEMENTAL,
                       rng: random.Random | None = None) -> list[str]:
    """The context of the citing location at sentence ``at``: ``supplemental`` sentences of
    the finished content before the fundamental context, then the fundamental context."""
    return pick(sentences[:max(0, at - 1)], supplemental, rng) + fundamental(sentences, at)


def finished_content(sentences: Sequence[str], at: int) -> list[str]:
    """The manuscript's finished content before the fundamental context of the location at
    sentence ``at`` (all of it, in order); the fundamental context itself when nothing comes
    before it. What the rerank stage reads of the manuscript as a whole.

    >>> finished_content(["a", "b", "c", "d"], at=3)
    ['a', 'b']
    >>> finished_content(["a", "b"], at=0)
    ['a', 'b']
    """
    return list(sentences[:max(0, at - 1)]) or fundamental(sentences, at)


def paper_context(abstract_sentences: Sequence[str], body_sentences: Sequence[str] = (),
                  fundamental: int = CITATION_FUNDAMENTAL,
                  supplemental: int = CITATION_SUPPLEMENTAL,
                  rng: random.Random | None = None) -> list[str]:
    """The context of a cited paper: its first ``fundamental`` title/abstract sentences, then
    ``supplemental`` sentences of its body."""
    return list(abstract_sentences[:fundamental]) + pick(body_sentences, supplemental, rng)
