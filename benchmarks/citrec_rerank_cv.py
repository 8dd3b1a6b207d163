"""The rerank stage's feature selection: grouped k-fold cross-validation by citing paper over the
training + dev locations (never the test ones), one row per feature set.

Each feature set is a learned fusion (:func:`openmsd.rank.fit_fusion`: logistic regression
over the prefetch's −log rank and the z-scores of the other signals among the prefetched
:data:`~openmsd.rank.PREFETCH_DEPTH`) fitted on the other folds' locations and evaluated on a
fold's (a fold holds whole citing papers, so a manuscript-level signal is never learnt and
tested on one paper); ``cv`` is Recall@10 out of fold over all train + dev locations (with
``--repeats`` > 1, the mean over shuffled fold assignments), ``dev`` the fusion fitted on the
training locations and evaluated on the official dev papers (the seed's split).

Signals: ``manuscript`` (the untrained start's whole-manuscript cosine,
:func:`openmsd.rank.profile_scores`), ``sentence_bm25`` / ``sentence_dense`` (the location's
own sentence), ``fundamental_bm25`` / ``fundamental_dense`` (the fundamental context, with
``--fundamental``), ``sentence_en`` / ``fundamental_en`` (the English-only ``minilm-en`` on
English-English pairs only, own sentence / fundamental context; with ``--english``),
and the citation-graph signals of :mod:`openmsd.rank.citrec.graph`
(``popularity``, ``neighbours``, ``cocited``): only the reference lists of citing papers the
location may see: never its own paper's, never a test paper's or one of the fold being
evaluated (the dev papers for ``dev``), and in a time split none newer than its paper.

Reads the ``--out`` directory of a :mod:`benchmarks.citrec_table3` run (``data.pickle``,
``prefetch.npy``, ``signals.npz``, ``sentence_vectors.pt`` and the ``seedN/start`` model)::

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/citrec_rerank_cv.py /tmp/citrec16/s10/uxr0 \\
        --split time --out /tmp/citrec16c/cv-ux-time
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.eval import Queries, score_rows
from openmsd.models import load_model, load_sentence_caches, load_splits
from openmsd.rank import (
    GRAPH_FEATURES,
    NONNEGATIVE,
    PREFETCH_DEPTH,
    PaperContexts,
    fit_fusion,
    graph_scores,
    profile_scores,
    recall_at,
    rerank_rows,
    split_locations,
)
from openmsd.train import CitrecConfig

SHIPPED = ("manuscript", "sentence_bm25", "sentence_dense")
"""The manuscript and own-sentence set (with the prefetch)."""
WITH_POPULARITY = (*SHIPPED, "popularity")
"""That set with popularity (its weight ≥ 0)."""
SETS: dict[str, tuple[str, ...]] = {
    "prefetch": (),
    "+ manuscript": ("manuscript",),
    "+ own sentence: BM25": ("sentence_bm25",),
    "+ own sentence: e5": ("sentence_dense",),
    "+ own sentence: BM25 + e5": ("sentence_bm25", "sentence_dense"),
    "+ fundamental: BM25": ("fundamental_bm25",),
    "+ fundamental: e5": ("fundamental_dense",),
    "+ manuscript + own sentence": SHIPPED,
    "+ manuscript + own sentence + fundamental": (*SHIPPED, "fundamental_bm25",
                                                   "fundamental_dense"),
    "+ graph: popularity": ("popularity",),
    "+ graph: neighbours": ("neighbours",),
    "+ graph: cocited": ("cocited",),
    "+ graph: all three": GRAPH_FEATURES,
        "+ manuscript + own sentence + neighbours": (*SHIPPED, "neighbours"),
    "+ manuscript + own sentence + cocited": (*SHIPPED, "cocited"),
    "+ manuscript + own sentence + neighbours + cocited": (*SHIPPED, "neighbours", "cocited"),
    "+ manuscript + own sentence + all three graph": (*SHIPPED, *GRAPH_FEATURES),
    "+ own sentence: minilm-en (en-en)": ("sentence_en",),
    "+ fundamental: minilm-en (en-en)": ("fundamental_en",),
    "+ own sentence + fundamental: minilm-en": ("sentence_en", "fundamental_en"),
    "+ manuscript + own sentence + popularity ≥ 0": WITH_POPULARITY,
    "+ popularity + own sentence: minilm-en": (*WITH_POPULARITY, "sentence_en"),
    "+ popularity + fundamental: minilm-en": (*WITH_POPULARITY, "fundamental_en"),
    "+ popularity + both minilm-en": (*WITH_POPULARITY, "sentence_en", "fundamental_en"),
    "+ popularity − own sentence e5 + own sentence minilm-en": (
        "manuscript", "sentence_bm25", "popularity", "sentence_en"),
}
"""The feature sets compared (the prefetch's rank is in each)."""
FUNDAMENTAL = {"fundamental_bm25": "bm25", "fundamental_dense": "e5-small-multilingual"}
ENGLISH = "minilm-en@en"
"""The English-only model, heard only where the location's text and the candidate are both
English (``-inf`` elsewhere: z-score 0 in the fusion); ``--english``."""
ENGLISH_SIGNALS = ("sentence_en", "fundamental_en")


def english_signals(data: Any, candidates: list[str], column: dict[str, int]
                    ) -> dict[str, np.ndarray]:
    """``sentence_en`` / ``fundamental_en``: :data:`ENGLISH`'s scores of each location's own
    sentence / fundamental context (all locations × candidates; ``-inf``: not both English),
    with how many pairs it hears (stderr)."""
    locations = data.locations
    queries = Queries(locations, candidates, column)
    own = [loc.sentences[loc.at] for loc in locations]
    out = {"sentence_en": np.asarray(score_rows(ENGLISH, data, queries, texts=own), np.float64),
           "fundamental_en": np.asarray(score_rows(ENGLISH, data, queries), np.float64)}
    for name, scores in out.items():
        heard = np.isfinite(scores)
        print(f"{name}: {heard.any(1).sum()} of {len(locations)} locations and "
              f"{heard.any(0).sum()} of {len(candidates)} candidates English "
              f"({heard.mean():.1%} of pairs heard)", file=sys.stderr, flush=True)
    return out


class Inputs:
    """A table3 run's locations, roles and score matrices (all locations × candidates)."""

    def __init__(self, directory: Path, split: str, seed: int, model: Path | None,
                 fundamental: bool, english: bool = False):
        started = time.perf_counter()
        self.data = pickle.loads((directory / "data.pickle").read_bytes())
        self.prefetch = np.load(directory / "prefetch.npy")
        self.candidates = sorted(self.data.papers)
        self.column = {p: i for i, p in enumerate(self.candidates)}
        self.split = split
        config = CitrecConfig(corpus=str(directory), out=str(directory), seed=seed, split=split)
        learn, _, self.test = split_locations(self.data, config.test_fraction, seed, split)
        _, _, self.dev = split_locations(self.data, config.dev_fraction, seed, split, learn)
        locations = self.data.locations
        self.rows = np.array([i for i, loc in enumerate(locations)
                              if loc.citing_id not in self.test])
        self.train_rows = np.array([i for i in self.rows
                                    if locations[i].citing_id not in self.dev])
        self.dev_rows = np.array([i for i in self.rows if locations[i].citing_id in self.dev])
        self.test_rows = np.array([i for i, loc in enumerate(locations)
                                   if loc.citing_id in self.test])
        self.groups = np.array([locations[i].citing_id for i in self.rows])
        signals = directory / "signals.npz"
        self.signals: dict[str, np.ndarray] = dict(np.load(signals)) if signals.is_file() else {}
        load_sentence_caches(directory / "sentence_vectors.pt")
        load_splits(directory / "splits.pickle")  # the candidates' sentences (pySBD: minutes)
        start = load_model(str(model or directory / f"seed{seed}" / "start")).model
        self.signals["manuscript"] = profile_scores(start, locations, self.candidates,
                                                    PaperContexts(self.data.papers))
        if fundamental:
            queries = Queries(locations, self.candidates, self.column)
            for feature, ranker in FUNDAMENTAL.items():
                self.signals[feature] = np.asarray(score_rows(ranker, self.data, queries),
                                                   np.float64)
        if english:  # kept beside the run's own signals (the same for every split)
            cached = directory / "signals_en.npz"
            if not cached.is_file():
                partial = cached.with_suffix(".partial")
                with partial.open("wb") as file:
                    np.savez(file, **english_signals(self.data, self.candidates, self.column))
                partial.replace(cached)
            self.signals.update(np.load(cached))
        self.relevant = [[self.column[c] for c in loc.cited] for loc in locations]
        print(f"{directory}: {len(locations)} locations ({len(self.train_rows)} train, "
              f"{len(self.dev_rows)} dev of {len(self.dev)} papers, {len(self.test)} test "
              f"papers), {len(self.candidates)} candidates, "
              f"{sum(map(len, self.data.reference_lists.values()))} links of "
              f"{len(self.data.reference_lists)} citing papers; "
              f"{time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)

    def with_graph(self, hidden: set[str]) -> dict[str, np.ndarray]:
        """All signals, the graph ones computed with ``hidden`` citing papers' links unseen
        (besides the test papers and each location's own)."""
        return {**self.signals, **graph_scores(
            self.data, self.data.locations, self.candidates, self.prefetch,
            self.signals["manuscript"], hidden | self.test, self.split)}


class Also:
    """Another corpus's training locations (its run's seed split), added to every fit as
    ``train citrec --also`` adds them (TALN's fusion fitted with unarXive's locations too)."""

    def __init__(self, inputs: Inputs):
        self.rows = inputs.train_rows
        self.prefetch = inputs.prefetch[self.rows]
        signals = inputs.with_graph(set(inputs.dev))  # as training sees them
        self.signals = {n: v[self.rows] for n, v in signals.items()}
        self.relevant = [inputs.relevant[i] for i in self.rows]


def fit_rows(inputs: Inputs, signals: dict[str, np.ndarray], fit: np.ndarray,
             names: Sequence[str], also: Sequence[Also] = ()
             ) -> tuple[np.ndarray, dict[str, np.ndarray], list[list[int]]]:
    """The prefetch, signals and relevant columns of ``fit`` rows and of every ``also``
    corpus's training rows (padded to the widest candidate set with −inf)."""
    parts = [(inputs.prefetch[fit], {n: signals[n][fit] for n in names},
              [inputs.relevant[i] for i in fit])]
    parts += [(a.prefetch, {n: a.signals[n] for n in names}, a.relevant) for a in also]
    width = max(p.shape[1] for p, _, _ in parts)

    def padded(matrix: np.ndarray) -> np.ndarray:
        return np.pad(matrix, ((0, 0), (0, width - matrix.shape[1])), constant_values=-np.inf)

    return (np.vstack([padded(p) for p, _, _ in parts]),
            {n: np.vstack([padded(s[n]) for _, s, _ in parts]) for n in names},
            [r for _, _, relevant in parts for r in relevant])


def fold_recall(inputs: Inputs, signals: dict[str, np.ndarray], fit: np.ndarray,
                held: np.ndarray, names: Sequence[str],
                nonnegative: Sequence[str] = NONNEGATIVE, also: Sequence[Also] = ()
                ) -> list[float]:
    """Per-location Recall@10 on ``held`` rows of the fusion of ``names`` fitted on ``fit``
    rows and ``also``'s (``names`` empty: the prefetch's order)."""
    locations = inputs.data.locations
    scores = inputs.prefetch[held]
    if names:
        fusion = fit_fusion(*fit_rows(inputs, signals, fit, names, also),
                            ("prefetch", *names), nonnegative=nonnegative)
        scores = rerank_rows(scores, {n: signals[n][held] for n in names}, fusion,
                             PREFETCH_DEPTH)
    return [recall_at(scores[[j]], [locations[i]], inputs.candidates)
            for j, i in enumerate(held)]


def grouped_folds(groups: np.ndarray, folds: int, repeat: int
                  ) -> list[tuple[np.ndarray, np.ndarray]]:
    """(fit, held) index pairs, whole groups per fold: scikit-learn's GroupKFold for repeat 0
    (the shipped choice's folds), else the groups shuffled by ``repeat``, dealt round-robin."""
    from sklearn.model_selection import GroupKFold

    if repeat == 0:
        return list(GroupKFold(folds).split(groups, groups=groups))
    order = np.random.default_rng(repeat).permutation(np.unique(groups))
    fold_of = {g: k % folds for k, g in enumerate(order)}
    assigned = np.array([fold_of[g] for g in groups])
    return [(np.flatnonzero(assigned != k), np.flatnonzero(assigned == k))
            for k in range(folds)]


def cross_validate(inputs: Inputs, sets: dict[str, tuple[str, ...]], folds: int,
                   repeats: int, progress: Callable[[str], None],
                   nonnegative: Sequence[str] = NONNEGATIVE, also: Sequence[Also] = ()
                   ) -> dict[str, dict[str, Any]]:
    """{set: {"cv": out-of-fold R@10 (mean over repeats), "cv_repeats": [...], "dev": R@10
    fitted on train, evaluated on dev}}."""
    out: dict[str, dict[str, Any]] = {name: {"cv_repeats": []} for name in sets}
    for repeat in range(repeats):
        values: dict[str, list[float]] = {name: [] for name in sets}
        for fit, held in grouped_folds(inputs.groups, folds, repeat):
            signals = inputs.with_graph(set(inputs.groups[held]))
            for name, names in sets.items():
                values[name] += fold_recall(inputs, signals, inputs.rows[fit],
                                            inputs.rows[held], names, nonnegative, also)
        for name in sets:
            out[name]["cv_repeats"].append(round(float(np.mean(values[name])), 4))
        progress(f"repeat {repeat}: " + ", ".join(f"{n} {out[n]['cv_repeats'][-1]:.4f}"
                                                  for n in sets))
    dev_signals = inputs.with_graph(set(inputs.dev))
    for name, names in sets.items():
        out[name]["cv"] = round(float(np.mean(out[name]["cv_repeats"])), 4)
        out[name]["dev"] = round(float(np.mean(fold_recall(
            inputs, dev_signals, inputs.train_rows, inputs.dev_rows, names, nonnegative,
            also))), 4)
        if names:
            fusion = fit_fusion(*fit_rows(inputs, dev_signals, inputs.train_rows, names, also),
                                ("prefetch", *names), nonnegative=nonnegative)
            out[name]["weights"] = [round(c, 2) for c in fusion.coefficients]
    return out


def test_read(inputs: Inputs, sets: dict[str, tuple[str, ...]],
              nonnegative: Sequence[str] = NONNEGATIVE, also: Sequence[Also] = ()
              ) -> dict[str, dict[str, Any]]:
    """{set: {"test": R@10 on the test locations}} of each set's fusion fitted on the training
    locations (as ``train citrec`` fits it, the untrained start's manuscript cosine: the
    ``fused:start`` row; graph signals with the dev papers' links hidden while fitting, the
    test papers' always). Read once, after choosing by CV."""
    fit_signals = inputs.with_graph(set(inputs.dev))
    test_signals = inputs.with_graph(set())
    out = {}
    for name, names in sets.items():
        held = inputs.test_rows
        scores = inputs.prefetch[held]
        if names:
            fusion = fit_fusion(*fit_rows(inputs, fit_signals, inputs.train_rows, names, also),
                                ("prefetch", *names), nonnegative=nonnegative)
            scores = rerank_rows(scores, {n: test_signals[n][held] for n in names}, fusion,
                                 PREFETCH_DEPTH)
        out[name] = {"test": round(recall_at(scores, [inputs.data.locations[i] for i in held],
                                             inputs.candidates), 4)}
        print(f"test {name}: {out[name]['test']:.4f}", file=sys.stderr, flush=True)
    return out


def prefetch_recall(inputs: Inputs, ks: Sequence[int] = (10, 100, 200)
                    ) -> dict[str, dict[str, float]]:
    """The prefetch's Recall@k over the train + dev locations and over the dev ones (how much
    the rerank stage can find: comparing prefetch rankers, ``citrec_table3.py --prefetch``)."""
    out = {}
    for part, rows in (("train+dev", inputs.rows), ("dev", inputs.dev_rows)):
        locations = [inputs.data.locations[i] for i in rows]
        out[part] = {f"Recall@{k}": round(recall_at(inputs.prefetch[rows], locations,
                                                    inputs.candidates, k), 4) for k in ks}
    return out


def markdown(results: dict[str, dict[str, Any]], inputs: Inputs,
             recall: dict[str, dict[str, float]]) -> str:
    base = results.get("prefetch", {})
    lines = [f"| features (+ the prefetch's −log rank) | CV R@10 (prefetch "
             f"{100 * base.get('cv', 0):.1f}) | dev R@10 (prefetch "
             f"{100 * base.get('dev', 0):.1f}) | weights (fitted on train) |",
             "|---|---|---|---|"]
    for name, row in results.items():
        spread = (f" ({', '.join(f'{100 * v:.1f}' for v in row['cv_repeats'])})"
                  if len(row["cv_repeats"]) > 1 else "")
        lines.append(f"| {name} | {100 * row['cv']:.1f}{spread} | {100 * row['dev']:.1f} | "
                     f"{', '.join(str(w) for w in row.get('weights', []))} |")
    lines += ["", f"{len(inputs.rows)} train + dev locations of {len(set(inputs.groups))} "
              f"citing papers ({len(inputs.dev_rows)} dev of {len(inputs.dev)}); split "
              f"{inputs.split}; Recall@10 in %. The prefetch's Recall@10 / @100 / @200: "
              + "; ".join(f"{part} " + " / ".join(f"{100 * v:.1f}" for v in at.values())
                          for part, at in recall.items()) + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a citrec_table3.py --out directory")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", choices=["random", "time"], default="time")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", type=Path, help="the untrained start (default: "
                        "DIRECTORY/seedN/start)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=1,
                        help="fold assignments (the first GroupKFold's, then shuffled ones)")
    parser.add_argument("--sets", nargs="+", choices=list(SETS), help="default: all")
    parser.add_argument("--fundamental", action="store_true",
                        help="also the fundamental context's BM25 and e5 scores (minutes)")
    parser.add_argument("--english", action="store_true",
                        help=f"also {ENGLISH} on the own sentence and the fundamental context, "
                        "English-English pairs only (minutes)")
    parser.add_argument("--also", nargs=2, action="append", default=[],
                        metavar=("DIR", "SPLIT"), help="another corpus's citrec_table3 --out "
                        "directory (and its split) whose training locations join every fit")
    parser.add_argument("--test", action="store_true",
                        help="no CV: each set fitted on the training locations and read on the "
                        "test locations (once, after choosing)")
    parser.add_argument("--test-best", nargs="*", metavar="SET",
                        help="after the CV, read the test locations once: the set of best CV "
                        "(ties: the fewer features) and these sets beside it")
    parser.add_argument("--free-sign", action="store_true",
                        help="let the graph features' weights be negative too (what the "
                        "shipped fusion forbids, rerank.NONNEGATIVE)")
    args = parser.parse_args()
    sets = {n: SETS[n] for n in (args.sets or SETS)}
    if not args.fundamental:
        sets = {n: f for n, f in sets.items() if not set(f) & set(FUNDAMENTAL)}
    if not args.english:
        sets = {n: f for n, f in sets.items() if not set(f) & set(ENGLISH_SIGNALS)}
    inputs = Inputs(args.directory, args.split, args.seed, args.model, args.fundamental,
                    args.english)
    start = args.model or args.directory / f"seed{args.seed}" / "start"
    also = [Also(Inputs(Path(d), split, args.seed, start, args.fundamental, args.english))
            for d, split in args.also]  # the same start's manuscript cosine
    nonnegative = () if args.free_sign else NONNEGATIVE
    if args.test:
        results = test_read(inputs, sets, nonnegative, also)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "rerank_test.json").write_text(json.dumps(
            {"directory": str(args.directory), "split": args.split, "seed": args.seed,
             "also": args.also, "test_locations": len(inputs.test_rows), "sets": results},
            indent=1))
        print("\n".join(f"| {n} | {100 * r['test']:.1f} |" for n, r in results.items()))
        return
    results = cross_validate(inputs, sets, args.folds, args.repeats,
                             lambda line: print(line, file=sys.stderr, flush=True),
                             nonnegative, also)
    args.out.mkdir(parents=True, exist_ok=True)
    recall = prefetch_recall(inputs)
    (args.out / "rerank_cv.json").write_text(json.dumps(
        {"directory": str(args.directory), "split": args.split, "seed": args.seed,
         "also": args.also,
         "folds": args.folds, "repeats": args.repeats, "free_sign": args.free_sign,
         "prefetch_recall": recall, "sets": results}, indent=1))
    text = markdown(results, inputs, recall)
    (args.out / "rerank_cv.md").write_text(text + "\n")
    print(text)
    if args.test_best is not None:  # the choice is the CV's, made before the test is read
        best = max(sets, key=lambda n: (results[n]["cv"], -len(sets[n])))
        read = {n: SETS[n] for n in [*args.test_best, best]}
        tested = test_read(inputs, read, nonnegative, also)
        (args.out / "rerank_test.json").write_text(json.dumps(
            {"chosen": best, "test_locations": len(inputs.test_rows), "sets": tested},
            indent=1))
        print(f"chosen by CV: {best}; test R@10 ({len(inputs.test_rows)} locations): "
              + ", ".join(f"{n} {100 * r['test']:.1f}" for n, r in tested.items()))


if __name__ == "__main__":
    main()
