"""The OpenMSD split: train, dev, in-distribution test (IDT), out-of-distribution test (ODT).

As OpenMSD §3 describes it, on papers with at least one citation link:

1. the ``top_languages`` most frequent languages are the in-distribution ones; papers in any
   other language (or with none, ``und``) go to ODT;
2. non-English papers of in-distribution languages go to ODT with probability ``odt``, IDT with
   ``idt``, dev with ``dev``, train otherwise; English papers to IDT, dev or train only;
3. English papers are in ODT only when they cite or are cited by a non-English ODT paper (they
   move there from wherever step 2 put them, so ODT pairs involve non-English papers);
4. IDT papers of a language absent from train move to ODT, so train and IDT share languages.

Draws are ``md5(paper_id | seed)`` compared as hex strings, the same on DuckDB and Spark. Pairs
whose papers fall in different splits are dropped (:func:`pairs_in_splits`), and so are
English–English pairs of the splits named in ``drop_en_en`` (ODT in the paper, whose IDT keeps
them: Table 3 lists 229K En→En DC pairs in IDT).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import ibis
from ibis import _

from openmsd.relations.pairs import seeded_hash

SPLITS = ("train", "dev", "idt", "odt")


@dataclass(frozen=True)
class SplitConfig:
    """Parameters of the split; small corpora want a small ``top_languages`` and larger ratios."""

    top_languages: int = 30
    idt: float = 0.1
    odt: float = 0.1
    dev: float = 0.05
    seed: int = 0
    drop_en_en: tuple[str, ...] = ("odt",)

    def __post_init__(self) -> None:
        if self.top_languages < 1:
            raise ValueError("top_languages: expected at least 1")
        for name in ("idt", "odt", "dev"):
            if not 0 <= getattr(self, name) < 1:
                raise ValueError(f"{name}: expected a ratio in [0, 1)")
        if self.idt + self.odt + self.dev >= 1:
            raise ValueError("idt + odt + dev: expected less than 1, leaving papers for train")
        unknown = set(self.drop_en_en) - set(SPLITS)
        if unknown:
            raise ValueError(f"drop_en_en: unknown splits {sorted(unknown)}; expected {SPLITS}")

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "drop_en_en": list(self.drop_en_en)}


def _below(draw: ibis.StringValue, ratio: float) -> ibis.BooleanValue:
    """``draw`` (hex digits of a uniform hash) is in the lowest ``ratio`` of its range."""
    return draw.substr(0, 8) < f"{round(ratio * 16**8):08x}"


def assign_splits(papers: ibis.Table, dc: ibis.Table, config: SplitConfig) -> ibis.Table:
    """``paper_id``, ``language``, ``split`` for every paper with a citation link in ``dc``."""
    linked = (dc.select(paper_id=_.citing_id)
              .union(dc.select(paper_id=_.cited_id), distinct=True))
    base = (papers.select(paper_id=_.paper_id, language=_.language.fill_null("und"))
            .join(linked, "paper_id"))
    ranked = (base.group_by("language").aggregate(n=_.count())
              .mutate(rank=ibis.row_number().over(order_by=[ibis.desc(_.n), _.language])))
    top = ranked.filter(_.rank < config.top_languages).select(top_language=_.language)
    draw = seeded_hash(_.paper_id, str(config.seed))
    c = config
    english = ibis.cases((_below(_.draw, c.idt), "idt"), (_below(_.draw, c.idt + c.dev), "dev"),
                         else_="train")
    other = ibis.cases((_below(_.draw, c.odt), "odt"), (_below(_.draw, c.odt + c.idt), "idt"),
                       (_below(_.draw, c.odt + c.idt + c.dev), "dev"), else_="train")
    first = (base.left_join(top, base.language == top.top_language)
             .mutate(draw=draw)
             .mutate(split=ibis.cases((_.top_language.isnull(), "odt"),
                                      (_.language == "en", english), else_=other))
             .select("paper_id", "language", "split"))
    # 3. English papers linked to a non-English ODT paper move to ODT.
    odt_foreign = first.filter(_.split == "odt", _.language != "en").select(other_id=_.paper_id)
    neighbours = (dc.join(odt_foreign, dc.cited_id == odt_foreign.other_id)
                  .select(paper_id=_.citing_id)
                  .union(dc.join(odt_foreign, dc.citing_id == odt_foreign.other_id)
                         .select(paper_id=_.cited_id), distinct=True)
                  .mutate(odt_neighbour=True))
    second = (first.left_join(neighbours, "paper_id")
              .mutate(split=ibis.cases(
                  ((_.language == "en") & _.odt_neighbour.notnull(), "odt"),
                  ((_.language == "en") & (_.split == "odt"), "train"),
                  else_=_.split))
              .select("paper_id", "language", "split"))
    # 4. IDT languages must be train languages.
    trained = second.filter(_.split == "train").select(trained=_.language).distinct()
    return (second.left_join(trained, second.language == trained.trained)
            .mutate(split=ibis.ifelse((_.split == "idt") & _.trained.isnull(), "odt", _.split))
            .select("paper_id", "language", "split"))


def pairs_in_splits(pairs: ibis.Table, splits: ibis.Table, a: str, b: str,
                    drop_en_en: tuple[str, ...] = ("odt",)) -> ibis.Table:
    """``pairs`` whose two papers (columns ``a``, ``b``) are in the same split, with ``split``
    and each paper's language (``language_a``, ``language_b``); English–English pairs of the
    splits in ``drop_en_en`` removed."""
    left = splits.select(id_a=_.paper_id, language_a=_.language, split=_.split)
    # The second paper is looked up by one key, its split and its id: with two keys
    # (``split == split_b`` beside ``b == id_b``) a join planner may pair the two copies of
    # ``splits`` on their split first, a product of the papers of each split (at 30,000
    # papers in one split, 9 x 10^8 rows). Split names hold no "|", so the key is exact.
    right = splits.select(key_b=_.split.concat("|", _.paper_id), language_b=_.language)
    first = pairs.join(left, pairs[a] == left.id_a)
    joined = first.join(right, first.split.concat("|", first[b]) == right.key_b)
    if drop_en_en:
        en_en = (_.language_a == "en") & (_.language_b == "en")
        joined = joined.filter(~(en_en & _.split.isin(list(drop_en_en))))
    return joined.drop("id_a", "key_b")
