"""``openmsd tune CORPUS``: fusion weights fitted on a split that is not test, kept only where
they beat the untuned fusion out of fold.

``hybrid`` (words and vectors, and the papers' shared authors and year gap, with a fallback
of words and vectors alone for free text, which has neither: what ``search`` ranks with,
chosen on citation contexts by :mod:`openmsd.experiment.contexts`) is fitted on the train and
dev splits' SDSM tasks (the average MAP of the three tasks, as ``openmsd eval sdsm`` computes
it); ``hybrid-graph`` (``hybrid`` and the citation graph, with
``shared-references``: what ``related`` ranks a paper's related papers with) on the hidden-links
protocol (:func:`openmsd.eval.sdsm.hide_links`) of the train and dev splits.

Each member's scores of the pool are computed once, for the tuning queries only (at most
:data:`openmsd.experiment.pools.MAX_QUERIES` per split, a seeded sample beyond: this bounds the
cost on a large corpus); every weighting of a grid over the simplex (step ``step``) by z-score,
weighted and reciprocal-rank fusion, refined one weight at a time, and a learned fusion, are
then ranked and scored. **What is kept is chosen out of fold** (:func:`fit_validated`): the
tuning queries in :data:`FOLDS` seeded folds, each candidate (member set × method) fitted on the
other folds and scored on the held-out one, beside the untuned fusion
(:func:`openmsd.rank.load.default_spec`) on the same queries. The best candidate is fitted again
on every query and kept only when it beats the untuned fusion out of fold by :data:`MARGIN` MAP
points or more and a paired t-test on the per-query AP gives p < :data:`ALPHA` (the rule the
free-text fallback is chosen by); else the untuned fusion is kept (``"tuned": false``). Either
is written to ``CORPUS/index/ranker.json`` with its provenance: split, queries, objective, each
member's own figure, the out-of-fold figures, what was chosen and why, and the corpus build.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow.compute as pc

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus
from openmsd.experiment.contexts import TooFewContexts, fit_contexts
from openmsd.experiment.pools import (
    check_dev,
    pool_matrices,
    queries_of,
    score_members,
    tuning_pools,
    with_queries,
)
from openmsd.experiment.weights import (
    SEARCHED,
    Judged,
    TuneError,
    grid_step,
    pooled,
    search,
    search_steps,
)
from openmsd.rank import (
    ENGLISH_MODEL,
    HYBRID,
    HYBRID_GRAPH,
    METADATA_SCORERS,
    RankerSpec,
    combine,
    default_dense,
    default_spec,
    english_key,
    fallbacks,
    features,
    fuse,
    save_tuned,
    tuned,
)

__all__ = ["ALL_METHODS", "ALPHA", "FOLDS", "GRAPH_MEMBERS", "MARGIN", "STEPS", "cross_validate",
           "fit", "fit_validated", "held_out_ap", "learn", "members_of", "methods_fitted",
           "paper_query_fit", "query_folds", "text_members", "tune_fusion", "value_of",
           "with_fallback"]

#: Graph members ``hybrid-graph`` may give weight to: the citation graph's and the authors'
#: citation habits' (:mod:`openmsd.rank.authorship`), chosen on 5-fold
#: cross-validation over the train hidden links (docs/ranking.md): ``adamic-adar``,
#: ``coupling``, ``co-citation`` and ``hybrid~links`` beside them lowered the out-of-fold MAP.
GRAPH_MEMBERS = ("ppr", "shared-references", "author-links", "author-citations", "author-ppr",
                 "cited-by")
#: Folds of the cross-validation that chooses what is kept (:func:`fit_validated`).
FOLDS = 5
GRAPH_FOLDS = FOLDS
#: How many MAP points (%) the tuned fusion must gain out of fold over the untuned one.
MARGIN = 1.0
#: The p-value under which the paired t-test must put that gain.
ALPHA = 0.05


def learn(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]], task: str | None,
          seed: int = 0) -> list[float]:
    """The ``learned`` fusion's weights: a logistic regression (scikit-learn) of "relevant to
    the query" on :func:`openmsd.rank.fusion.features` over every (query, other pool paper)
    of the tuning queries (``task`` None: relevant to any task), classes balanced."""
    from sklearn.linear_model import LogisticRegression

    x, y = [], []
    for pool, rows in zip(pools, parts, strict=True):
        position = {paper: i for i, paper in enumerate(pool.ids)}
        judged = pool.judgements
        if task is not None:
            judged = judged.filter(pc.equal(judged["task"], task))
        queries = np.array(sorted({position[q] for q in judged["query"].to_pylist()}), np.int64)
        if not len(queries):
            continue
        held = getattr(pool, "rows", None)  # the matrices' rows: the pool's queries
        chosen = queries if held is None else np.searchsorted(held, queries)
        found = features([r[chosen] for r in rows])
        columns = getattr(pool, "columns", None)  # the matrices' columns: pool positions
        ids = (np.broadcast_to(np.arange(len(pool.ids)), (len(queries), len(pool.ids)))
               if columns is None else columns[chosen])
        labels = np.zeros(ids.shape, bool)
        where = {int(q): i for i, q in enumerate(queries)}
        for q, d in zip(judged["query"].to_pylist(), judged["doc"].to_pylist(), strict=True):
            row = where[position[q]]
            labels[row] |= ids[row] == position[d]
        other = (ids >= 0) & (ids != queries[:, None])  # never the query paper itself
        x.append(np.stack([f[other] for f in found], axis=1))
        y.append(labels[other])
    if not x or not np.concatenate(y).any():
        raise TuneError("no relevant pair to learn a fusion from")
    model = LogisticRegression(class_weight="balanced", max_iter=2000, random_state=seed)
    model.fit(np.concatenate(x), np.concatenate(y))
    return [round(float(w), 6) for w in model.coef_[0]]


ALL_METHODS = (*SEARCHED, "learned")


def methods_fitted(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                   members: Sequence[str], task: str | None, step: float, seed: int = 0,
                   progress: Callable[[int], None] | None = None,
                   methods: Sequence[str] = ALL_METHODS
                   ) -> tuple[dict[str, tuple[list[float], float]], dict[str, float]]:
    """Per method of ``methods`` (those of :data:`SEARCHED`: :func:`search`; ``learned``:
    :func:`learn`) its weights fitted on ``pools`` and their objective there; and each
    member's own objective."""
    sizes = np.array([queries_of(p) for p in pools], float)
    judged = [Judged(p, task) for p in pools]
    searched = [m for m in methods if m in SEARCHED]
    best = search(parts, judged, sizes, members, step, progress, methods=searched)
    out = {m: (best["weights_by_method"][m], best["by_method"][m]) for m in searched}
    if "learned" in methods:
        learned = learn(pools, parts, task, seed)
        out["learned"] = (learned, pooled([j.objective(combine(rows, learned, "learned"))
                                           for j, rows in zip(judged, parts, strict=True)],
                                          sizes))
    if progress:
        progress(1)
    return out, best["singles"]


