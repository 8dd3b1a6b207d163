"""Session 10: the headroom of the authors' citation habits on the train + dev hidden links
(never test), and the member sets of ``hybrid-graph`` compared out of fold.

    python docs/ranking/session10/headroom.py taln docs/ranking/session10/headroom.json

For each signal on the hidden-links protocol of the train and dev splits (seed 0): the share
of hidden (query, partner) pairs it scores at all (coverage), its citation MAP alone, and its
coverage and top-5 share among the pairs ``hybrid`` ranks below 5; then the out-of-fold
citation MAP (5 folds, :func:`openmsd.experiment.tune.cross_validate`) of each method over
several member sets; and how many hidden partners are older than their query paper (the
direction prior).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from openmsd.corpus import Corpus
from openmsd.experiment.tune import (
    GRAPH_MEMBERS,
    Judged,
    cross_validate,
    pool_matrices,
    pooled,
    queries_of,
    text_members,
    tuning_pools,
)

SIGNALS = ["hybrid", "authors", "year", "adamic-adar", "ppr", "coupling", "co-citation",
           "shared-references", "hybrid~links", "author-links", "author-citations",
           "author-ppr", "cited-by"]
SESSION8 = ["hybrid", "adamic-adar", "ppr", "coupling", "co-citation", "shared-references",
            "hybrid~links"]
NEW = ["author-links", "author-citations", "author-ppr", "cited-by"]


def ranks(matrix: np.ndarray, judged: Judged) -> np.ndarray:
    """Each relevant pair's rank (1 = best; ties against it counted below it)."""
    rows = matrix[judged.query]
    own = rows[np.arange(len(judged.query)), judged.doc][:, None]
    return 1 + (rows > own).sum(axis=1)


def main(corpus_dir: str, out: str) -> None:
    corpus = Corpus(Path(corpus_dir))
    pools, hidden = tuning_pools(corpus, 0, hidden=True)
    members = list(dict.fromkeys([*SIGNALS, *GRAPH_MEMBERS]))
    stores: list[dict[str, np.ndarray]] = [{} for _ in pools]
    parts = {p.split: dict(zip(members, pool_matrices(corpus, p, members, h, s), strict=True))
             for p, h, s in zip(pools, hidden, stores, strict=True)}
    sizes = np.array([queries_of(p) for p in pools], float)
    judged = [Judged(p, "citation") for p in pools]
    report: dict = {"queries": {p.split: queries_of(p) for p in pools},
                    "pairs": {p.split: len(j.query) for p, j in zip(pools, judged, strict=True)},
                    "signals": {}}
    weak = [ranks(parts[p.split]["hybrid"], j) > 5 for p, j in zip(pools, judged, strict=True)]
    report["pairs_hybrid_ranks_below_5"] = int(sum(w.sum() for w in weak))
    for name in SIGNALS:
        entry: dict = {}
        for p, j, w in zip(pools, judged, weak, strict=True):
            matrix = parts[p.split][name]
            scored = np.isfinite(matrix[j.query, j.doc])
            entry[p.split] = {"coverage": round(float(scored.mean()), 3),
                              "MAP": round(j.objective(matrix), 2)}
            if p.split == "train":
                entry["train_weak_pairs"] = {
                    "coverage": round(float(scored[w].mean()), 3),
                    "top5": round(float(((ranks(matrix, j) <= 5) & scored)[w].mean()), 3)}
        entry["train+dev MAP"] = round(pooled([j.objective(parts[p.split][name])
                                              for p, j in zip(pools, judged, strict=True)],
                                             sizes), 2)
        report["signals"][name] = entry
        print(name, json.dumps(entry), flush=True)
    sets = {"hybrid alone": ["hybrid"], "session 8 members": SESSION8,
            "session 10 members (tune's)": ["hybrid", *GRAPH_MEMBERS],
            "session 8 members + the four new": [*SESSION8, *NEW]}
    for name in [*NEW, "ppr", "shared-references"]:
        sets[f"session 10 members without {name}"] = [m for m in ["hybrid", *GRAPH_MEMBERS]
                                                       if m != name]
    sets["flat: text and metadata members + session 10 graph members"] = [
        *text_members(corpus), "authors", "year", *GRAPH_MEMBERS]
    report["out_of_fold"] = {}
    for name, chosen in sets.items():
        rows = [pool_matrices(corpus, p, chosen, h, s)
                for p, h, s in zip(pools, hidden, stores, strict=True)]
        step = 0.2 if len(chosen) <= 8 else 0.5
        report["out_of_fold"][name] = cross_validate(pools, rows, chosen, "citation", step, 5)
        print(name, report["out_of_fold"][name], flush=True)
    years = dict(corpus.connect().execute("SELECT paper_id, year FROM papers").fetchall())
    older = newer = same = 0
    for p in pools:
        for q, d in zip(p.judgements["query"].to_pylist(), p.judgements["doc"].to_pylist(),
                        strict=True):
            older += years[d] < years[q]
            newer += years[d] > years[q]
            same += years[d] == years[q]
    report["hidden_partner_year"] = {"older": older, "newer": newer, "same year": same}
    print(report["hidden_partner_year"])
    Path(out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
