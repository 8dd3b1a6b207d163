"""Which extra positives and which negatives a training example gets (MP-BERT4CR §4.1.3–4.1.4).

* :class:`PositiveSampler`: extra positives of a target paper t, drawn without replacement from
  the papers co-cited with t, with probability ∝ frequency(t, p)^power (equation 1).
* :class:`NegativeSampler`: negatives drawn from the papers not cited by the context, with
  probability ∝ (citation count + smoothing)^power (equation 2; ``smoothing`` = 1 lets papers
  never cited in training be drawn too, since they are candidates at test time).

The counts come from the training citations only (:func:`cocitation_counts`,
:func:`citation_counts`), so held-out citing papers never shape the samples. ``power`` is
word2vec's 3/4 by default (the paper's value is lost in our copy; it cites word2vec's noise
distribution).

>>> import random
>>> s = PositiveSampler({("a", "b"): 9, ("a", "c"): 1})
>>> s.sample("a", 1, random.Random(1))
['b']
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping

import numpy as np

POWER = 0.75
POSITIVES = 3
NEGATIVES = 4


def cocitation_counts(cited_sets: Iterable[Collection[str]]) -> dict[tuple[str, str], int]:
    """``{(a, b): n}`` (a < b): in how many reference lists ``a`` and ``b`` appear together;
    ``cited_sets``: the papers cited by each citing paper."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for cited in cited_sets:
        ordered = sorted(set(cited))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                counts[(a, b)] += 1
    return dict(counts)


def citation_counts(cited_sets: Iterable[Collection[str]]) -> dict[str, int]:
    """``{paper: number of citing papers citing it}``."""
    counts: dict[str, int] = defaultdict(int)
    for cited in cited_sets:
        for paper in set(cited):
            counts[paper] += 1
    return dict(counts)


def _draw(items: list[str], weights: np.ndarray, n: int, rng: random.Random) -> list[str]:
    """``n`` distinct items drawn without replacement ∝ ``weights`` (fewer when fewer have a
    positive weight), by sequential weighted draws with ``rng``."""
    weights = weights.astype(np.float64).copy()
    chosen = []
    for _ in range(min(n, int(np.count_nonzero(weights > 0)))):
        cumulative = np.cumsum(weights)
        i = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        i = min(i, len(items) - 1)
        chosen.append(items[i])
        weights[i] = 0.0
    return chosen


class PositiveSampler:
    """Extra positives from a target's historical co-citations, ∝ frequency^power."""

    def __init__(self, cocitations: Mapping[tuple[str, str], int], power: float = POWER):
        partners: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for (a, b), n in cocitations.items():
            partners[a].append((b, n))
            partners[b].append((a, n))
        self.partners = {p: ([q for q, _ in sorted(v)],
                             np.array([n for _, n in sorted(v)], np.float64) ** power)
                         for p, v in partners.items()}

    def sample(self, target: str, n: int, rng: random.Random,
               exclude: Collection[str] = ()) -> list[str]:
        """Up to ``n`` papers co-cited with ``target`` (none in ``exclude``)."""
        if target not in self.partners or n <= 0:
            return []
        items, weights = self.partners[target]
        weights = np.where([i in exclude for i in items], 0.0, weights)
        return _draw(items, weights, n, rng)


class NegativeSampler:
    """Negatives from all candidate papers, ∝ (citation count + smoothing)^power."""

    def __init__(self, candidates: list[str], counts: Mapping[str, int], power: float = POWER,
                 smoothing: float = 1.0):
        if not candidates:
            raise ValueError("negatives: no candidate papers to draw from")
        self.candidates = list(candidates)
        self.weights = (np.array([counts.get(p, 0) for p in self.candidates], np.float64)
                        + smoothing) ** power
        self.cumulative = np.cumsum(self.weights)

    def sample(self, n: int, rng: random.Random, exclude: Collection[str] = ()) -> list[str]:
        """``n`` distinct papers not in ``exclude`` (rejection sampling; fewer only when the
        candidates run out)."""
        chosen: list[str] = []
        available = len(set(self.candidates) - set(exclude))
        tries = 0
        while len(chosen) < min(n, available) and tries < 100 * (n + 1):
            tries += 1
            i = int(np.searchsorted(self.cumulative, rng.random() * self.cumulative[-1],
                                    side="right"))
            paper = self.candidates[min(i, len(self.candidates) - 1)]
            if paper not in exclude and paper not in chosen:
                chosen.append(paper)
        return chosen
