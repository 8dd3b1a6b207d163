"""Relevance a reader can use: what the relevance ``related`` shows says about its results.

With a trained ranker (``openmsd train ranker``), a result's relevance is the calibrated
probability that it is linked to the query paper. Two figures say whether it means that:

1. **Reliability**, on a split's query papers under the protocols the ranker was trained on:
   ``hybrid-graph`` with half of each query's citation links hidden from the graph (a hidden
   link is a linked pair; the visible ones are left out of the list, as in training), and
   ``hybrid`` without the graph (a pair linked by citation, co-citation or shared references).
   Each query's top ten within the split's papers, the pairs binned by their relevance against
   the share of them that are linked: Brier score and expected calibration error
   (scikit-learn), beside the same figures for the peer: the untuned fusion's own top ten,
   each result rated by its share of the list's best score (what relevance used to be).
2. **Spread**, over every paper's default ``related`` top ten (the user's path, every link
   visible): the relevance at each rank (quartiles), and the top tens that rate all ten at 0.9
   or more (a share of the best score rated the demo's whole top ten 91-100 %).

Corpora without a trained ranker (the demo and the shared samples, whose references seldom
point inside the sample) are built as a user would (ingest, relations, embed), and ``openmsd
train ranker``'s answer is recorded: their relevance is unrated (the result's rank is shown),
never a share.

    openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out taln
    openmsd relations taln --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    openmsd embed taln && openmsd embed taln --model minilm-en
    openmsd train ranker taln
    python benchmarks/relevance.py taln --split dev              # while developing
    python benchmarks/relevance.py taln --split test --record    # once, at the end

``--split test`` reads IDT and ODT together. ``--plot PATH`` draws the reliability diagram.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from non_papers import corpora
from record import write_record
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from openmsd.corpus import Corpus
from openmsd.eval import (
    Pool,
    check_protocol,
    common_pool,
    hide_links,
    load_pool,
    pool_papers,
)
from openmsd.rank import (
    HYBRID,
    HYBRID_GRAPH,
    Fusion,
    Queries,
    default_spec,
    load_scorer,
    ranker_path,
)
from openmsd.search import SearchService

K = 10
BINS = 10
PROTOCOLS = {HYBRID_GRAPH: "hidden-links", HYBRID: "text-only"}


def top_pairs(corpus: Corpus, pool: Pool, ranker: str, protocol: str
               ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], int]:
    """Each judged query's top :data:`K` within the pool, by the trained ``ranker`` with its
    calibrated relevance (``calibrated``) and by the untuned fusion with each result's share of
    its list's best score (``share_of_best``): per kind, the pairs' relevance and whether each
    is linked; and the number of queries."""
    pool, _ = common_pool(corpus, pool, [ranker])
    visible: set[tuple[str, str]] = set()
    hidden: list[tuple[str, str]] = []
    if protocol == "hidden-links":
        whole = pool
        pool, hidden = hide_links(pool, seed=0)
        gone = {frozenset(pair) for pair in hidden}
        cited = whole.judgements.filter(
            np.array([t == "citation" for t in whole.judgements["task"].to_pylist()]))
        visible = {(q, d) for q, d in zip(cited["query"].to_pylist(), cited["doc"].to_pylist(),
                                          strict=True) if frozenset((q, d)) not in gone}
    linked = set(zip(pool.judgements["query"].to_pylist(), pool.judgements["doc"].to_pylist(),
                     strict=True))
    papers = pool_papers(corpus, pool)
    cache: dict[str, Any] = {}
    trained = check_protocol(load_scorer(ranker, papers, hidden=hidden, cache=cache), protocol)
    entry = default_spec(ranker, corpus)
    untuned = Fusion(f"{ranker} (untuned)", [load_scorer(m, papers, hidden=hidden, cache=cache)
                                             for m in entry.members], entry.weights,
                     entry.method)
    ids = pool.ids
    position = {paper: i for i, paper in enumerate(ids)}
    queries = sorted({q for q, _ in linked})
    asked = Queries.of_rows(papers, [position[q] for q in queries])
    depth = K + max((sum(q == a for a, _ in visible) for q in queries), default=0)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for kind, scorer in (("calibrated", trained), ("share_of_best", untuned)):
        rows, scores = scorer.top_k(asked, depth)
        relevance, labels = [], []
        for query, row, score in zip(queries, rows, scores, strict=True):
            kept = [(int(r), float(v)) for r, v in zip(row, score, strict=True)
                    if r >= 0 and np.isfinite(v) and (query, ids[r]) not in visible][:K]
            if not kept:
                continue
            fused = np.array([v for _, v in kept])
            if kind == "calibrated":
                found = scorer.probability(fused)
                if found is None:
                    raise SystemExit(f"{corpus.root}: {ranker} has no calibration: run "
                                     f"'openmsd train ranker {corpus.root}' first")
            else:
                found = np.clip(fused / fused[0], 0.0, 1.0)
            relevance.extend(found.tolist())
            labels.extend((query, ids[r]) in linked for r, _ in kept)
        out[kind] = (np.array(relevance), np.array(labels, bool))
    return out, len(queries)


def reliability(chances: np.ndarray, linked: np.ndarray) -> dict[str, Any]:
    """Brier score, expected calibration error and the reliability table (equal-width bins:
    pairs, mean relevance, share linked) of probabilities ``chances`` of pairs ``linked``."""
    edges = np.linspace(0.0, 1.0, BINS + 1)
    which = np.clip(np.digitize(chances, edges[1:-1]), 0, BINS - 1)
    table, error = [], 0.0
    for b in range(BINS):
        inside = which == b
        if inside.any():
            mean, rate = float(chances[inside].mean()), float(linked[inside].mean())
            error += inside.sum() / len(chances) * abs(mean - rate)
            table.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "pairs": int(inside.sum()),
                          "mean_relevance": round(mean, 3), "share_linked": round(rate, 3)})
    rate, mean = calibration_curve(linked, chances, n_bins=BINS, strategy="uniform")
    return {"pairs": len(chances), "linked": int(linked.sum()),
            "brier": round(float(brier_score_loss(linked, chances)), 4),
            "expected_calibration_error": round(error, 4),
            "curve": {"mean_relevance": np.round(mean, 3).tolist(),
                      "share_linked": np.round(rate, 3).tolist()},
            "bins": table}


def spread(corpus: Corpus, ranker: str = HYBRID_GRAPH) -> dict[str, Any]:
    """Over every paper's default ``related`` top ten: relevance quartiles at each rank, the
    lists rated all 0.9 or more, and how many results are unrated."""
    service = SearchService(corpus)
    ids = [r[0] for r in corpus.connect().execute(
        "SELECT paper_id FROM papers ORDER BY paper_id").fetchall()]
    by_rank: list[list[float]] = [[] for _ in range(K)]
    all_high = unrated = lists = 0
    for paper_id in ids:
        results = service.related(paper_id, ranker, K)
        if not len(results):
            continue
        lists += 1
        rated = [r.relevance for r in results]
        unrated += sum(v is None for v in rated)
        for rank, value in enumerate(rated):
            if value is not None:
                by_rank[rank].append(value)
        all_high += len(rated) == K and all(v is not None and v >= 0.9 for v in rated)
    quartiles = {str(rank + 1): [round(float(q), 2) for q in
                                 np.percentile(values, [25, 50, 75])] if values else None
                 for rank, values in enumerate(by_rank)}
    return {"ranker": ranker, "lists": lists, "results": sum(map(len, by_rank)) + unrated,
            "unrated": unrated, "quartiles_by_rank": quartiles,
            "lists_all_at_least_0.9": all_high}


def untrained(inputs: list[Path], root: Path) -> dict[str, Any]:
    """A corpus built from ``inputs`` by the commands a user runs (ingest, relations, embed),
    and what ``openmsd train ranker`` answers (its relevance stays unrated when it trains
    none)."""
    run = [sys.executable, "-m", "openmsd"]
    for command in ([*run, "ingest", *map(str, inputs), "--out", str(root)],
                    [*run, "relations", str(root)], [*run, "embed", str(root)]):
        subprocess.run(command, check=True, capture_output=True)
    trained = subprocess.run([*run, "train", "ranker", str(root), "--no-contexts"],
                             capture_output=True, text=True)
    papers = Corpus(root).connect().execute("SELECT count(*) FROM papers").fetchone()[0]
    said = trained.stderr.strip().splitlines()[-1] if trained.stderr.strip() else ""
    return {"papers": papers, "trained": trained.returncode == 0,
            "train_ranker_says": said.replace(str(root), "CORPUS"),
            "relevance": "calibrated" if trained.returncode == 0 else "unrated"}


def plot(figures: dict[str, Any], path: Path) -> None:
    """The reliability diagram of each ranker and of the peer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(figures), figsize=(5 * len(figures), 4.6))
    for axis, (ranker, found) in zip(np.atleast_1d(axes), figures.items(), strict=True):
        axis.plot([0, 1], [0, 1], color="0.7", linestyle="--", label="perfectly calibrated")
        for key, label, style in (("calibrated", "relevance (calibrated)", "o-"),
                                  ("share_of_best", "share of the best score", "s:")):
            curve = found[key]["curve"]
            axis.plot(curve["mean_relevance"], curve["share_linked"], style, label=label)
        axis.set(title=f"{ranker} ({PROTOCOLS[ranker]}), top {K}", xlim=(0, 1), ylim=(0, 1),
                 xlabel="relevance shown", ylabel="share of pairs linked")
        axis.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial.png")
    figure.savefig(partial, dpi=110)
    os.replace(partial, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a corpus with a trained ranker")
    parser.add_argument("--split", choices=("dev", "test"), default="dev",
                        help="the query papers of the reliability figures (test: IDT and ODT)")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--plot", type=Path, default=None, help="write the reliability "
                        "diagram (PNG) here")
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/relevance.json")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    corpus = Corpus(args.corpus)
    if not ranker_path(corpus).exists():
        sys.exit(f"{corpus.root}: no trained ranker: run 'openmsd train ranker {corpus.root}'")
    splits = ("idt", "odt") if args.split == "test" else ("dev",)
    figures: dict[str, Any] = {}
    for ranker, protocol in PROTOCOLS.items():
        parts = [top_pairs(corpus, load_pool(corpus, split), ranker, protocol)
                 for split in splits]
        figures[ranker] = {"protocol": protocol, "queries": sum(n for _, n in parts)}
        for kind in ("calibrated", "share_of_best"):
            relevance, linked = (np.concatenate([found[kind][i] for found, _ in parts])
                                 for i in (0, 1))
            figures[ranker][kind] = reliability(relevance, linked)
        print(ranker, {k: v["expected_calibration_error"] for k, v in figures[ranker].items()
                       if isinstance(v, dict)}, flush=True)
    shown = spread(corpus)
    print("spread", shown, flush=True)
    others: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="relevance-") as tmp:
        for name, inputs in corpora(args.data).items():
            if name != "taln":
                others[name] = untrained(inputs, Path(tmp) / name)
                print(name, others[name], flush=True)
    if args.plot:
        plot(figures, args.plot)
    graph = figures[HYBRID_GRAPH]
    headline = (f"{graph['calibrated']['expected_calibration_error']:.3f} against "
                f"{graph['share_of_best']['expected_calibration_error']:.3f}")
    numbers = {
        "headline": headline,
        "headline_means": f"expected calibration error of related's relevance on TALN's "
                          f"{args.split} query papers ({HYBRID_GRAPH}, top {K}, hidden links): "
                          "the trained ranker's calibrated probability against a share of "
                          "the best score",
        "peer": "a share of the best score, on the same pairs",
        "split": args.split, "reliability": figures, "spread": shown, "untrained": others,
        "wall_s": round(time.perf_counter() - started, 1)}
    if args.record:
        notes = ("The ranker was trained on TALN's train and dev splits (out of fold); "
                 + ("the test splits (IDT, ODT) were read by this run once, for these "
                    "figures; nothing was chosen on them."
                    if args.split == "test" else "the figures are on its dev split."))
        print(write_record("relevance", numbers, load_before=load, notes=notes,
                           data={"corpus": str(args.corpus), "papers": Corpus(
                               args.corpus).connect().execute(
                               "SELECT count(*) FROM papers").fetchone()[0],
                               "splits": list(splits)}))
    else:
        print(headline)


if __name__ == "__main__":
    main()
