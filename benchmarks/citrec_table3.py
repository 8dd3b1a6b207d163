"""MP-BERT4CR Table 3 and Table 4 on a corpus: baselines, the untrained start, trained losses,
ablations and the two stages, over seeds (means ± sd).

For each seed: ``train citrec`` runs (the untrained start is ``max_steps = 0``; every run keeps
its best dev checkpoint, start included), then :func:`openmsd.eval.citrec.evaluate` on the
held-out citing papers of that seed (``--split time``: the newest citing papers are test and
candidates are no later than their citing paper). Rows: ``bm25``, the untrained encoder on the
fundamental context, ``prefetch`` (RRF of both), ``start`` (MP-BERT4CR untrained), each loss,
the ablations (``no-dyn``: no dynamic sampling; ``no-cocite``: no co-citation positives;
``uniform-neg``: negatives drawn uniformly; ``euclidean``: the paper's raw Euclidean hinge),
``no-hard``: no hard negatives from the prefetch; ``hinge-only``: no InfoNCE; ``contrastive``:
the InfoNCE alone), ``two-stage:mpt-src-tgt`` (it reranks the
prefetch's top 200) and ``fused:mpt-src-tgt`` (the prefetch's top 200 ordered by the model's
learned rerank fusion, :mod:`openmsd.rank.citrec.rerank`). The prefetch's scores and the
own-sentence BM25 / dense scores of every location are computed once (kept in ``--out``) and
shared by training (hard negatives, the fusion) and evaluation.
Frozen-encoder training (``train_layers = 0``) shares one sentence-vector cache in the process,
so each run after the first costs seconds. Writes JSON and a Markdown table::

    nice -n 10 python benchmarks/citrec_table3.py /tmp/ux --outside-references --split time \
        --seeds 0 1 2 --out /tmp/citrec/ux-time

``--record NAME`` also writes ``benchmarks/results/NAME.json``: every row's means and standard
deviations over the seeds, the trained heads against the untrained start and the two stages
against the prefetch and BM25 (positive >= 1 Recall@10), and the data's sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from record import write_record

from openmsd.corpus import Corpus
from openmsd.eval import GROUPS, PREFETCH, evaluate
from openmsd.experiment import all_locations_signals, prefetch_matrix
from openmsd.models import load_sentence_caches, load_splits, save_sentence_caches, save_splits
from openmsd.rank import CONTEXT_SIGNALS, SENTENCE_SIGNALS, CitrecData, load_citrec
from openmsd.train import CitrecConfig, CitrecRankers, train

BASELINES = ("bm25", "e5-small-multilingual", "prefetch")
"""The rankers each seed's table starts with (``--baselines``)."""
ABLATIONS: dict[str, dict[str, Any]] = {
    "start": {"max_steps": 0},
    "mpt-src-tgt": {},
    "hinge-only": {"contrastive_weight": 0.0},
    "contrastive": {"loss": "contrastive"},
    "triplet": {"loss": "triplet"},
    "mpt-src": {"loss": "mpt-src"},
    "mpt-tgt": {"loss": "mpt-tgt"},
    "no-dyn": {"dynamic_sampling": False},
    "no-cocite": {"positives": 0},
    "uniform-neg": {"power": 0.0},
    "no-hard": {"hard_negatives": 0},
    "euclidean": {"distance": "euclidean", "margin": 1.0, "contrastive_weight": 0.0},
}
"""Each run changes one thing of the default (``mpt-src-tgt``: the paper's multi-positive
hinge + the in-batch InfoNCE, dynamic sampling, co-citation positives, negatives ∝ citation
count with 2 of 4 from the prefetch); ``hinge-only`` and ``euclidean`` are the paper's loss
alone (cosine, or raw Euclidean as it first collapsed)."""