def query_folds(pools: Sequence[Any], folds: int, seed: int = 0
                ) -> list[tuple[list[Any], list[Any]]]:
    """The tuning queries (of every pool) in ``folds`` seeded folds: per fold, the pools with
    the other folds' queries and the pools with its own (each query in one fold; fewer than
    two queries: no fold)."""
    keys = [(i, q) for i, pool in enumerate(pools)
            for q in sorted(set(pool.judgements["query"].to_pylist()))]
    folds = min(folds, len(keys))
    if folds < 2:
        return []
    order = np.random.default_rng(seed).permutation(len(keys))
    fold_of = {keys[k]: n % folds for n, k in enumerate(order)}
    return [tuple([with_queries(p, {q for (i, q), f in fold_of.items()
                                    if i == n and (f == fold) == inside})
                   for n, p in enumerate(pools)] for inside in (False, True))
            for fold in range(folds)]


def held_out_ap(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                weights: Sequence[float], method: str, task: str | None,
                fallback: Sequence[Any] = ()) -> np.ndarray:
    """The AP (a fraction) of every (task, query) group of ``pools`` (in pool, then group
    order) ranked by the fusion of ``parts`` (``fallback``: its :class:`Fallback`\\ s)."""
    found = [Judged(pool, task).average_precision(fuse(rows, weights, method, fallback))
             for pool, rows in zip(pools, parts, strict=True) if pool.judgements.num_rows]
    return np.concatenate(found) if found else np.zeros(0)


