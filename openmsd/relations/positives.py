"""Positive sets for training (OpenMSD §5): one relation, a union, or an intersection.

A set is named by its relations joined with ``-or-`` (union) or ``-and-`` (intersection):
``dc``, ``cc``, ``bc``, ``dc-or-cc``, ``dc-or-cc-or-bc``, ``dc-and-cc``, ... Pairs are canonical
(``paper_a < paper_b``; DC links in either direction count once). In a union the larger
relations are down-sampled (by a seeded hash) to the size of the smallest, as the paper does;
an intersection keeps the pairs present in every relation named.
"""

from __future__ import annotations

import itertools

import ibis
from ibis import _

from openmsd.relations.pairs import seeded_hash

RELATIONS = ("dc", "cc", "bc")


def positive_set_names() -> list[str]:
    """Every set: the three relations, the four unions and the four intersections."""
    names = list(RELATIONS)
    for joiner in ("-or-", "-and-"):
        for size in (2, 3):
            names += [joiner.join(c) for c in itertools.combinations(RELATIONS, size)]
    return names


def parse(name: str) -> tuple[list[str], str]:
    """``'dc-or-cc'`` -> ``(['dc', 'cc'], 'union')``; ValueError listing the valid names."""
    if name not in positive_set_names():
        raise ValueError(f"unknown positive set {name!r}: expected one of "
                         f"{', '.join(positive_set_names())}")
    if "-and-" in name:
        return name.split("-and-"), "intersection"
    return name.split("-or-"), "union"


def canonical_pairs(pairs: ibis.Table, relation: str) -> ibis.Table:
    """Distinct canonical ``paper_a``, ``paper_b`` of one relation of a split's pair table."""
    rows = pairs.filter(_.relation == relation)
    return (rows.select(paper_a=ibis.least(_.paper_a, _.paper_b),
                        paper_b=ibis.greatest(_.paper_a, _.paper_b)).distinct())


def positive_pairs(pairs: ibis.Table, name: str, seed: int = 0,
                   balanced: bool = True) -> ibis.Table:
    """The positive pairs of set ``name`` from ``pairs`` (``relation``, ``paper_a``,
    ``paper_b``, e.g. the train split's), with ``relations``: which relations gave each pair.
    ``balanced=False`` keeps every pair of a union (no down-sampling to the smallest)."""
    relations, how = parse(name)
    tables = {r: canonical_pairs(pairs, r) for r in relations}
    if how == "intersection":
        result = tables[relations[0]]
        for relation in relations[1:]:
            result = result.join(tables[relation], ["paper_a", "paper_b"])
        return result.mutate(relations=ibis.literal(name))
    smallest = (ibis.least(*[t.count() for t in tables.values()])
                if len(tables) > 1 and balanced else None)
    parts = []
    for relation, table in tables.items():
        if smallest is not None:
            order = seeded_hash(_.paper_a, _.paper_b, relation, str(seed))
            table = (table.mutate(rank=ibis.row_number().over(order_by=[order]))
                     .filter(_.rank < smallest).drop("rank"))
        parts.append(table.mutate(relation=ibis.literal(relation)))
    union = ibis.union(*parts)
    return (union.group_by(["paper_a", "paper_b"])
            .aggregate(relations=_.relation.collect().sort().join("+")))
