"""Records that are not papers (errata, retraction notices, editorials, paratext, book reviews,
stubs: :mod:`openmsd.corpus.kinds`) are left out of a ranking by default: ``related``,
``search``, ``watch`` and ``recommend`` rank as they would, then skip them and say how many
they skipped.

:func:`papers_first` takes a ranking as a function of its depth (``rank(n)``: the ``n`` first
hits) and asks it for ``k`` hits, then for more where non-papers took some of their places,
so that ``k`` papers are found when the ranking holds them. What it left out is counted by kind,
among the hits ranked above the last paper kept: the records a reader would have seen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

__all__ = ["left_out_line", "papers_first"]

T = TypeVar("T")
#: At least this many more hits than asked for are ranked again where non-papers took places.
NON_PAPER_SLACK = 10


def papers_first(rank: Callable[[int], Sequence[T]], k: int, kinds: Mapping[str, str],
                 id_of: Callable[[T], str]) -> tuple[list[T], Counter[str]]:
    """The first ``k`` hits of ``rank`` that are papers (``kinds``: each non-paper's id ->
    its kind; ``id_of(hit)``: a hit's paper id), and the non-papers ranked above the last of
    them, counted by kind. ``rank(n)`` is asked for ``k`` (where no non-paper is among them,
    the answer is the ranking's own), then, while it returns all it was asked for and too
    few papers, for more: twice as many, at least ``k`` plus :data:`NON_PAPER_SLACK`, at most
    ``k`` plus every non-paper (then ``k`` papers are always among them).

    >>> hits = [("e1", .9), ("p1", .8), ("s1", .7), ("p2", .6), ("p3", .5)]
    >>> papers_first(lambda n: hits[:n], 2, {"e1": "erratum", "s1": "stub"},
    ...              lambda h: h[0])
    ([('p1', 0.8), ('p2', 0.6)], Counter({'erratum': 1, 'stub': 1}))
    """
    if not kinds:
        return list(rank(k)), Counter()
    most = k + len(kinds)
    n = k
    while True:
        hits = rank(n)
        kept: list[T] = []
        left: Counter[str] = Counter()
        for hit in hits:
            if len(kept) == k:
                break
            kind = kinds.get(id_of(hit))
            if kind is None:
                kept.append(hit)
            else:
                left[kind] += 1
        if len(kept) == k or len(hits) < n or n >= most:
            return kept, left
        n = min(most, max(2 * n, k + NON_PAPER_SLACK))


def left_out_line(left: Mapping[str, int], flag: str | None = "--include-non-papers"
                  ) -> str | None:
    """One line saying what was left out (None when nothing was), naming ``flag``, the way to
    include them (None: not named).

    >>> left_out_line({"erratum": 2, "stub": 1})
    '3 records that are not papers left out (2 errata, 1 stub); --include-non-papers shows them'
    >>> left_out_line({"editorial": 1}, None)
    '1 record that is not a paper left out (1 editorial)'
    """
    total = sum(left.values())
    if not total:
        return None
    parts = ", ".join(f"{n} {_plural(kind, n)}" for kind, n in sorted(
        left.items(), key=lambda item: (-item[1], item[0])) if n)
    records = "record that is not a paper" if total == 1 else "records that are not papers"
    line = f"{total} {records} left out ({parts})"
    return f"{line}; {flag} shows them" if flag else line


#: How a kind is named: (one, several).
_NAMES = {"erratum": ("erratum", "errata"), "retraction": ("retraction notice",
                                                          "retraction notices"),
          "editorial": ("editorial", "editorials"), "paratext": ("paratext", "paratext"),
          "book-review": ("book review", "book reviews"), "stub": ("stub", "stubs")}


def _plural(kind: str, n: int) -> str:
    one, several = _NAMES.get(kind, (kind, f"{kind}s"))
    return one if n == 1 else several