def cross_validate(pools: Sequence[Any], parts: Sequence[Sequence[np.ndarray]],
                   members: Sequence[str], task: str | None, step: float, folds: int,
                   seed: int = 0, progress: Callable[[int], None] | None = None
                   ) -> dict[str, float]:
    """Each method's out-of-fold objective: the tuning queries (of every pool) in ``folds``
    seeded folds (:func:`query_folds`); each method fitted (:func:`methods_fitted`) on the
    other folds and scored on the held-out one, the folds' objectives weighted by their
    queries (with fewer than two queries, nothing to validate: ``{}``)."""
    found: dict[str, list[float]] = {m: [] for m in ALL_METHODS}
    held: list[float] = []
    for train, test in query_folds(pools, folds, seed):
        sizes = np.array([queries_of(p) for p in test], float)
        held.append(float(sizes.sum()))
        fitted, _ = methods_fitted(train, parts, members, task, step, seed, progress)
        for method, (weights, _) in fitted.items():
            found[method].append(pooled([Judged(p, task).objective(combine(rows, weights, method))
                                         for p, rows in zip(test, parts, strict=True)], sizes))
    if not held:
        return {}
    return {m: round(float(np.average(v, weights=held)), 4) for m, v in found.items()}


def _spec_of(members: Sequence[str], weights: Sequence[float], method: str) -> dict[str, Any]:
    """A fusion spec; a weighting keeps only its members of positive weight."""
    if method == "learned":
        return {"members": list(members), "weights": list(weights), "method": method}
    kept = [i for i, w in enumerate(weights) if w > 0]
    return {"members": [members[i] for i in kept], "weights": [weights[i] for i in kept],
            "method": method}


def members_of(sets: dict[str, Sequence[str]], untuned: dict[str, Any]) -> list[str]:
    """Every member of the candidate sets and of the untuned fusion, once."""
    return list(dict.fromkeys([m for chosen in sets.values() for m in chosen]
                              + list(untuned["members"])))


def fit_validated(corpus: Corpus, pools: Sequence[Any], sets: dict[str, Sequence[str]],
                  hidden: Sequence[Any], task: str | None, step: float, untuned: dict[str, Any],
                  stores: Sequence[dict[str, np.ndarray]],
                  progress: Callable[[str, int], Callable[[int], None]] | None = None,
                  seed: int = 0, folds: int = FOLDS, label: str = "fusion") -> dict[str, Any]:
    """The fusion kept for ``pools`` (see the module): every candidate (a member set of
    ``sets`` by name × a method of :data:`ALL_METHODS`) and the ``untuned`` spec scored out of
    fold; the best candidate, fitted again on every query, if it beats ``untuned`` by
    :data:`MARGIN` points with p < :data:`ALPHA`, else ``untuned``. ``stores``: per pool, the
    members' score matrices (filled here). The spec says what was kept and why
    (``cross_validation``); a kept weighting that holds metadata members also holds, under
    ``"words"``, the best weighting of the set without them (its free-text fallback). The
    pools come from :func:`score_members`."""
    members = members_of(sets, untuned)
    for pool, links, store in zip(pools, hidden, stores, strict=True):
        pool_matrices(corpus, pool, members, links, store)  # scored already: score_members
    parts = {name: [[store[m] for m in chosen] for store in stores]
             for name, chosen in sets.items()}
    splits = query_folds(pools, folds, seed)
    grid = {name: search_steps(len(chosen), grid_step(len(chosen), step)) + 1
            for name, chosen in sets.items()}
    total = sum(grid.values()) * (len(splits) + 1)
    advance = progress(f"{label}: grid and ascent, {len(splits)} folds and the final fit",
                       total) \
        if progress else None
    ap = _out_of_fold(pools, parts, sets, stores, untuned, splits, task, step, seed, advance)
    verdict = _verdict(ap, bool(splits))
    fitted_all: dict[str, dict[str, tuple[list[float], float]]] = {}
    for name, chosen in sets.items():  # in sample, on every query, when a fit is kept
        if verdict["keep"]:
            fitted_all[name], _ = methods_fitted(pools, parts[name], chosen, task,
                                                 grid_step(len(chosen), step), seed, advance)
        elif advance:
            advance(grid[name])  # no final fit to make
    common = _provenance(pools, stores, members, untuned, task, step, seed, splits, ap,
                         verdict, fitted_all)
    if not verdict["keep"]:
        return {**untuned, "tuned": False, "objective_value": common.pop("untuned_value"),
                **common}
    common.pop("untuned_value")
    return _kept(sets, verdict, fitted_all, common)


