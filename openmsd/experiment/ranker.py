"""``openmsd train ranker CORPUS``: a ranker learned from the corpus's own links, chosen out of
fold, never worse there than its best single signal, with a score that means a probability.

Three rankers are fitted, each on the train and dev splits (never test), the queries of both in
:data:`FOLDS` seeded folds grouped by query:

* ``hybrid``, for a paper of the corpus without its citation graph (the SDSM tasks' text-only
  protocol; the average MAP of the three tasks): every text member (BM25 within a language
  and across languages in English, every dense model the corpus has vectors of, every adapter
  that is not the identity: :mod:`openmsd.experiment.adapters` trains one for each dense model
  without, first) and the metadata (shared authors, year gap);
* ``hybrid``'s free-text head (``search``, citation contexts): the text members alone, on the
  same queries;
* ``hybrid-graph``, which ``related`` ranks a paper's related papers with: the text members,
  the metadata and the citation graph (co-citation, shared references, personalised PageRank,
  authors' citation habits), on the hidden-links protocol (citation MAP; a paper's visible
  links are neither positive nor negative in training: the graph already shows them).

The candidates are every single member, the untuned fusion (:func:`openmsd.rank.default_spec`)
and two models over the members' evidence (:func:`openmsd.rank.learned.pair_features`):
logistic regression and LightGBM's lambdarank. Each learned model is scored on the queries of
each fold after fitting on the others; the best candidate out of fold is shipped (fitted again
on every query), so the shipped ranker is never worse out of fold than the best single member;
a learned model ships only where it beats the members and the untuned fusion there with a
paired t-test's p < :data:`ALPHA` (else the best of those ships, as a head of its own).
Its out-of-fold scores fit an isotonic calibration: the probability that a pair is linked,
which ``related``, ``search`` and the page show as relevance. Everything is written to
``CORPUS/index/ranker.json`` with the out-of-fold table.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from openmsd.corpus import Corpus
from openmsd.eval import SDSMError, common_pool, load_pool, pool_papers
from openmsd.experiment.adapters import held_out_members, train_adapters
from openmsd.experiment.pools import (
    Stand,
    queries_of,
    score_members,
    split_pools,
    tuning_pools,
)
from openmsd.experiment.weights import Judged, TuneError, pooled
from openmsd.rank import (
    HYBRID,
    HYBRID_GRAPH,
    KINDS,
    LEARNED,
    METADATA_SCORERS,
    LearnedModel,
    RankerSpec,
    adapters_of,
    default_dense,
    default_spec,
    dense_models,
    feature_names,
    fuse,
    pair_features,
    save_tuned,
)
from openmsd.train import PrefetchConfig, train_prefetch_head

__all__ = ["FOLDS", "GRAPH_SIGNALS", "MIN_QUERIES", "TooFewLinks", "text_signals",
           "train_ranker"]

#: Folds of the cross-validation (grouped by query).
FOLDS = 5
#: The p-value under which a learned model's gain over the plain rankers must lie.
ALPHA = 0.05
#: Fewer tuning queries with a link than this: nothing is learned, the untuned fusion stays.
MIN_QUERIES = 20
#: The graph's evidence ``hybrid-graph`` learns from (``citation``, a visible link, is what
#: training leaves out: see the module).
GRAPH_SIGNALS = ("co-citation", "shared-references", "ppr", "cited-by", "author-links")
#: A query's training rows: its relevant papers and each member's top this many.
TRAIN_DEPTH = 40
#: LightGBM's settings (lambdarank; small trees, few rounds: a corpus has hundreds of queries;
#: a fit's time is its rounds', but 50 at 0.16 ranked TALN's hidden links worse out of fold
#: than 100 at 0.08, 57.9 against 60.4; one thread a fit: OpenMP's spinning threads slow it
#: many times over on a busy machine; the folds' fits run side by side instead, one a core).
LIGHTGBM = {"objective": "lambdarank", "learning_rate": 0.08, "num_leaves": 15,
            "min_data_in_leaf": 20, "feature_fraction": 0.8, "lambda_l2": 1.0,
            "lambdarank_truncation_level": 20, "verbose": -1, "num_threads": 1,
            "deterministic": True, "force_row_wise": True}
ROUNDS = 100
#: The most steps an isotonic calibration keeps (evenly spaced in its points).
CALIBRATION_POINTS = 200


class TooFewLinks(TuneError):
    """Fewer linked queries than a ranker can be learned from."""


def text_signals(corpus: Corpus) -> list[str]:
    """The text members a learned ranker reads: BM25 within a language, BM25 of the English
    texts (words across languages), every dense model the corpus has vectors of, and every
    adapter that is not the identity (an identity adapter ranks as its base); canonical
    spellings."""
    adapters = adapters_of(corpus)
    identity = {a.name for a in adapters if a.head.kind == "identity"}
    keys = [*(a.name for a in adapters), *dense_models(corpus)]
    members = ["bm25@same", "bm25-en", *(k for k in keys if k not in identity)]
    return list(dict.fromkeys(str(RankerSpec.parse(m)) for m in members))


@dataclass
class Grid:
    """One pool as a ranker is fitted on it: the members' score matrices (``parts``), the
    graded labels of its cells (how many tasks link the pair), which cells count (``valid``:
    some member scores it, and it is not a visible link), every cell's features and the
    untuned fusion's scores."""

    pool: Any
    parts: list[np.ndarray]
    labels: np.ndarray
    valid: np.ndarray
    features: np.ndarray
    untuned: np.ndarray
    judged: Judged | None = None  # the pool's relevant pairs of the task, read once

    @property
    def judged_rows(self) -> np.ndarray:
        """The rows (queries) with a relevant pair."""
        return np.flatnonzero((self.labels > 0).any(axis=1))


