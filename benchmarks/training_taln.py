"""OpenMSD's Tables 5/6 on TALN: ``openmsd experiment experiments/taln.toml`` as a record.

    openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out corpus-taln
    openmsd relations corpus-taln --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    python benchmarks/training_taln.py corpus-taln --seeds 0 1 2

``--seeds`` and ``--runs`` (the rows, e.g. ``mSpt-dc Specter SciNCL``) make a smaller grid.

Runs ``openmsd experiment`` (the command a user runs) on a copy of the experiment file with the
corpus, the output folder and, where given, the seeds and splits replaced; then reads its
``results.json`` and each trained model's ``openmsd_train.json``. Every recipe's checkpoint is
chosen on the dev split during training; the splits of the file (IDT, ODT and ``test``, their
union) are scored once, after training. Writes ``benchmarks/results/training_taln.json``
(``--record NAME`` to name it otherwise): per split and row the average and per-task MAP and
nDCG@10 (mean and sd over seeds) and the paired t-test against the untrained base; per trained
run and seed its examples, training seconds and dev MAP before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import yaml
from record import write_record

ROOT = Path(__file__).resolve().parents[1]


def only(runs: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """The ``[[run]]`` tables that make the rows ``names`` (``mSpt-dc``: the ``mSpt`` run with
    the positive set ``dc``, named as the whole grid names it)."""
    kept = []
    for run in runs:
        positives = run.get("positives")
        if isinstance(positives, list):
            kept += [{**run, "name": f"{run['name']}-{p}", "positives": p} for p in positives
                     if f"{run['name']}-{p}" in names]
        elif run["name"] in names:
            kept.append(run)
    missing = set(names) - {run["name"] for run in kept}
    if missing:
        raise SystemExit(f"--runs: no row {', '.join(sorted(missing))} in the experiment file")
    return kept


def experiment_file(config: Path, corpus: Path, out: Path, seeds: list[int] | None,
                    splits: list[str] | None, runs: list[str] | None = None) -> Path:
    """A copy of ``config`` (TOML) with its corpus, out, seeds, splits and rows replaced; its
    path."""
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    head = data["experiment"]
    head.update(corpus=str(corpus), out=str(out))
    if seeds is not None:
        head["seeds"] = seeds
    if splits is not None:
        head["splits"] = splits
    if runs is not None:
        data["run"] = only(data["run"], runs)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def rounded(row: dict[str, Any]) -> dict[str, Any]:
    """A table row's MAP and nDCG@10 (and their sd) per task and on average."""
    return {column: {k: v for k, v in figures.items() if k != "n_queries"}
            for column, figures in row.items()
            if isinstance(figures, dict) and column not in ("by_direction",)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="TALN with its relations")
    parser.add_argument("--config", type=Path, default=ROOT / "experiments" / "taln.toml")
    parser.add_argument("--out", type=Path, default=ROOT / "tmp" / "training-taln")
    parser.add_argument("--seeds", type=int, nargs="+", help="instead of the file's")
    parser.add_argument("--splits", nargs="+", help="instead of the file's")
    parser.add_argument("--runs", nargs="+", metavar="ROW",
                        help="only these trained rows (e.g. mSpt-dc Specter SciNCL)")
    parser.add_argument("--record", default="training_taln")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    path = experiment_file(args.config, args.corpus.resolve(), args.out.resolve(), args.seeds,
                           args.splits, args.runs)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "openmsd", "experiment", str(path)], check=True,
                   cwd=ROOT)
    wall = time.perf_counter() - started
    results = json.loads((args.out / "results.json").read_text(encoding="utf-8"))
    splits = {}
    for split, table in results["splits"].items():
        splits[split] = {
            "pool": table["pool"],
            "rows": {row: {**rounded(figures), "seeds": figures["seeds"]}
                     for row, figures in table["rows"].items()},
            "p_map_against_base": {
                row: {task: test.get("p") for task, test in tests.items()}
                for row, tests in table["significance"]["models"].items()},
        }
    runs: dict[str, dict[str, Any]] = {}
    for manifest_path in sorted((args.out / "models").glob("*/openmsd_train.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        run, _, seed = manifest_path.parent.name.rpartition("-s")
        if run not in results["splits"][next(iter(results["splits"]))]["rows"]:
            continue  # a model of a row this run did not ask for
        metrics = manifest["metrics"]
        runs.setdefault(run, {})[seed] = {
            "examples": manifest["data"].get("examples"),
            "steps": metrics["steps"],
            "train_seconds": metrics["train_seconds"],
            "dev_MAP_before": round(metrics["dev_before"]["dev_MAP"], 2),
            "dev_MAP_best": round(metrics["dev_best"]["dev_MAP"], 2),
        }
    config = tomllib.loads(args.config.read_text(encoding="utf-8"))
    print(write_record(
        args.record,
        {"splits": splits, "training": runs, "wall_seconds": round(wall)},
        data={"corpus": str(args.corpus), "experiment": str(args.config.relative_to(ROOT))
              if args.config.is_relative_to(ROOT) else str(args.config),
              "seeds": results["seeds"], "splits": list(results["splits"]),
              "defaults": config.get("defaults", {})},
        load_before=load_before,
        notes="MAP and nDCG@10 in %; trained rows are means over the seeds (sd beside them); "
              "p: paired two-tailed t-test of per-query AP (mean over seeds) against the "
              "untrained base, per task. Checkpoints chosen on dev MAP during training; IDT, ODT "
              "and test are read once, after training (TALN's test splits had been read "
              "before, during development: not a clean held-out figure)."))


if __name__ == "__main__":
    main()