def _out_of_fold(pools: Sequence[Any], parts: dict[str, list[list[np.ndarray]]],
                 sets: dict[str, Sequence[str]], stores: Sequence[dict[str, np.ndarray]],
                 untuned: dict[str, Any], splits: Sequence[Any], task: str | None,
                 step: float, seed: int, advance: Callable[[int], None] | None
                 ) -> dict[str, np.ndarray]:
    """The held-out AP of every (task, query) group, per candidate (``"SET, METHOD"``, each
    fitted on the other folds) and for the ``"untuned"`` fusion, over the folds ``splits``."""
    untuned_parts = [[store[m] for m in untuned["members"]] for store in stores]
    oof: dict[str, list[np.ndarray]] = {f"{name}, {m}": [] for name in sets for m in ALL_METHODS}
    oof["untuned"] = []
    for train, test in splits:
        oof["untuned"].append(held_out_ap(test, untuned_parts, untuned["weights"],
                                          untuned["method"], task))
        for name, chosen in sets.items():
            fitted, _ = methods_fitted(train, parts[name], chosen, task,
                                       grid_step(len(chosen), step), seed, advance)
            for method, (weights, _) in fitted.items():
                oof[f"{name}, {method}"].append(held_out_ap(test, parts[name], weights, method,
                                                            task))
    return {key: np.concatenate(values) if values else np.zeros(0) for key, values in oof.items()}


def _verdict(ap: dict[str, np.ndarray], folded: bool) -> dict[str, Any]:
    """The out-of-fold MAP of each candidate (``mean``), the ``best``, its ``gain`` over the
    untuned fusion, the paired t-test's ``p`` and whether the best is kept (``keep``)."""
    from scipy import stats

    mean = {key: 100 * float(v.mean()) if len(v) else 0.0 for key, v in ap.items()}
    best = max((key for key in ap if key != "untuned"), key=mean.__getitem__)
    gain = mean[best] - mean["untuned"]
    p = 1.0
    if len(ap[best]) > 1:
        test_result = stats.ttest_rel(ap[best], ap["untuned"])
        p = float(test_result.pvalue) if math.isfinite(test_result.pvalue) else 1.0
    return {"mean": mean, "best": best, "gain": gain, "p": p,
            "keep": folded and gain >= MARGIN and p < ALPHA}