def _grid(corpus: Corpus, pool: Any, store: dict[str, np.ndarray], members: Sequence[str],
          untuned: dict[str, Any], task: str | None, mask: np.ndarray | None) -> Grid:
    """The :class:`Grid` of a scored pool (``mask``: cells that are neither positive nor
    negative)."""
    parts = [store[m] for m in members]
    shape = parts[0].shape
    papers = pool_papers(corpus, pool)
    columns = (np.broadcast_to(np.arange(len(pool.ids)), shape) if pool.columns is None
               else pool.columns)
    safe = np.maximum(columns, 0)
    languages = np.array(papers.languages, dtype=object)[safe]
    lengths = np.array([len(t) for t in papers.texts], np.float64)[safe]
    query_languages = [papers.languages[r] for r in pool.rows]
    judged = Judged(pool, task)
    labels = np.zeros(shape, np.int32)
    hit = judged.column >= 0
    np.add.at(labels, (judged.row[hit], judged.column[hit]), 1)
    heard = np.any([np.isfinite(p) for p in parts], axis=0) & (columns >= 0)
    valid = heard if mask is None else heard & ~mask
    features = pair_features(parts, query_languages, languages, lengths)
    fused = fuse([store[m] for m in untuned["members"]], untuned["weights"], untuned["method"])
    return Grid(pool, parts, labels, valid, features, fused, judged)


