"""What a result's rankers say of it: the text signals that put it among a query's first
results, in words, and the dense models a ranker is made of."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from openmsd.rank import Contribution, DenseScorer, RankerSpec, Scorer

__all__ = ["SIGNAL_WORDS", "VOICE", "capped", "dense_members", "member_words", "signals", "why"]

#: A member's rank among a query's candidates at or under which it "put the result there".
VOICE = 10
SIGNAL_WORDS = {"bm25": "shared words", "bm25-en": "shared English words"}


def dense_members(scorer: Scorer) -> list[DenseScorer]:
    """The dense scorers a ranker is made of (itself, a fusion's members, the scorer inside a
    ``NAME@LANG``)."""
    if isinstance(scorer, DenseScorer):
        return [scorer]
    inner = list(getattr(scorer, "members", [])) or [getattr(scorer, "inner", None)]
    return [d for m in inner if m is not None for d in dense_members(m)]


def member_words(scorer: Scorer) -> dict[str, str]:
    """What a fusion's members say of a result they rank high, where it is not the plain
    "similar text" (an adapter says it learned from the corpus's citations)."""
    return {m.name: m.words for m in getattr(scorer, "members", ())
            if getattr(m, "words", "similar text") != "similar text"}


def signals(contributions: Sequence[Contribution],
            words_of: Mapping[str, str] | None = None) -> list[str]:
    """The text signals that ranked a result among a query's first :data:`VOICE`, and what
    the members that say it in words saw ("3 shared references, 2 outside the corpus");
    ``words_of``: a member's own words (:func:`member_words`)."""
    out = []
    for c in contributions:
        if c.detail:
            words = c.detail
        elif c.signal != "text" or c.rank is None or c.rank > VOICE:
            continue
        else:
            words = (words_of or {}).get(c.member) or SIGNAL_WORDS.get(
                RankerSpec.parse(c.member).model, "similar text")
        if words not in out:
            out.append(words)
    return out


def why(said: Sequence[str], linked: Sequence[str]) -> list[str]:
    """A result's reasons: the members' ``said`` (:func:`signals`), then its citation links
    (:func:`openmsd.search.related.explain`), whose in-corpus shared references give way to
    a member's count through every reference.

    >>> why(["similar text", "3 shared references, 2 outside the corpus"],
    ...     ["1 shared reference", "co-cited 2 times"])
    ['similar text', '3 shared references, 2 outside the corpus', 'co-cited 2 times']
    """
    counted = any("shared reference" in s for s in said)
    return [*said, *(w for w in linked if not (counted and "shared reference" in w))]


def capped(k: int, papers: int) -> int:
    """``k`` no larger than the corpus (``papers``): a ``-k`` of 10^20 ranks every paper once,
    never allocates ``k`` slots per query.

    >>> capped(99999999999999999999, 2100), capped(5, 2100), capped(5, 0)
    (2100, 5, 1)
    """
    return max(1, min(k, papers))
