"""Dynamic context sampling and the positive / negative samplers."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from openmsd.models.citrec.context import manuscript_context, paper_context, pick
from openmsd.train.citrec.samplers import (
    NegativeSampler,
    PositiveSampler,
    citation_counts,
    cocitation_counts,
)

SENTENCES = [f"s{i}" for i in range(40)]


def test_manuscript_context_is_fundamental_plus_finished_content() -> None:
    context = manuscript_context(SENTENCES, at=30, supplemental=5, rng=random.Random(1))
    assert context[-3:] == ["s29", "s30", "s31"]
    earlier = [int(s[1:]) for s in context[:-3]]
    assert len(earlier) == 5 and earlier == sorted(earlier) and max(earlier) < 29
    # seeded: the same draw again; another seed, (almost surely) another draw
    assert context == manuscript_context(SENTENCES, 30, 5, random.Random(1))
    assert context != manuscript_context(SENTENCES, 30, 5, random.Random(2))
    # inference: deterministic and spread over the finished content
    assert manuscript_context(SENTENCES, 30, 4) == ["s0", "s7", "s14", "s21", "s29", "s30",
                                                    "s31"]
    assert manuscript_context(SENTENCES, 0, 27) == ["s0", "s1"]
    with pytest.raises(IndexError):
        manuscript_context(SENTENCES, 40)


def test_paper_context_takes_abstract_then_body() -> None:
    abstract = [f"a{i}" for i in range(12)]
    context = paper_context(abstract, SENTENCES, 10, 30, random.Random(0))
    assert context[:10] == abstract[:10] and len(context) == 40
    assert paper_context(abstract[:2], [], 10, 30) == ["a0", "a1"]
    assert pick(SENTENCES, 0) == []


def test_counts() -> None:
    lists = [{"a", "b", "c"}, {"a", "b"}, {"c"}]
    assert cocitation_counts(lists) == {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1}
    assert citation_counts(lists) == {"a": 2, "b": 2, "c": 2}


def test_positive_sampler_follows_frequency_to_the_power() -> None:
    sampler = PositiveSampler({("t", "x"): 16, ("t", "y"): 1, ("u", "v"): 5}, power=0.5)
    rng = random.Random(0)
    first = Counter(sampler.sample("t", 1, rng)[0] for _ in range(5000))
    assert set(first) == {"x", "y"}
    assert first["x"] / 5000 == pytest.approx(4 / 5, abs=0.03)  # 16^0.5 : 1^0.5
    assert sorted(sampler.sample("t", 3, rng)) == ["x", "y"]  # no more than there are
    assert sampler.sample("t", 2, rng, exclude={"x"}) == ["y"]
    assert sampler.sample("nobody", 3, rng) == []


def test_negative_sampler_follows_citation_counts_and_excludes() -> None:
    sampler = NegativeSampler(["a", "b", "c"], {"a": 7, "b": 0}, power=1.0, smoothing=1.0)
    rng = random.Random(0)
    drawn = Counter(sampler.sample(1, rng)[0] for _ in range(5000))
    assert drawn["a"] / 5000 == pytest.approx(8 / 10, abs=0.03)  # (7+1) : (0+1) : (0+1)
    for _ in range(50):
        chosen = sampler.sample(2, rng, exclude={"a"})
        assert sorted(chosen) == ["b", "c"]
    assert sampler.sample(5, rng) and len(sampler.sample(5, rng)) == 3
    with pytest.raises(ValueError, match="no candidate"):
        NegativeSampler([], {})