def _rows(grids: Sequence[Grid], chosen: Sequence[np.ndarray], seed: int = 0,
          depth: int = TRAIN_DEPTH) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows of the chosen queries (per grid, row indices): features, labels and each
    row's query group size; a query keeps its relevant cells, each member's top ``depth`` and
    about ``depth`` others drawn at random (seeded)."""
    x, y, groups = [], [], []
    members = (grids[0].features.shape[-1] - 4) // 4
    for grid, rows in zip(grids, chosen, strict=True):
        if not len(rows):
            continue
        reciprocal = grid.features[rows][..., 2:4 * members:4]  # each member's 1 / rank
        top = (np.nan_to_num(reciprocal) >= 1.0 / depth).any(axis=-1)
        # and as many others at random: the model also sees what no member ranks high
        rng = np.random.default_rng([seed, len(rows), int(rows[0])])
        other = rng.random(top.shape) < depth / max(top.shape[1], 1)
        keep = grid.valid[rows] & (top | other | (grid.labels[rows] > 0))
        for i, row in enumerate(rows):
            cells = np.flatnonzero(keep[i])
            if not len(cells) or not (grid.labels[row, cells] > 0).any():
                continue
            x.append(grid.features[row, cells])
            y.append(grid.labels[row, cells])
            groups.append(len(cells))
    if not x:
        raise TooFewLinks("no linked query to learn from")
    return np.concatenate(x), np.concatenate(y), np.array(groups)


def _fit(kind: str, x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: list[str],
         seed: int) -> LearnedModel:
    """A :class:`LearnedModel` of ``kind`` fitted on rows ``x`` with graded labels ``y``."""
    if kind == "linear":
        from sklearn.linear_model import LogisticRegression  # lazy: ~1.6 s

        mean = np.nanmean(np.where(np.isnan(x), np.nan, x), axis=0)
        mean = np.where(np.isfinite(mean), mean, 0.0)
        scale = np.nanstd(x, axis=0)
        scale = np.where(np.isfinite(scale) & (scale > 1e-9), scale, 1.0)
        standard = np.where(np.isnan(x), 0.0, (x - mean) / scale)
        model = LogisticRegression(class_weight="balanced", max_iter=2000, C=1.0,
                                   random_state=seed, solver="newton-cholesky")
        model.fit(standard, y > 0)
        return LearnedModel("linear", names, [float(c) for c in model.coef_[0]],
                            float(model.intercept_[0]), [float(m) for m in mean],
                            [float(s) for s in scale])
    import lightgbm  # lazy: lightgbm takes ~2.4 s to import

    data = lightgbm.Dataset(x, np.minimum(y, 3), group=groups, feature_name=[
        f"f{i}" for i in range(len(names))], free_raw_data=True)
    booster = lightgbm.train({**LIGHTGBM, "seed": seed}, data, num_boost_round=ROUNDS)
    gain = booster.feature_importance("gain")
    total = float(gain.sum()) or 1.0
    importance = {names[i]: round(float(gain[i]) / total, 4) for i in np.argsort(-gain)
                  if gain[i] > 0}
    return LearnedModel("lightgbm", names, booster=booster.model_to_string(),
                        importance=importance)


def _score(model: LearnedModel, grid: Grid, rows: np.ndarray) -> np.ndarray:
    """The model's scores of the grid's rows ``rows`` (``-inf`` where a cell does not count)."""
    scores = model.score(grid.features[rows])
    return np.where(grid.valid[rows], scores, -np.inf).astype(np.float32)


def _folds(grids: Sequence[Grid], folds: int, seed: int) -> list[np.ndarray]:
    """Per grid, each row's fold (-1: a row with no relevant pair), the linked queries of
    every grid in ``folds`` seeded folds."""
    keys = [(g, int(r)) for g, grid in enumerate(grids) for r in grid.judged_rows]
    order = np.random.default_rng(seed).permutation(len(keys))
    out = [np.full(len(grid.labels), -1) for grid in grids]
    for n, k in enumerate(order):
        g, r = keys[k]
        out[g][r] = n % folds
    return out


def _objective(grids: Sequence[Grid], matrices: Sequence[np.ndarray], task: str | None
               ) -> tuple[float, np.ndarray]:
    """MAP in % of ``matrices`` (one a grid: every row) pooled over the grids by their
    queries, and the AP of every (task, query) group."""
    values, ap = [], []
    for grid, matrix in zip(grids, matrices, strict=True):
        judged = grid.judged if grid.judged is not None else Judged(grid.pool, task)
        masked = np.where(grid.valid, matrix, -np.inf).astype(np.float32)
        values.append(judged.objective(masked))
        ap.append(judged.average_precision(masked))
    sizes = np.array([queries_of(g.pool) for g in grids], float)
    return pooled(values, sizes), np.concatenate(ap)


def _calibration(grids: Sequence[Grid], matrices: Sequence[np.ndarray]) -> dict[str, list]:
    """An isotonic map from the scores of ``matrices`` (out of fold) to whether the cell is
    linked, over every cell that counts; at most :data:`CALIBRATION_POINTS` steps."""
    from sklearn.isotonic import IsotonicRegression  # lazy: sklearn ~1.6 s

    scores = np.concatenate([m[g.valid] for g, m in zip(grids, matrices, strict=True)])
    linked = np.concatenate([(g.labels > 0)[g.valid] for g in grids])
    finite = np.isfinite(scores)
    fitted = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
        scores[finite].astype(np.float64), linked[finite].astype(np.float64))
    x, y = fitted.X_thresholds_, fitted.y_thresholds_
    if len(x) > CALIBRATION_POINTS:
        keep = np.unique(np.linspace(0, len(x) - 1, CALIBRATION_POINTS).round().astype(int))
        x, y = x[keep], y[keep]
    return {"x": [round(float(v), 6) for v in x], "y": [round(float(v), 6) for v in y]}


# one BLAS thread a fit, as LightGBM's: the folds' fits run side by side, and a BLAS thread
# pool each spins on a busy machine (the logistic regression's CPU ten times over)
@threadpool_limits.wrap(limits=1)
def choose_head(grids: Sequence[Grid], members: Sequence[str], task: str | None, folds: int,
                seed: int, kinds: Sequence[str], tick: Callable[[], None],
                untuned: dict[str, Any]) -> dict[str, Any]:
    """Every candidate scored out of fold; the best, fitted on every query, with its
    calibration. A learned model is the best only where it beats the best of the members
    and the untuned fusion (``untuned``'s spec) out of fold with a paired t-test's p <
    :data:`ALPHA`: what it gains on this corpus's queries must be more than their noise to
    be worth a ranker that may meet other queries. Returns the head (``members``, ``model``,
    or the untuned fusion's ``method`` and ``weights``, or one member's score;
    ``calibration``) and the table."""
    fold_of = _folds(grids, folds, seed)
    names = feature_names(members)
    candidates = {m: [g.parts[i] for g in grids] for i, m in enumerate(members)}
    candidates["untuned"] = [g.untuned for g in grids]
    for kind in kinds:
        oof = [np.full(g.labels.shape, -np.inf, np.float32) for g in grids]

        def fitted(fold: int, kind: str = kind) -> list[tuple[np.ndarray, np.ndarray]]:
            """Per grid, the fold's rows and their scores by a model fitted without them."""
            train = [np.flatnonzero((f >= 0) & (f != fold)) for f in fold_of]
            model = _fit(kind, *_rows(grids, train, seed), names, seed)
            held = [np.flatnonzero(f == fold) for f in fold_of]
            return [(rows, _score(model, grid, rows) if len(rows) else np.zeros((0, 0)))
                    for grid, rows in zip(grids, held, strict=True)]

        # the folds' fits are independent: one a core (each fit on one thread)
        with ThreadPoolExecutor(max(1, min(folds, os.cpu_count() or 1))) as workers:
            for scored in workers.map(fitted, range(folds)):
                for g, (rows, scores) in enumerate(scored):
                    if len(rows):
                        oof[g][rows] = scores
                tick()
        candidates[f"learned ({kind})"] = oof
    table: dict[str, float] = {}
    ap: dict[str, np.ndarray] = {}
    for key, matrices in candidates.items():
        table[key], ap[key] = _objective(grids, matrices, task)
    singles = {m: table[m] for m in members}
    best_single = max(singles, key=singles.__getitem__)
    plain = max((k for k in table if not k.startswith("learned")),
                key=lambda key: (table[key], key in singles))
    best = max(table, key=lambda key: (table[key], key in singles))
    p_plain = _p(ap[best], ap[plain]) if best != plain else None
    if best != plain and (p_plain is None or p_plain >= ALPHA):
        best = plain  # a model that does not beat the plain rankers for sure is not shipped
    out: dict[str, Any] = {
        "out_of_fold_map": {k: round(v, 4) for k, v in table.items()},
        "best_single": best_single, "best_plain": plain,
        "p_learned_against_plain": p_plain, "chosen": best,
        "gain_over_best_single": round(table[best] / table[best_single], 4)
        if table[best_single] else None,
        "p_against_best_single": _p(ap[best], ap[best_single]),
        "held_out_groups": len(ap[best])}
    calibration = _calibration(grids, candidates[best])
    if best.startswith("learned"):
        kind = best[len("learned ("):-1]
        everything = [np.flatnonzero(f >= 0) for f in fold_of]
        model = _fit(kind, *_rows(grids, everything, seed), names, seed)
        out["head"] = {"members": list(members), "model": model.to_dict(),
                       "calibration": calibration}
        tick()
    elif best == "untuned":
        out["head"] = {"members": list(untuned["members"]), "model": None,
                       "method": untuned["method"], "weights": list(untuned["weights"]),
                       "calibration": calibration, "untuned": True}
    else:
        out["head"] = {"members": [best], "model": None, "calibration": calibration}
    return out


def _p(a: np.ndarray, b: np.ndarray) -> float | None:
    """The paired t-test's p of two per-group AP arrays (None when they are the same)."""
    from scipy import stats  # lazy: scipy ~0.2 s

    if len(a) < 2 or np.allclose(a, b):
        return None
    found = stats.ttest_rel(a, b).pvalue
    return round(float(found), 4) if np.isfinite(found) else None


def _fit_variant(corpus: Corpus, hidden: bool, members: list[str], heads: dict[str, list[str]],
                 untuned: dict[str, Any], task: str | None, folds: int, seed: int,
                 kinds: Sequence[str], progress: Callable[[str, int], Callable[[int], None]]
                 | None, label: str, stand_ins: Stand | None = None,
                 pooled: tuple[list[Any], list[Any]] | None = None) -> dict[str, Any]:
    """One ranker (``heads``: per head name the members it reads, a subset of ``members``)
    chosen on the train and dev pools (``hidden``: the hidden-links protocol; ``pooled``:
    those pools and their hidden links, when already read); ``stand_ins`` score the members
    they name (the adapters, out of fold)."""
    pools, links = pooled if pooled is not None else tuning_pools(corpus, seed, hidden=hidden)
    linked = sum(queries_of(p) for p in pools)
    if linked < MIN_QUERIES:
        raise TooFewLinks(f"{corpus.root}: {linked} train and dev queries have a link to learn "
                          f"{label} from; at least {MIN_QUERIES} are needed "
                          f"({_what_helps(corpus, pools)})")
    stores: list[dict[str, np.ndarray]] = [{} for _ in pools]
    scored = [*members, *(["citation"] if hidden else [])]
    scored += [m for m in untuned["members"] if m not in scored]
    pools = score_members(corpus, pools, scored, links, stores, progress, label, stand_ins)
    masks = [np.isfinite(s["citation"]) & (s["citation"] > 0) if hidden else None
             for s in stores]
    steps = len(heads) * (len(kinds) * folds + 1)
    advance = progress(f"{label}: models fitted out of fold", steps) if progress else None
    out: dict[str, Any] = {
        "queries": {p.split: queries_of(p) for p in pools},
        "members_tried": members}
    for head, chosen in heads.items():
        grids = [_grid(corpus, pool, store, chosen, untuned, task, mask)
                 for pool, store, mask in zip(pools, stores, masks, strict=True)]
        out[head] = choose_head(grids, chosen, task, folds, seed, kinds,
                                (lambda: advance(1)) if advance else (lambda: None), untuned)
    return out


def _what_helps(corpus: Corpus, pools: Sequence[Any]) -> str:
    """What would give more queries: vectors of the papers that lack them, else more links."""
    model = default_dense(corpus)
    for split in ("train", "dev"):
        try:
            missing = common_pool(corpus, load_pool(corpus, split), [model])[1][model]
        except SDSMError:
            continue
        if missing["missing_vectors"]:
            return (f"{missing['missing_vectors']} {split} papers have no vectors of {model}: "
                    f"run 'openmsd embed {corpus.root} --model {model} --split {split}'")
    return ("more papers with resolved references help: fetch with --citing, or rebuild the "
            "relations with 'openmsd relations CORPUS --dev 0.1'")


def _spec(name: str, found: dict[str, Any], untuned: dict[str, Any]) -> dict[str, Any]:
    """The stored spec of a fitted ranker: a learned fusion of its heads, or the untuned
    fusion with its calibration when that won out of fold."""
    paper = found["paper"]["head"]
    selection = {"queries": found["queries"],
                 **{head: {k: v for k, v in found[head].items() if k != "head"}
                    for head in ("paper", "free_text") if head in found}}
    if paper.get("untuned"):
        return {**untuned, "tuned": False, "calibration": paper["calibration"],
                "selection": selection}
    members = list(dict.fromkeys(
        [*paper["members"], *found.get("free_text", {}).get("head", {}).get("members", [])]))
    spec: dict[str, Any] = {"members": members, "method": LEARNED, "paper": paper,
                            "tuned": True, "selection": selection}
    free = found.get("free_text", {}).get("head")
    if free is not None:
        spec["free_text"] = free
    return spec


def _train_queries(pooled: Iterable[tuple[list[Any], list[Any]]]) -> set[str]:
    """The train split's papers that a fit queries (rows of the train pools)."""
    return {pool.ids[int(r)] for pools, _ in pooled for pool in pools if pool.split == "train"
            for r in pool.rows}


def train_ranker(corpus: Corpus, seed: int = 0, folds: int = FOLDS,
                 kinds: Sequence[str] = KINDS,
                 progress: Callable[[str, int], Callable[[int], None]] | None = None,
                 adapters: bool = True, contexts: bool = True) -> dict[str, Any]:
    """Fit ``hybrid`` (with its free-text head) and ``hybrid-graph`` on ``corpus``'s train and
    dev splits (see the module) and save them to ``CORPUS/index/ranker.json``; returns what was
    saved, with ``report``: per ranker what was tried, out of fold, and what was kept, and
    ``adapters``: the adapters trained first (``adapters``: for each dense model without one,
    :func:`openmsd.experiment.adapters.train_adapters`) and ``citrec_prefetch``: recommend's
    first stage learned from the corpus's citation contexts, where it has them
    (:func:`openmsd.train.train_prefetch_head`; ``contexts`` False: not learned, the stored
    first stage left as it is)."""
    if not 2 <= folds <= 20:
        raise TuneError(f"--folds {folds}: expected 2 to 20")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise TuneError(f"unknown model kind {', '.join(unknown)}: expected {', '.join(KINDS)}")
    if not dense_models(corpus):
        raise TuneError(f"{corpus.root}: no paper vectors; run 'openmsd embed {corpus.root}' "
                        "first: the ranker learns how far to trust each model's scores")
    started = time.perf_counter()
    trained = train_adapters(corpus, progress) if adapters else []
    text = text_signals(corpus)
    reading = progress("reading the train and dev pools", 2) if progress else None
    splits = split_pools(corpus)  # read once: both protocols draw on them
    if reading:
        reading(1)
    pooled = {hidden: tuning_pools(corpus, seed, hidden=hidden, splits=splits)
              for hidden in (False, True)}
    if reading:
        reading(1)
    stand_ins = {str(RankerSpec.parse(name)): scorer for name, scorer
                 in held_out_members(corpus, folds, seed, progress,
                                     _train_queries(pooled.values())).items()}
    metadata = list(METADATA_SCORERS)
    spec: dict[str, Any] = {}  # both rankers anew (a damaged file is replaced)
    report: dict[str, Any] = {}
    untuned = default_spec(HYBRID, corpus).as_json()
    fitted = _fit_variant(corpus, False, [*text, *metadata],
                          {"paper": [*text, *metadata], "free_text": text}, untuned, None,
                          folds, seed, kinds, progress, HYBRID, stand_ins, pooled[False])
    spec[HYBRID] = _spec(HYBRID, fitted, untuned)
    report[HYBRID] = fitted
    graph_members = [*text, *metadata, *GRAPH_SIGNALS]
    try:
        untuned = default_spec(HYBRID_GRAPH, corpus).as_json()
        fitted = _fit_variant(corpus, True, graph_members, {"paper": graph_members}, untuned,
                              "citation", folds, seed, kinds, progress, HYBRID_GRAPH,
                              stand_ins, pooled[True])
        spec[HYBRID_GRAPH] = _spec(HYBRID_GRAPH, fitted, untuned)
        report[HYBRID_GRAPH] = fitted
    except TooFewLinks as error:
        spec.pop(HYBRID_GRAPH, None)
        report[HYBRID_GRAPH] = {"skipped": str(error)}
    seconds = round(time.perf_counter() - started, 1)
    for entry in (spec.get(HYBRID), spec.get(HYBRID_GRAPH)):
        if entry is not None:
            entry["trained"] = {"by": "openmsd train ranker", "folds": folds, "seed": seed,
                                "seconds": seconds}
    save_tuned(corpus, spec)
    citrec = (train_prefetch_head(corpus, PrefetchConfig(folds=folds, seed=seed), progress)
              if contexts else {"skipped": "recommend's first stage not learned (--no-contexts): "
                                           "it stays as it was"})
    return {**spec, "report": report, "seconds": seconds, "adapters": trained,
            "citrec_prefetch": citrec}