def _provenance(pools: Sequence[Any], stores: Sequence[dict[str, np.ndarray]],
                members: Sequence[str], untuned: dict[str, Any], task: str | None,
                step: float, seed: int, splits: Sequence[Any], ap: dict[str, np.ndarray],
                verdict: dict[str, Any],
                fitted_all: dict[str, dict[str, tuple[list[float], float]]]) -> dict[str, Any]:
    """What a kept spec records of its choice: each member alone, what was tried, the
    cross-validation and each in-sample fit; and ``untuned_value``, the untuned fusion's
    objective on every query."""
    sizes = np.array([queries_of(pl) for pl in pools], float)
    singles = {m: pooled([Judged(pl, task).objective(store[m])
                          for pl, store in zip(pools, stores, strict=True)], sizes)
               for m in members}
    untuned_parts = [[store[m] for m in untuned["members"]] for store in stores]
    untuned_value = pooled([Judged(pl, task).objective(fuse(rows, untuned["weights"],
                                                            untuned["method"]))
                            for pl, rows in zip(pools, untuned_parts, strict=True)], sizes)
    record = {
        "folds": len(splits), "seed": seed, "held_out_queries": len(ap["untuned"]),
        "out_of_fold_map": {key: round(value, 4) for key, value in verdict["mean"].items()},
        "best_tuned": verdict["best"], "gain": round(verdict["gain"], 4),
        "p": round(verdict["p"], 4), "kept": "tuned" if verdict["keep"] else "untuned",
        "rule": f"the best candidate (member set x method) out of fold is fitted again on "
                f"every query and kept only when it beats the untuned fusion out of fold by "
                f">= {MARGIN:g} MAP points (mean AP of the held-out (task, query) groups) and "
                f"a paired t-test on their AP gives p < {ALPHA:g}; else the untuned fusion"}
    return {"untuned_value": round(untuned_value, 4),
            "single_values": {m: round(v, 4) for m, v in singles.items()},
            "members_tried": members, "step": step,
            "search": "grid, then coordinate ascent; a learned fusion",
            "cross_validation": record,
            "best_by_method": {f"{name}, {m}": round(v, 4)
                               for name, fits in fitted_all.items()
                               for m, (_, v) in fits.items()}}


def _kept(sets: dict[str, Sequence[str]], verdict: dict[str, Any],
          fitted_all: dict[str, dict[str, tuple[list[float], float]]],
          common: dict[str, Any]) -> dict[str, Any]:
    """The spec of the kept candidate, with, under ``"words"``, the best weighting of a
    smaller set (the one without the metadata), chosen out of fold."""
    name, method = verdict["best"].rsplit(", ", 1)
    weights, value = fitted_all[name][method]
    spec = {**_spec_of(sets[name], weights, method), "tuned": True,
            "objective_value": round(value, 4), **common}
    others = [n for n in sets if n != name and set(sets[n]) < set(sets[name])]
    if others:  # the set without the metadata: the best of its methods out of fold
        words = others[0]
        method = max(ALL_METHODS, key=lambda m: verdict["mean"][f"{words}, {m}"])
        spec["words"] = {**_spec_of(sets[words], *fitted_all[words][method][:1], method),
                         "objective_value": round(fitted_all[words][method][1], 4)}
    return spec


def fit(corpus: Corpus, pools: Sequence[Any], members: Sequence[str], hidden: Sequence[Any],
        task: str | None, step: float,
        progress: Callable[[int], None] | None = None, seed: int = 0,
        stores: Sequence[dict[str, np.ndarray]] | None = None, folds: int = 0
        ) -> dict[str, Any]:
    """The best fusion of ``members`` over ``pools`` in sample (no comparison with the untuned
    fusion: :func:`fit_validated` makes it): :func:`search`'s fusions and the learned fusion
    (:func:`learn`); the objective is the mean over the pools weighted by their number of
    queries. ``stores``: per pool, the members' score matrices already computed (filled here).
    With ``folds``, the method is the one with the best out-of-fold objective
    (:func:`cross_validate`; kept as ``cross_validation``), then fitted on every query."""
    stores = [{} for _ in pools] if stores is None else stores
    parts = [pool_matrices(corpus, pool, members, links, store)
             for pool, links, store in zip(pools, hidden, stores, strict=True)]
    fitted, singles = methods_fitted(pools, parts, members, task, step, seed, progress)
    by_method = {method: value for method, (_, value) in fitted.items()}
    validated = (cross_validate(pools, parts, members, task, step, folds, seed, progress)
                 if folds else {})
    chosen = validated or by_method
    method = max(chosen, key=chosen.__getitem__)
    weights, value = fitted[method]
    spec = _spec_of(members, weights, method)
    if validated:
        spec["cross_validation"] = {"folds": folds, "seed": seed, "rule": "the method with the "
                                    "best out-of-fold objective, fitted again on every query",
                                    "out_of_fold": validated}
    return {**spec, "tuned": True, "objective_value": round(value, 4), "step": step,
            "search": "grid, then coordinate ascent", "members_tried": list(members),
            "single_values": singles,
            "best_by_method": {k: round(v, 4) for k, v in by_method.items()}}


