"""Why a result ranked, in words: the text signals that put it among a query's first results
(each scorer says its own: ``Scorer.words``, a contribution's ``detail``), its citation links to
the query paper, and the dense models a ranker is made of."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from openmsd.rank.dense import DenseScorer
from openmsd.rank.fusion import Contribution
from openmsd.rank.scorer import Scorer
from openmsd.rank.spec import RankerSpec

__all__ = ["SIGNAL_WORDS", "VOICE", "capped", "dense_members", "link_words", "member_words",
           "signals", "why"]

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
    (:func:`link_words`), whose in-corpus shared references give way to
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


def link_words(cites: bool, cited_by: bool, shared: int, co_cited: int) -> list[str]:
    """A result's citation links to the query paper, in words.

    >>> link_words(False, True, 2, 1)
    ['cites the query paper', '2 shared references', 'co-cited 1 time']
    """
    words = []
    if cites:
        words.append("cited by the query paper")
    if cited_by:
        words.append("cites the query paper")
    if shared:
        words.append(f"{shared} shared reference{'s' if shared > 1 else ''}")
    if co_cited:
        words.append(f"co-cited {co_cited} time{'s' if co_cited > 1 else ''}")
    return words