def prepared(corpus: Path, out: Path, split: str, outside: bool, ranker: str = PREFETCH
             ) -> tuple[CitrecData, np.ndarray, dict[str, np.ndarray]]:
    """The corpus's locations, the prefetch's scores (``ranker``) and the rerank stage's
    own-sentence scores, computed once and kept in ``out`` (sentence splitting and the prefetch
    are most of a small run; a feature missing from the kept scores is added to them); the
    sentence vectors and the sentence splits (pySBD: minutes for the candidates of a corpus)
    kept there are loaded too."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data_file = out / "data.pickle"
    if data_file.is_file():
        data = pickle.loads(data_file.read_bytes())
    else:
        data = load_citrec(Corpus(corpus), outside)
        data_file.write_bytes(pickle.dumps(data))
    prefetch_file = out / "prefetch.npy"
    if prefetch_file.is_file():
        prefetch = np.load(prefetch_file)
    else:
        prefetch = prefetch_matrix(data, data.locations, sorted(data.papers), split, ranker)
        np.save(prefetch_file, prefetch)
    signals_file = out / "signals.npz"
    signals = dict(np.load(signals_file)) if signals_file.is_file() else {}
    if {*SENTENCE_SIGNALS, *CONTEXT_SIGNALS} - set(signals):
        signals = {**all_locations_signals(data, sorted(data.papers), split, set(signals)),
                   **signals}
        np.savez(signals_file, **signals)
    print(f"{corpus}: data and prefetch of {len(data.locations)} locations: "
          f"{time.perf_counter() - started:.0f} s; "
          f"{load_sentence_caches(out / 'sentence_vectors.pt')} cached sentence vectors, "
          f"{load_splits(out / 'splits.pickle')} split texts",
          file=sys.stderr, flush=True)
    return data, prefetch, signals


def run(corpus: Path, out: Path, seeds: list[int], split: str, outside: bool,
        runs: list[str], common: dict[str, Any], also: dict[Path, Path] | None = None,
        baselines: tuple[str, ...] = BASELINES, variants: dict[str, dict[str, Any]] | None = None,
        dev_only: bool = False, rerank: tuple[str, ...] = ("mpt-src-tgt",),
        ranker: str = PREFETCH) -> dict[str, Any]:
    """``also``: more corpora to train on (``train citrec --also``), each with the output
    directory of its own run of this benchmark (its data and prefetch kept there);
    ``variants``: more runs (name → config changes) beside :data:`ABLATIONS`; ``dev_only``:
    train and report the dev histories, no test evaluation (choosing a setting); ``rerank``:
    the runs whose two-stage and fused rows are given; ``ranker``: the prefetch (its rows,
    the hard negatives and the fusion all read it)."""
    changes = {**ABLATIONS, **(variants or {})}
    results: dict[str, Any] = {"seeds": {}, "training": {}}
    data, prefetch, signals = prepared(corpus, out, split, outside, ranker)
    caches = out / "sentence_vectors.pt"
    extra = [prepared(c, d, split, outside, ranker) for c, d in (also or {}).items()]
    matrices = {id(d): m for d, m, _ in [(data, prefetch, signals), *extra]}
    own = {id(d): s for d, _, s in [(data, prefetch, signals), *extra]}
    rankers = CitrecRankers(lambda d, *_: matrices[id(d)], lambda d, *_: own[id(d)])
    if also:
        common = {**common, "also": [str(c) for c in also]}
    memo_file = out / "scores.pickle"  # baseline rows of earlier runs (the same test sets)
    memo: dict[str, dict[str, np.ndarray]] = (pickle.loads(memo_file.read_bytes())
                                              if memo_file.is_file() else {})
    for seed in seeds:
        names = list(baselines)
        for run_name in runs:
            model_dir = out / f"seed{seed}" / run_name
            if not model_dir.is_dir():
                train(CitrecConfig(corpus=str(corpus), out=str(model_dir), seed=seed,
                                   split=split, outside_references=outside,
                                   **{**common, **changes[run_name]}),
                      rankers, progress=False, data=data,
                      also_data=[d for d, _, _ in extra])
                save_sentence_caches(caches)
                save_splits(out / "splits.pickle")
            manifest = json.loads((model_dir / "citrec_train.json").read_text())
            metrics = manifest["metrics"]
            results["training"][f"{run_name}/{seed}"] = {
                "seconds": metrics["train_seconds"], "steps": metrics["steps"],
                "best_step": metrics["best_step"], "start_dev": metrics["start_dev_recall@10"],
                "best_dev": metrics["best_dev_recall@10"],
                "fusion_weight": metrics.get("fusion_weight"),
                "rerank": metrics.get("rerank"),
                "dev_rerank": metrics.get("dev_rerank_recall@10"),
                "dev_prefetch": metrics.get("dev_prefetch_recall@10"),
                "sources": manifest["data"]["locations_per_source"],
                "dev_history": [(h["step"], h["dev_recall@10"], h.get("train_recall@10"),
                                 h.get("dev_top10_train_cited"))
                                for h in metrics["dev_history"]],
                "loss": [round(float(np.mean([h["loss"] for h in metrics["history"][i:i + 25]])), 3)
                         for i in range(0, len(metrics["history"]), 25)]}
            print(run_name, seed, results["training"][f"{run_name}/{seed}"], file=sys.stderr,
                  flush=True)
            names.append(str(model_dir))
        if dev_only:
            continue
        for chosen in (r for r in rerank if r in runs):
            best = str(out / f"seed{seed}" / chosen)
            names += [f"two-stage:{best}", f"fused:{best}"]
        results["seeds"][seed] = evaluate(Corpus(corpus), names, seed=seed, outside=outside,
                                          split=split, data=data, prefetch=prefetch,
                                          memo=memo)
        save_sentence_caches(caches)  # the test contexts' vectors, for the next process
        memo_file.write_bytes(pickle.dumps({test: {name: scores for name, scores in rows.items()
                                                   if not Path(name).is_dir()}
                                            for test, rows in memo.items()}))
        print(f"seed {seed} evaluated", file=sys.stderr, flush=True)
    return results


def summary(results: dict[str, Any]) -> dict[str, dict[str, dict[str, list[float]]]]:
    """{model: {group: {metric: [value per seed]}}}."""
    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for result in results["seeds"].values():
        for model, groups in result["models"].items():
            for group, metrics in groups.items():
                for metric, value in metrics.items():
                    if metric != "n" and value is not None:
                        out.setdefault(model, {}).setdefault(group, {}).setdefault(
                            metric, []).append(value)
    return out


def markdown(results: dict[str, Any]) -> str:
    table = summary(results)

    def cell(values: list[float] | None) -> str:
        if not values:
            return "–"
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return f"{100 * statistics.mean(values):.1f} ± {100 * sd:.1f}"

    head = ["model", *[f"{g} {m}" for g in GROUPS for m in ("R@10", "MAP@10")], "MRR"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for model, groups in table.items():
        cells = [cell(groups.get(g, {}).get(m)) for g in GROUPS for m in ("Recall@10",
                                                                          "MAP@10")]
        cells.append(cell(groups.get("positive>=1", {}).get("MRR")))
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    first = next(iter(results["seeds"].values()))
    prefetch = [r.get("prefetch_recall", {}) for r in results["seeds"].values()]
    lines += ["", "Prefetch recall: " + ", ".join(
        f"{k} {cell([p[k] for p in prefetch if k in p])}" for k in ("Recall@100", "Recall@200")),
        f"{first['test_locations']} test locations (seed {first['seed']}), "
        f"{first['candidates']:,} candidates, split {first['split']}, seeds "
        f"{', '.join(str(s) for s in results['seeds'])}; scores in %, mean ± sd.", "",
        "| run | dev R@10 start | dev R@10 kept | kept at step | fusion weight | train s |",
        "|---|---|---|---|---|---|"]
    runs: dict[str, list[dict[str, Any]]] = {}
    for key, row in results["training"].items():
        runs.setdefault(key.rsplit("/", 1)[0], []).append(row)
    for run_name, rows in runs.items():
        lines.append(f"| {run_name} | {cell([r['start_dev'] for r in rows])} | "
                     f"{cell([r['best_dev'] for r in rows])} | "
                     f"{', '.join(str(r['best_step']) for r in rows)} | "
                     f"{', '.join(str(r['fusion_weight']) for r in rows)} | "
                     f"{', '.join(str(round(r['seconds'])) for r in rows)} |")
    return "\n".join(lines)


def ratio(table: dict[str, dict[str, dict[str, list[float]]]], model: str, peer: str
          ) -> float | None:
    """Mean positive >= 1 Recall@10 of ``model`` over that of ``peer`` (None if either is
    missing)."""
    values = [table.get(name, {}).get("positive>=1", {}).get("Recall@10") for name in (model,
                                                                                       peer)]
    if not values[0] or not values[1] or not statistics.mean(values[1]):
        return None
    return round(statistics.mean(values[0]) / statistics.mean(values[1]), 2)


def record(name: str, results: dict[str, Any], corpus: Path, load_before: float) -> Path:
    """``benchmarks/results/NAME.json`` of a Table 3 run (percentages rounded to 0.1)."""
    table = summary(results)

    def stats(values: list[float]) -> dict[str, float]:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return {"mean": round(100 * statistics.mean(values), 1), "sd": round(100 * sd, 1)}

    rows = {model: {group: {metric: stats(values) for metric, values in metrics.items()}
                    for group, metrics in groups.items()}
            for model, groups in table.items()}
    prefetch = [r.get("prefetch_recall", {}) for r in results["seeds"].values()]
    first = next(iter(results["seeds"].values()))
    training: dict[str, dict[str, Any]] = {}
    for key, row in results["training"].items():
        run_name, seed = key.rsplit("/", 1)
        training.setdefault(run_name, {})[seed] = {
            "dev_recall@10_start": round(100 * row["start_dev"], 1),
            "dev_recall@10_kept": round(100 * row["best_dev"], 1),
            "kept_at_step": row["best_step"], "train_seconds": round(row["seconds"])}
    trained = [m for m in table if m not in ("start", *BASELINES)
               and ":" not in m]
    numbers = {
        "rows_percent": rows,
        "prefetch_recall_percent": {k: stats([p[k] for p in prefetch if k in p])
                                    for k in ("Recall@100", "Recall@200")},
        "trained_over_start": {m: ratio(table, m, "start") for m in trained},
        "fused_over_prefetch": {m: ratio(table, m, "prefetch") for m in table
                                if m.startswith("fused:")},
        "fused_over_bm25": {m: ratio(table, m, "bm25") for m in table if m.startswith("fused:")},
        "training": training,
    }
    return write_record(
        name, numbers,
        data={"corpus": str(corpus), "split": first["split"], "seeds": list(results["seeds"]),
              "test_locations": first["test_locations"],
              "held_out_citing_papers": first["held_out_citing_papers"],
              "candidates": first["candidates"], "config": results.get("config", {})},
        load_before=load_before,
        notes=notes(len(results["seeds"])))


def notes(seeds: int) -> str:
    """What a Table 3 record's figures are, for a run of ``seeds`` seeds."""
    spread = ("one seed: the sd is 0 and measures no spread between trainings" if seeds == 1
              else f"{seeds} seeds")
    return ("Recall@10, MAP@10 and MRR in %, mean and sd over the seeds "
            f"({spread}); the held-out citing papers are the test set (time split: the newest "
            "ones, the same for every seed). The unarXive sample's held-out citing papers had "
            "been read by other runs of this benchmark: not a clean held-out figure.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--split", choices=["random", "time"], default="time")
    parser.add_argument("--outside-references", action="store_true")
    parser.add_argument("--runs", nargs="+", default=list(ABLATIONS),
                        help=f"runs of {', '.join(ABLATIONS)} or a --variant")
    parser.add_argument("--variant", nargs=2, action="append", default=[],
                        metavar=("NAME", "JSON"), help="one more run: its config changes")
    parser.add_argument("--rerank", nargs="+", default=["mpt-src-tgt"],
                        help="the runs whose two-stage and fused rows are given")
    parser.add_argument("--combine", nargs="+", type=Path, default=[], metavar="DIR",
                        help="merge the table3.json of these --out directories (one seed "
                        "each, run side by side) into --out's table; no run")
    parser.add_argument("--dev-only", action="store_true",
                        help="train and print the dev histories only (choose on dev)")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--config", default="{}", help="JSON of extra CitrecConfig keys")
    parser.add_argument("--baselines", nargs="*", default=list(BASELINES),
                        help="baseline rows (fewer: a cheaper rerun whose baselines are known)")
    parser.add_argument("--prefetch", default=PREFETCH,
                        help=f"the prefetch ranker (default {PREFETCH}; e.g. "
                        f"{PREFETCH}+minilm-en@en, English pairs heard by the English model too)")
    parser.add_argument("--record", metavar="NAME",
                        help="also write benchmarks/results/NAME.json")
    parser.add_argument("--also", nargs=2, action="append", default=[],
                        metavar=("CORPUS", "DIR"), help="another corpus to train on, with "
                        "the --out directory of this benchmark's run on it")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    common = {"max_steps": args.steps, "max_seq_length": 32, "eval_every": 100,
              **json.loads(args.config)}
    if args.combine:
        merged: dict[str, Any] = {"seeds": {}, "training": {}}
        for directory in args.combine:
            part = json.loads((directory / "table3.json").read_text())
            merged["seeds"].update(part["seeds"])
            merged["training"].update(part["training"])
        (args.out / "table3.json").write_text(json.dumps(merged, indent=1))
        (args.out / "table3.md").write_text(markdown(merged) + "\n")
        print(markdown(merged))
        return
    variants = {name: json.loads(changes) for name, changes in args.variant}
    unknown = sorted(set(args.runs) - set(ABLATIONS) - set(variants))
    if unknown:
        parser.error(f"--runs: unknown {', '.join(unknown)}: expected one of "
                     f"{', '.join([*ABLATIONS, *variants])}")
    results = run(args.corpus, args.out, args.seeds, args.split, args.outside_references,
                  args.runs, common, {Path(c): Path(d) for c, d in args.also},
                  tuple(args.baselines), variants, args.dev_only, tuple(args.rerank),
                  args.prefetch)
    results["config"] = {**common, "variants": variants, "prefetch": args.prefetch}
    if args.dev_only:
        (args.out / "dev.json").write_text(json.dumps(results["training"], indent=1))
        for name, row in results["training"].items():
            print(name, "(step, dev R@10, train R@10, dev top-10 cited in training):",
                  row["dev_history"], "loss:", row["loss"])
        return
    (args.out / "table3.json").write_text(json.dumps(results, indent=1))
    text = markdown(results)
    (args.out / "table3.md").write_text(text + "\n")
    print(text)
    if args.record:
        print(record(args.record, results, args.corpus, load_before))


if __name__ == "__main__":
    main()
