"""Related-paper pairs from the citation graph, as Ibis expressions (any engine runs them).

* DC, direct citation: ``citing_id -> cited_id``, directed.
* CC, co-citation: unordered pairs cited together by at least one paper; ``count`` = the number
  of co-citing papers.
* BC, bibliographic coupling: unordered pairs sharing at least one reference; ``count`` = the
  number of shared references.

CC and BC pairs are canonical (``paper_a < paper_b``). A paper citing m others yields m(m-1)/2
co-citation pairs, so with ``max_group`` each group (a citing paper's references for CC, a cited
paper's citers for BC) is first cut to ``max_group`` members chosen by a seeded hash, the same on
every engine; without it the counts are exact.

>>> import ibis, pyarrow as pa
>>> links = ibis.memtable(pa.table({"citing_id": ["c", "c", "d"], "cited_id": ["a", "b", "a"]}))
>>> ibis.duckdb.connect().to_pyarrow(co_citations(links)).to_pylist()
[{'paper_a': 'a', 'paper_b': 'b', 'count': 1}]
"""

from __future__ import annotations

import ibis
from ibis import _

PAIR_COLUMNS = ("paper_a", "paper_b", "count")


def seeded_hash(value: ibis.Value, *salt: ibis.Value | str) -> ibis.StringValue:
    """An md5 hex digest of ``value`` and ``salt``: a deterministic, engine-independent order."""
    text = value.cast("string")
    for part in salt:
        text = text + "|" + (part if isinstance(part, str) else part.cast("string"))
    return text.hexdigest("md5")


def citation_problems(citations: ibis.Table, papers: ibis.Table) -> ibis.Table:
    """One row counting what the relations leave out of ``citations``: self-citations,
    duplicate rows, and links whose citing or cited paper is not in ``papers``."""
    ids = papers.select(paper_id=_.paper_id).distinct()
    citing_known = citations.citing_id.isin(ids.paper_id)
    cited_known = citations.cited_id.isin(ids.paper_id)
    distinct = citations.select("citing_id", "cited_id").distinct().count()
    return citations.aggregate(
        rows=_.count(),
        self_citations=(_.citing_id == _.cited_id).sum().fill_null(0),
        unknown_citing=(~citing_known).sum().fill_null(0),
        unknown_cited=(~cited_known).sum().fill_null(0),
    ).mutate(duplicates=_.rows - distinct)


def direct_citations(citations: ibis.Table, papers: ibis.Table) -> ibis.Table:
    """DC: distinct ``citing_id -> cited_id`` links between two different corpus papers."""
    ids = papers.select(paper_id=_.paper_id).distinct()
    return (citations.select("citing_id", "cited_id")
            .filter(_.citing_id != _.cited_id, _.citing_id.isin(ids.paper_id),
                    _.cited_id.isin(ids.paper_id))
            .distinct())


def _co_occurrences(links: ibis.Table, group: str, member: str, max_group: int | None,
                    seed: int) -> ibis.Table:
    members = links.select(group=links[group], member=links[member])
    if max_group is not None:
        order = seeded_hash(_.member, _.group, str(seed))
        window = ibis.window(group_by=_.group, order_by=[order, _.member])
        members = (members.mutate(rank=ibis.row_number().over(window))
                   .filter(_.rank < max_group).drop("rank"))
    left = members.select(group=_.group, paper_a=_.member)
    right = members.select(group_b=_.group, paper_b=_.member)
    pairs = left.join(right, [left.group == right.group_b, left.paper_a < right.paper_b])
    return pairs.group_by(["paper_a", "paper_b"]).aggregate(count=_.count())


def capped_groups(dc: ibis.Table, group: str, max_group: int) -> ibis.Table:
    """One row saying what a ``max_group`` cap leaves out of the groups of ``dc`` formed by
    column ``group`` (``citing_id``: each paper's references, for CC; ``cited_id``: each
    paper's citers, for BC): ``groups`` over the cap, ``left_out`` members, ``largest`` group."""
    sizes = dc.group_by(group).aggregate(n=_.count()).filter(_.n > max_group)
    return sizes.aggregate(groups=_.count(), left_out=(_.n - max_group).sum().fill_null(0),
                           largest=_.n.max().fill_null(0))


def co_citations(dc: ibis.Table, max_group: int | None = None, seed: int = 0) -> ibis.Table:
    """CC: pairs of papers cited by the same paper, with the number of co-citing papers."""
    return _co_occurrences(dc, "citing_id", "cited_id", max_group, seed)


def bib_coupling(dc: ibis.Table, max_group: int | None = None, seed: int = 0) -> ibis.Table:
    """BC: pairs of papers citing the same paper, with the number of shared references."""
    return _co_occurrences(dc, "cited_id", "citing_id", max_group, seed)


def canonical(dc: ibis.Table) -> ibis.Table:
    """DC links as unordered canonical pairs (``paper_a < paper_b``), ``count`` 1 or 2 (both
    directions cite each other)."""
    a = ibis.least(_.citing_id, _.cited_id)
    b = ibis.greatest(_.citing_id, _.cited_id)
    return (dc.select(paper_a=a, paper_b=b)
            .group_by(["paper_a", "paper_b"]).aggregate(count=_.count()))
