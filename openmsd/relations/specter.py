"""Specter's training triples from direct citations, as Ibis expressions.

Following ``allenai/specter`` (``data_utils/triplet_sampling.py``, defaults of
``create_training_files.py``): a query A's candidates are the papers it cites (count 5) and the
papers those cite that A does not (count 1). With ``margin_fraction`` 0.5 the margin is 2, so
positives are A's citations and *hard* negatives its citations' citations; each query gets
``samples_per_query`` (5) triples, ``ceil(ratio_hard * samples_per_query)`` (2) of them with a
hard negative (fewer when positives × hard candidates is smaller), the rest with an *easy*
negative: a random paper of the pool that is neither A nor one of its candidates. As in Specter,
a query needs at least one hard candidate (a spread of counts) to get triples.

Randomness is a seeded md5 order, so DuckDB and Spark give the same triples; easy negatives are
drawn by index arithmetic over papers numbered in hash order, so no query × pool product is built.
"""

from __future__ import annotations

import math

import ibis
from ibis import _

from openmsd.relations.pairs import seeded_hash

TRIPLE_COLUMNS = ("query_id", "positive_id", "negative_id", "kind")


def specter_triples(dc: ibis.Table, pool: ibis.Table, *, samples_per_query: int = 5,
                    ratio_hard: float = 0.3, seed: int = 0) -> ibis.Table:
    """Triples ``query_id``, ``positive_id``, ``negative_id``, ``kind`` (``hard``/``easy``).

    ``dc``: ``citing_id``, ``cited_id`` links of one split; ``pool``: its ``paper_id`` column
    lists the papers easy negatives are drawn from.
    """
    n_hard = math.ceil(ratio_hard * samples_per_query)
    s = str(seed)
    positives = dc.select(query_id=_.citing_id, positive_id=_.cited_id)
    second = dc.select(via=_.citing_id, negative_id=_.cited_id)
    hard = (positives.join(second, positives.positive_id == second.via)
            .select("query_id", "negative_id")
            .filter(_.query_id != _.negative_id).distinct())
    hard = hard.anti_join(positives, [hard.query_id == positives.query_id,
                                      hard.negative_id == positives.positive_id])
    n_pos = positives.group_by("query_id").aggregate(n_pos=_.count())
    n_neg = hard.group_by("query_id").aggregate(n_neg=_.count())
    queries = n_pos.join(n_neg, "query_id").mutate(
        n_hard=ibis.least(ibis.literal(n_hard), _.n_pos * _.n_neg))
    ranked_pos = positives.mutate(pos_rank=ibis.row_number().over(
        group_by=_.query_id, order_by=[seeded_hash(_.positive_id, _.query_id, s, "p"),
                                       _.positive_id]))
    ranked_neg = hard.mutate(slot=ibis.row_number().over(
        group_by=_.query_id, order_by=[seeded_hash(_.negative_id, _.query_id, s, "n"),
                                       _.negative_id]))
    # Slots 0..n_hard-1 take hard negatives (cycling through them when there are few), each
    # paired with a positive; slots n_hard..samples_per_query-1 take easy negatives.
    slots = ibis.memtable({"slot": list(range(samples_per_query))})
    plan = queries.cross_join(slots).mutate(
        pos_rank=_.slot % _.n_pos, neg_rank=_.slot % _.n_neg,
        kind=ibis.ifelse(_.slot < _.n_hard, "hard", "easy"))
    hard_plan = plan.filter(_.kind == "hard")
    negatives = ranked_neg.select(q=_.query_id, neg_rank=_.slot, negative_id=_.negative_id)
    hard_rows = hard_plan.join(negatives, [hard_plan.query_id == negatives.q, "neg_rank"])
    hard_rows = _with_positive(hard_rows, ranked_pos)

    numbered = pool.select("paper_id").distinct().mutate(
        index=ibis.row_number().over(order_by=[seeded_hash(_.paper_id, s, "pool"), _.paper_id]))
    size = numbered.count()
    query_index = numbered.select(q=_.paper_id, q_index=_.index)
    easy_plan = plan.filter(_.kind == "easy")
    easy = (easy_plan.join(query_index, easy_plan.query_id == query_index.q, how="left")
            .mutate(index=(_.q_index.fill_null(0) * 7919 + _.slot * 104729 + 1) % size)
            .drop("q", "q_index"))
    easy = easy.join(numbered.select(index=_.index, negative_id=_.paper_id), "index")
    candidates = positives.select(query_id=_.query_id, cand=_.positive_id).union(
        hard.select(query_id=_.query_id, cand=_.negative_id))
    easy = easy.anti_join(candidates, [easy.query_id == candidates.query_id,
                                       easy.negative_id == candidates.cand])
    easy = easy.filter(_.negative_id != _.query_id)
    easy_rows = _with_positive(easy, ranked_pos)
    columns = list(TRIPLE_COLUMNS)
    return ibis.union(hard_rows.select(*columns), easy_rows.select(*columns))


def _with_positive(rows: ibis.Table, ranked_pos: ibis.Table) -> ibis.Table:
    positives = ranked_pos.select(q2=_.query_id, pos_rank=_.pos_rank, positive_id=_.positive_id)
    return rows.join(positives, [rows.query_id == positives.q2, "pos_rank"])