def value_of(pools: Sequence[Any], spec: dict[str, Any], stores: Sequence[dict[str, np.ndarray]],
             task: str | None) -> float:
    """The objective (as :func:`fit` computes it) of a spec with its fallbacks, from the
    members' stored score matrices."""
    sizes = np.array([queries_of(p) for p in pools], float)
    found = [Judged(pool, task).objective(fuse([store[m] for m in spec["members"]],
                                               spec["weights"], spec["method"],
                                               fallbacks(HYBRID, spec)))
             for pool, store in zip(pools, stores, strict=True)]
    return pooled(found, sizes)


def with_fallback(full: dict[str, Any], text: dict[str, Any], silent: Sequence[str],
                  replace: bool = False) -> dict[str, Any]:
    """The spec ``full`` (text and metadata members) with ``text`` as its fallback for the
    queries on which the metadata members ``silent`` (those ``full`` holds) are all silent;
    a text member the fallback needs and ``full`` dropped is added to it with weight 0.
    ``replace``: ``full``'s fallbacks for the same ``silent`` members give way (a spec with
    no such member — nothing to be silent — gets no fallback: ``full`` then weighs the same
    members itself, and is left as it is).

    >>> spec = with_fallback({"members": ["bm25", "year"], "weights": [0.5, 0.5],
    ...                       "method": "weighted"},
    ...                      {"members": ["e5"], "weights": [1.0], "method": "rrf"},
    ...                      ["authors", "year"])
    >>> spec["members"], spec["weights"], spec["fallbacks"][0]["silent"]
    (['bm25', 'year', 'e5'], [0.5, 0.5, 0.0], ['year'])
    """
    members, weights = list(full["members"]), list(full["weights"])
    per_member = len(weights) // len(members)
    for member in text["members"]:
        if member not in members:
            members.append(member)
            weights += [0.0] * per_member
    said = [m for m in silent if m in full["members"]]
    if not said:
        return full
    out = {**full, "members": members, "weights": weights}
    entry = {"silent": said, "members": list(text["members"]),
             "weights": list(text["weights"]), "method": text["method"],
             "objective_value": text.get("objective_value")}
    entry.update({k: text[k] for k in ("fitted_on", "fitted", "single_values", "chosen",
                                        "cross_validation", "paper_query_fit") if k in text})
    kept = [f for f in full.get("fallbacks", []) if not replace or f["silent"] != said]
    out["fallbacks"] = [entry, *kept] if replace else [entry]
    return out


def text_members(corpus: Corpus) -> list[str]:
    """The text members ``hybrid`` may weigh: BM25 within a language and on the English view,
    the corpus's dense model, each of the first and third with pseudo-relevance feedback
    (``~prf``), and an English-only model for English pairs where the corpus has its vectors.
    No metadata: :func:`tune_fusion` adds ``authors`` and ``year``
    (:mod:`openmsd.rank.metadata`) in a second fit and keeps this one as its fallback for free
    text (``search``, citation contexts), which has neither. Canonical spellings."""
    dense = RankerSpec.parse(default_dense(corpus))
    lexical = RankerSpec(model="bm25", language="same")
    members = [lexical, replace(lexical, modifiers=("prf",)), RankerSpec(model="bm25-en"),
               dense, replace(dense, modifiers=("prf",))]
    english = english_key(corpus)  # whichever backend embedded it
    if english is not None and dense.stored_model != ENGLISH_MODEL:
        members.append(replace(RankerSpec.parse(english), language="en"))
    return [str(member) for member in members]


#: What ``openmsd tune`` fits, in order: ``hybrid`` on the SDSM tasks, its free-text fallback
#: on citation contexts, ``hybrid-graph`` on hidden links (``only`` fits some, the others are
#: kept as saved).
STEPS = (HYBRID, "contexts", HYBRID_GRAPH)


