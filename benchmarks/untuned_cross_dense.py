"""The untuned fusions with the dense model heard again among the other languages' candidates
(``DENSE@cross``), per language direction, on dev data.

A multilingual model ranks the papers in the query's language first, so in a corpus of two
languages the untuned ``hybrid`` buries the other language's related papers
(``ranker_directions.json``). ``DENSE@cross`` is the corpus's dense model restricted to the
pairs of two languages: z-scored among the query's candidates in other languages alone (the
others have no score there, which a z-score fusion counts as the mean, 0), the best of them gets
a vote of its own. Each variant is :func:`openmsd.rank.load.default_spec` with that member at a
weight (0: left out, the untuned ``hybrid`` as it is); nothing else changes.

Scored on the bilingual views of TALN that ``ranker_directions.py`` builds
(``WORK/VARIANT/corpus``) and on plain TALN (its adapter where it has one, and e5 as in a fresh
corpus), on the dev split (the choice) and on the train split (more queries; the untuned
fusions learn nothing from it); the test splits (IDT, ODT) are not read. Per direction: MAP
(the mean over the SDSM tasks, as ``openmsd evaluate sdsm``), the queries, and a paired t-test
of per-query AP (each task's queries pooled) against the fusion without the member.

    python benchmarks/untuned_cross_dense.py WORK TALN_CORPUS [--record]

Writes ``benchmarks/results/untuned_cross_dense.json`` (:mod:`record`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from record import write_record

from openmsd.corpus import Corpus
from openmsd.eval.metrics import paired_t_test, per_query
from openmsd.eval.ranks import ScorerRows
from openmsd.eval.sdsm import (
    DIRECTIONS,
    TASKS,
    common_pool,
    hide_links,
    load_pool,
    model_ranks,
    pool_papers,
)
from openmsd.rank import HYBRID, HYBRID_GRAPH, Fusion, default_spec, load_scorer
from openmsd.rank.load import corpus_adapter, default_dense
from openmsd.rank.spec import parse

VIEWS = ("own-language-only", "with-english-abstracts")
E5 = "e5-small-multilingual:onnx-sq8"
WEIGHTS = (0.0, 0.5, 1.0)
SPLITS = ("dev", "train")
GROUPS = ("average", *DIRECTIONS)


def variant(name: str, corpus: Corpus, dense: str | None, weight: float
            ) -> tuple[list[str], list[float]]:
    """``default_spec(name)``'s members and weights with ``DENSE@cross`` at ``weight`` (0:
    without it)."""
    entry = default_spec(name, corpus, dense)
    adapter = corpus_adapter(corpus) if dense is None else None
    base = dense or (adapter.name if adapter else default_dense(corpus))
    cross = str(replace(parse(base), language="cross"))
    pairs = [(m, w) for m, w in zip(entry.members, entry.weights, strict=True) if m != cross]
    if weight:
        pairs.append((cross, weight))
    return [m for m, _ in pairs], [w for _, w in pairs]


def task_map(table: pa.Table) -> float | None:
    """MAP in %: the mean over the tasks with queries of their mean AP."""
    maps = [float(np.mean(rows["AP"].to_numpy(zero_copy_only=False))) * 100
            for task in TASKS
            if (rows := table.filter(pc.equal(table["task"], task))).num_rows]
    return round(float(np.mean(maps)), 2) if maps else None


def by_direction(ranked: pa.Table) -> dict[str, pa.Table]:
    """Per-query AP (``task``, ``query``) on average and per direction."""
    return {group: per_query(ranked, ["task", "query"],
                             keep=None if group == "average" else f"direction = '{group}'")
            for group in GROUPS}


def against(table: pa.Table, base: pa.Table) -> dict[str, Any]:
    """The paired t-test of ``table``'s per-query AP against ``base``'s (same queries)."""
    def values(t: pa.Table) -> dict[tuple[str, str], float]:
        return dict(zip(zip(t["task"].to_pylist(), t["query"].to_pylist(), strict=True),
                        t["AP"].to_pylist(), strict=True))
    x, y = values(table), values(base)
    keys = sorted(y)
    test = paired_t_test([x[k] * 100 for k in keys], [y[k] * 100 for k in keys])
    return {"mean_difference": test["mean_difference"],
            "p": None if test["p"] is None else round(test["p"], 4)}


def scored(corpus: Corpus, dense: str | None, split: str) -> dict[str, Any]:
    """Both protocols' figures of the variants on ``split``."""
    out: dict[str, Any] = {}
    for protocol, name in (("text-only", HYBRID), ("hidden-links", HYBRID_GRAPH)):
        pool, _ = common_pool(corpus, load_pool(corpus, split), [dense or default_dense(corpus)])
        hidden: list[tuple[str, str]] = []
        if protocol == "hidden-links":
            pool, hidden = hide_links(pool, 0)
        papers = pool_papers(corpus, pool)
        cache: dict[str, Any] = {}
        tables, specs = {}, {}
        for weight in WEIGHTS:
            members, weights = variant(name, corpus, dense, weight)
            fusion = Fusion(name, [load_scorer(m, papers, hidden=hidden, cache=cache)
                                   for m in members], weights, "zscore")
            tables[weight] = by_direction(model_ranks(pool, ScorerRows(fusion)))
            specs[str(weight)] = dict(zip(members, weights, strict=True))
        found: dict[str, Any] = {"members": specs}
        for group in GROUPS:
            base = tables[0.0][group]
            if not base.num_rows:
                found[group] = {"queries": 0}
                continue
            found[group] = {"queries": len(set(base["query"].to_pylist())),
                            "judged_pairs": base.num_rows,
                            **{f"w={w}": task_map(tables[w][group]) for w in WEIGHTS}}
            for weight in WEIGHTS[1:]:
                found[group][f"w={weight} against w=0"] = against(tables[weight][group], base)
            print(f"{corpus.root.name:<18} {split:<5} {protocol:<12} {group:<15} "
                  f"n={found[group]['queries']:<4} "
                  + "  ".join(f"w={w} {found[group][f'w={w}']}" for w in WEIGHTS)
                  + "  p " + " ".join(str(found[group][f"w={w} against w=0"]["p"])
                                      for w in WEIGHTS[1:]), flush=True)
        out[protocol] = found
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", type=Path, help="ranker_directions.py's work folder")
    parser.add_argument("taln", type=Path, help="a TALN corpus with e5 and minilm-en vectors")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/untuned_cross_dense.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    corpora = {view: (Corpus(args.work / view / "corpus"), None) for view in VIEWS}
    corpora["taln"] = (Corpus(args.taln), None)
    corpora["taln-e5"] = (Corpus(args.taln), E5)
    found = {}
    for label, (corpus, dense) in corpora.items():
        print(f"{label}: {default_spec(HYBRID, corpus, dense).members}", file=sys.stderr)
        found[label] = {split: scored(corpus, dense, split) for split in SPLITS}
    own = found[VIEWS[0]]
    dev, train = own["dev"]["text-only"]["non-en->en"], own["train"]["text-only"]["en->en"]
    numbers = {
        "headline": f"{dev['w=0.5']:.2f}",
        "headline_means": "MAP of French queries' English related papers (non-en->en, "
                          f"{dev['queries']} dev queries) under the untuned hybrid with "
                          "DENSE@cross at weight 0.5, in the own-language-only view of TALN; "
                          f"English -> English on the train split meanwhile: "
                          f"{train['w=0.0']:.2f} without it, {train['w=0.5']:.2f} with it",
        "peer": f"the untuned hybrid without DENSE@cross: {dev['w=0.0']:.2f}",
        "weights": list(WEIGHTS),
        "corpora": found}
    if args.record:
        write_record("untuned_cross_dense", numbers,
                     data={"views": str(args.work), "taln": str(args.taln)},
                     load_before=load_before,
                     notes="Dev split and train split (more queries; the untuned fusions learn "
                           "nothing from it); the test splits are not read. taln: its adapter "
                           "as the dense model; taln-e5: e5 and minilm-en, as a fresh corpus. "
                           "The untuned hybrid does not hold DENSE@cross: every weight that "
                           "lifts the cross-language directions lowers English -> English on "
                           "the train split.")


if __name__ == "__main__":
    main()
