"""Session 12: how far any choice among the hidden-links members could go, on train + dev
(never test): issue 15's hidden-links target (text + graph >= 1.3 x the text fusion) against
an oracle that knows, for every query paper, which member ranks its hidden partners best.

    python docs/ranking/session12/oracle.py taln docs/ranking/session12/oracle.json

For the train and dev splits' hidden links (seed 0, as ``openmsd tune`` hides them): each
member's citation MAP alone; the **per-query oracle** over ``hybrid`` and the graph members
(each query paper ranked by whichever member gives its hidden partners the best AP: no
fusion that picks one member per query can beat it); and the **top-k oracle**: ``hybrid``'s
ranking with every hidden partner that some graph member puts in its own top k moved to the
front (a fusion that trusts the graph exactly when the graph is right). Both divided by
``hybrid`` alone and set against 1.3.
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
    pool_matrices,
    pooled,
    queries_of,
    tuning_pools,
)

GRAPH = list(dict.fromkeys([*GRAPH_MEMBERS, "adamic-adar", "ppr", "coupling", "co-citation",
                            "shared-references", "hybrid~links", "author-links",
                            "author-citations", "author-ppr", "cited-by"]))


def ranks(matrix: np.ndarray, judged: Judged) -> np.ndarray:
    """Each relevant pair's rank under ``matrix`` (1 = best; ties counted against it)."""
    rows = matrix[judged.query]
    own = rows[np.arange(len(judged.query)), judged.doc][:, None]
    return 1 + (rows > own).sum(axis=1)


def promoted(matrix: np.ndarray, judged: Judged, found: np.ndarray) -> np.ndarray:
    """``matrix`` with the ``found`` relevant pairs lifted above every other score."""
    lifted = matrix.copy()
    top = np.nanmax(np.where(np.isfinite(matrix), matrix, np.nan)) + 1.0
    lifted[judged.query[found], judged.doc[found]] = top
    return lifted


def main(corpus_dir: str, out: str) -> None:
    corpus = Corpus(Path(corpus_dir))
    pools, hidden = tuning_pools(corpus, 0, hidden=True)
    members = ["hybrid", *GRAPH]
    sizes = np.array([queries_of(p) for p in pools], float)
    report: dict = {"queries": {p.split: queries_of(p) for p in pools}, "MAP alone": {},
                    "oracle": {}}
    per_split = []
    for pool, links in zip(pools, hidden, strict=True):
        matrices = dict(zip(members, pool_matrices(corpus, pool, members, links, {}),
                            strict=True))
        per_split.append((pool, Judged(pool, "citation"), matrices))
    for name in members:
        report["MAP alone"][name] = round(pooled(
            [j.objective(m[name]) for _, j, m in per_split], sizes), 2)
    base = report["MAP alone"]["hybrid"]

    def oracle_of(chosen: list[str]) -> float:
        values = []
        for _, judged, matrices in per_split:
            ap = np.stack([judged.average_precision(matrices[n]) for n in chosen])
            per_task = np.bincount(judged.group_task, ap.max(axis=0)) / np.bincount(
                judged.group_task)
            values.append(100 * float(per_task.mean()))
        return round(pooled(values, sizes), 2)

    report["oracle"]["per-query best of hybrid and every graph member"] = oracle_of(members)
    for name in GRAPH:
        report["oracle"][f"per-query best of hybrid and {name}"] = oracle_of(["hybrid", name])
    for k in (1, 5, 10):
        values = []
        for _, judged, matrices in per_split:
            found = np.zeros(len(judged.query), bool)
            for name in GRAPH:
                matrix = matrices[name]
                scored = np.isfinite(matrix[judged.query, judged.doc])
                found |= scored & (ranks(matrix, judged) <= k)
            values.append(judged.objective(promoted(matrices["hybrid"], judged, found)))
        report["oracle"][f"hybrid, partners in some graph member's top {k} first"] = round(
            pooled(values, sizes), 2)
    report["ratio to hybrid (target 1.3)"] = {name: round(value / base, 3)
                                             for name, value in report["oracle"].items()}
    print(json.dumps(report, indent=2))
    Path(out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