def tune_fusion(corpus: Corpus, step: float = 0.1, seed: int = 0,
                progress: Callable[[str, int], Callable[[int], None]] | None = None,
                members: Sequence[str] | None = None, metadata: bool = True,
                only: Sequence[str] = STEPS) -> dict[str, Any]:
    """Fit ``hybrid`` (over ``members``, default :func:`text_members`), its free-text fallback
    chosen on citation contexts (:func:`openmsd.experiment.contexts.fit_contexts`; fewer than
    it needs: a :class:`~openmsd.experiment.contexts.TooFewContexts` error when it is the only
    step, else noted as ``free_text`` and the fallback fitted on paper queries kept) and
    ``hybrid-graph``, and save them (see the
    module); ``only``: those of :data:`STEPS` to fit, the others kept as saved. With
    ``metadata`` (or metadata among ``members``), ``hybrid`` is fitted on words and vectors
    and with the papers' ``authors`` and ``year`` too; if the second is kept (out of fold, see
    :func:`fit_validated`), the first is its fallback for queries that have no metadata (free
    text), unless the corpus's citation contexts give one. ``progress(label, total)`` is told
    of every member scored, grid point and fold."""
    unknown = [step_name for step_name in only if step_name not in STEPS]
    if unknown:
        raise TuneError(f"cannot tune {', '.join(unknown)}: expected some of {', '.join(STEPS)}")
    text = ([str(RankerSpec.parse(m)) for m in members] if members
            else text_members(corpus))
    if HYBRID in only or HYBRID_GRAPH in only:
        check_dev(corpus)
    try:
        spec = {name: entry.as_json() for name, entry in tuned(corpus).items()}
    except ArtifactError:  # a damaged ranker.json: rebuilt whole (the command it names)
        spec = {}
    if HYBRID not in only and HYBRID not in spec:
        raise TuneError(f"{corpus.root}: no tuned {HYBRID} to keep: tune it too (--only {HYBRID})")
    if HYBRID in only:
        spec[HYBRID] = _fit_hybrid(corpus, text, metadata, step, seed, progress)
    if "contexts" in only:
        words = [m for m in text if m not in METADATA_SCORERS]
        spec[HYBRID] = _fit_free_text(corpus, spec[HYBRID], words, step, seed, progress,
                                      alone=list(only) == ["contexts"])
    save_tuned(corpus, spec)  # hybrid-graph weighs the tuned hybrid against the graph scorers
    if HYBRID_GRAPH in only:
        graph = _fit_hybrid_graph(corpus, spec[HYBRID], step, seed, progress)
        if graph is not None:
            spec[HYBRID_GRAPH] = graph
            save_tuned(corpus, spec)
    return spec


def _fit_free_text(corpus: Corpus, hybrid: dict[str, Any], words: list[str], step: float,
                   seed: int, progress: Callable[[str, int], Callable[[int], None]] | None,
                   alone: bool) -> dict[str, Any]:
    """``hybrid`` with its free-text fallback chosen on citation contexts
    (:func:`openmsd.experiment.contexts.fit_contexts`) among the words and vectors ``words``;
    too few contexts: noted as ``free_text`` (raised when this step is ``alone``)."""
    if not hybrid.get("tuned", True):
        # the untuned hybrid holds no metadata: free text is ranked by the same fusion
        hybrid["free_text"] = (f"the untuned {HYBRID} ranks free text too: no fallback "
                               "to choose")
        return hybrid
    said = [m for m in METADATA_SCORERS if m in hybrid["members"]]
    paper_fit = paper_query_fit(hybrid, said)
    try:
        fallback = fit_contexts(corpus, words, step, seed, paper_fit, progress)
    except TooFewContexts as error:
        if alone:
            raise
        hybrid["free_text"] = str(error)  # the fallback fitted on paper queries stays
        return hybrid
    hybrid.pop("free_text", None)
    if paper_fit:
        fallback["paper_query_fit"] = paper_fit
    return with_fallback(hybrid, fallback, said, replace=True)


