"""``openmsd tune CORPUS``: fusion weights fitted on a split that is not test.

``hybrid`` (text only) is fitted on the dev split's SDSM tasks (the average MAP of the three
tasks, as ``openmsd eval sdsm`` computes it); ``hybrid-graph`` (text and citation graph) on the
hidden-links protocol (:func:`openmsd.eval.sdsm.hide_links`) of the train and dev splits (the
dev split alone rarely has a paper with two links to hide one of). Each member's scores of the
whole pool are computed once; every weighting of a grid over the simplex (step ``step``), by
weighted and by reciprocal-rank fusion, is then ranked and scored. The best is written to
``CORPUS/index/ranker.json`` with its provenance: split, queries, objective, each member's own
figure and the corpus build.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from openmsd.corpus.store import Corpus
from openmsd.rank.fusion import METHODS, combine
from openmsd.rank.load import HYBRID, HYBRID_GRAPH, default_dense, dense_models, ranker_path
from openmsd.rank.scorer import Queries

#: Graph members ``hybrid-graph`` may give weight to.
GRAPH_MEMBERS = ("adamic-adar", "ppr", "coupling", "co-citation")


class TuneError(ValueError):
    """Nothing to tune on: no dev queries, no relations."""


def simplex(members: int, step: float) -> list[tuple[float, ...]]:
    """Every weighting of ``members`` in multiples of ``step`` summing to 1.

    >>> simplex(2, 0.5)
    [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    """
    units = round(1 / step)
    return [tuple(c / units for c in combo)
            for combo in itertools.product(range(units + 1), repeat=members)
            if sum(combo) == units]


class _Fixed:
    """Precomputed pool rows (one fused matrix) as :func:`openmsd.eval.ranks.relevant_ranks`
    reads them."""

    def __init__(self, matrix: np.ndarray):
        self.matrix, self.n_docs = matrix, matrix.shape[1]

    def rows(self, queries: np.ndarray) -> np.ndarray:
        return self.matrix[queries].copy()


def _objective(pool: Any, matrix: np.ndarray, task: str | None) -> float:
    """MAP in % of ``task`` (None: the mean over the tasks that have queries) when the pool is
    ranked by ``matrix`` (pool × pool)."""
    from openmsd.eval.sdsm import model_ranks

    ranked = model_ranks(pool, _Fixed(matrix))
    tasks = ranked["task"].to_pylist()
    queries = ranked["query"].to_pylist()
    ranks = ranked["rank"].to_numpy()
    groups: dict[tuple[str, str], list[int]] = {}
    for t, q, r in zip(tasks, queries, ranks, strict=True):
        if task is None or t == task:
            groups.setdefault((t, q), []).append(int(r))
    per_task: dict[str, list[float]] = {}
    for (t, _), found in groups.items():
        found.sort()
        per_task.setdefault(t, []).append(
            float(np.mean([(i + 1) / r for i, r in enumerate(found)])))
    return 100 * float(np.mean([np.mean(v) for v in per_task.values()])) if per_task else 0.0


def fit(corpus: Corpus, pools: Sequence[Any], members: Sequence[str], hidden: Sequence[Any],
        task: str | None, step: float,
        progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The best weighting of ``members`` over ``pools`` (mean of their objective values)."""
    from openmsd.eval.sdsm import scorer_for

    parts = []  # per pool: each member's exact scores of the whole pool
    for pool, links in zip(pools, hidden, strict=True):
        cache: dict = {}
        scorers = [scorer_for(m, corpus, pool, protocol="hidden-links" if links else
                              "text-only", hidden=links, cache=cache) for m in members]
        queries = Queries.of_rows(scorers[0].papers, np.arange(len(pool.ids)))
        everything = np.arange(len(pool.ids))
        rows = []
        for scorer in scorers:
            matrix = np.array(scorer.score(queries, everything), np.float32)
            np.fill_diagonal(matrix, -np.inf)
            rows.append(matrix)
        parts.append(rows)
    singles = {m: float(np.mean([_objective(p, rows[i], task) for p, rows in
                                 zip(pools, parts, strict=True)]))
               for i, m in enumerate(members)}
    best: dict[str, Any] = {"value": -1.0}
    for method in METHODS:
        for weights in simplex(len(members), step):
            if sum(w > 0 for w in weights) < 1:
                continue
            value = float(np.mean([_objective(p, combine(rows, weights, method), task)
                                   for p, rows in zip(pools, parts, strict=True)]))
            if value > best["value"] + 1e-9:
                best = {"value": value, "weights": list(weights), "method": method}
            if progress:
                progress(1)
    kept = [i for i, w in enumerate(best["weights"]) if w > 0]
    return {"members": [members[i] for i in kept],
            "weights": [best["weights"][i] for i in kept], "method": best["method"],
            "tuned": True, "objective_value": round(best["value"], 4), "step": step,
            "members_tried": list(members), "single_values": singles}


def text_members(corpus: Corpus) -> list[str]:
    """The text members ``hybrid`` may weigh: BM25 within a language and on the English view,
    the corpus's dense model, and an English-only model for English pairs where the corpus
    has its vectors."""
    dense = default_dense(corpus)
    members = ["bm25@same", "bm25-en", dense]
    have = dense_models(corpus)
    if "minilm-en" in have and dense != "minilm-en":
        members.append("minilm-en@en")
    return members


def tune(corpus: Corpus, step: float = 0.1, seed: int = 0,
         progress: Callable[[str, int], Callable[[int], None]] | None = None
         ) -> dict[str, Any]:
    """Fit ``hybrid`` and ``hybrid-graph`` and save them (see the module)."""
    from openmsd.eval.sdsm import SDSMError, common_pool, hide_links, load_pool

    text = text_members(corpus)
    try:
        dev = load_pool(corpus, "dev")
    except SDSMError as error:
        raise TuneError(f"{corpus.root}: cannot tune: {error}") from None
    dev, _ = common_pool(corpus, dev, text)
    if dev.judgements.num_rows == 0:
        raise TuneError(f"{corpus.root}: the dev split has no query (no paper with a link to "
                        "another dev paper): nothing to tune on; rebuild the relations with a "
                        "larger --dev fraction")
    grid = len(simplex(len(text), step)) * len(METHODS)
    spec = {HYBRID: fit(corpus, [dev], text, [[]], None, step,
                        progress("hybrid (dev, text-only)", grid) if progress else None)}
    spec[HYBRID]["split"] = "dev"
    spec[HYBRID]["objective"] = "average MAP of the SDSM tasks, text-only protocol"
    spec[HYBRID]["queries"] = len(set(dev.judgements["query"].to_pylist()))
    graph_pools, graph_hidden = [], []
    for split in ("train", "dev"):
        pool, _ = common_pool(corpus, load_pool(corpus, split), spec[HYBRID]["members"])
        pool, links = hide_links(pool, seed)
        if pool.judgements.num_rows:
            graph_pools.append(pool)
            graph_hidden.append(links)
    _save(corpus, spec)  # hybrid-graph weighs the tuned hybrid against the graph scorers
    if graph_pools:
        members = [HYBRID, *GRAPH_MEMBERS]
        graph_step = max(step, 0.2)
        grid = len(simplex(len(members), graph_step)) * len(METHODS)
        spec[HYBRID_GRAPH] = fit(corpus, graph_pools, members, graph_hidden, "citation",
                                 graph_step,
                                 progress("hybrid-graph (train+dev, hidden links)", grid)
                                 if progress else None)
        spec[HYBRID_GRAPH].update(
            split="train+dev", objective="citation MAP, hidden-links protocol (seed "
                                         f"{seed})",
            queries=sum(len(set(p.judgements["query"].to_pylist())) for p in graph_pools))
    _save(corpus, spec)
    return spec


def _save(corpus: Corpus, spec: dict[str, Any]) -> None:
    """Write the tuned specs with the corpus build they were fitted on, atomically."""
    build = json.loads((corpus.root / "manifest.json").read_text()).get("build", {}).get("id")
    for entry in spec.values():
        entry.setdefault("corpus_build", build)
        entry.setdefault("fitted", datetime.now(UTC).isoformat(timespec="seconds"))
    path = ranker_path(corpus)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(spec, indent=2) + "\n")
    os.replace(partial, path)