def _fit_hybrid_graph(corpus: Corpus, hybrid: dict[str, Any], step: float, seed: int,
                      progress: Callable[[str, int], Callable[[int], None]] | None
                      ) -> dict[str, Any] | None:
    """``hybrid-graph`` chosen on the hidden links of the train and dev splits: the tuned
    ``hybrid``, the metadata it lacks and :data:`GRAPH_MEMBERS`, by :func:`fit_validated`;
    None without a pool to fit on."""
    graph_pools, graph_hidden = tuning_pools(corpus, seed, hidden=True)
    if not graph_pools:
        return None
    members = [HYBRID, *[m for m in METADATA_SCORERS if m not in hybrid["members"]],
               *GRAPH_MEMBERS]
    sets = {"text, metadata and graph": members}
    untuned, label = default_spec(HYBRID_GRAPH, corpus).as_json(), "hybrid-graph (hidden links)"
    stores: list[dict[str, np.ndarray]] = [{} for _ in graph_pools]
    graph_pools = score_members(corpus, graph_pools, members_of(sets, untuned),
                                graph_hidden, stores, progress, label)
    spec = fit_validated(corpus, graph_pools, sets, graph_hidden, "citation", max(step, 0.2),
                         untuned, stores, progress, seed, label=label)
    spec.update(split="+".join(p.split for p in graph_pools),
                objective=f"citation MAP, hidden-links protocol (seed {seed})",
                queries=sum(queries_of(p) for p in graph_pools),
                queries_available=sum(queries_of(p.pool) for p in graph_pools))
    return spec


def paper_query_fit(spec: dict[str, Any], silent: Sequence[str]) -> dict[str, Any] | None:
    """The words-and-vectors weighting fitted on the SDSM paper queries that ``spec``
    (``hybrid``) holds for the queries on which ``silent`` are silent: its fallback, when that
    was not fitted on citation contexts, else the one that fallback kept
    (``paper_query_fit``); None when there is none.

    >>> paper_query_fit({"fallbacks": [{"silent": ["year"], "members": ["bm25"],
    ...                                 "weights": [1.0], "method": "rrf"}]}, ["year"])
    {'members': ['bm25'], 'weights': [1.0], 'method': 'rrf'}
    """
    for entry in spec.get("fallbacks", []):
        if list(entry["silent"]) != list(silent):
            continue
        if "citation contexts" in entry.get("fitted_on", ""):
            return entry.get("paper_query_fit")
        return {k: entry[k] for k in ("members", "weights", "method")}
    return None


def _fit_hybrid(corpus: Corpus, text: list[str], metadata: bool, step: float, seed: int,
                progress: Callable[[str, int], Callable[[int], None]] | None
                ) -> dict[str, Any]:
    """``hybrid`` chosen on the SDSM tasks of the train and dev splits (see
    :func:`tune_fusion`): words and vectors, or with metadata too (then with the first as its
    fallback for free text), or the untuned fusion, by :func:`fit_validated`."""
    pools, _ = tuning_pools(corpus, seed, hidden=False)
    stores: list[dict[str, np.ndarray]] = [{} for _ in pools]
    words = [m for m in text if m not in METADATA_SCORERS]
    extra = [m for m in text if m in METADATA_SCORERS] or (list(METADATA_SCORERS)
                                                            if metadata else [])
    sets = {"words and vectors": words}
    if extra:
        sets["and metadata"] = [*words, *extra]
    untuned, label = default_spec(HYBRID, corpus).as_json(), "hybrid (text-only)"
    hidden = [[] for _ in pools]
    pools = score_members(corpus, pools, members_of(sets, untuned), hidden, stores, progress,
                          label)
    spec = fit_validated(corpus, pools, sets, hidden, None, step, untuned, stores, progress,
                         seed, label=label)
    fallback = spec.pop("words", None)
    if spec["tuned"] and fallback and any(m in spec["members"] for m in extra):
        combined = with_fallback(spec, {**fallback, "fitted_on": "the SDSM paper queries of "
                                        "the train and dev splits"}, extra)
        combined["objective_value"] = round(value_of(pools, combined, stores, None), 4)
        spec = combined
    spec.update(split="+".join(p.split for p in pools),
                objective="average MAP of the SDSM tasks, text-only protocol",
                queries=sum(queries_of(p) for p in pools),
                queries_available=sum(queries_of(p.pool) for p in pools))
    return spec
