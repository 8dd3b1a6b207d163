"""``openmsd experiment CONFIG``: a grid of recipes × positive sets × seeds, each trained and
evaluated on the SDSM tasks, summarised in the layout of OpenMSD's Tables 5 and 6.

The config is one TOML or YAML file::

    [experiment]
    corpus = "taln"                 # a corpus with relations
    out = "runs/taln"               # models, per-run results and the tables go here
    splits = ["idt", "odt"]
    seeds = [0, 1, 2]
    models = ["e5-small-multilingual", "bm25", "random"]   # untrained rows; RUN+VARIANT
                                    # (mSpt-dc+llm64): a run's models tested on enriched text
    baseline = "e5-small-multilingual"                     # significance against this row

    [defaults]                      # any TrainConfig key, for every run
    base = "e5-small-multilingual"
    max_steps = 60

    [[run]]
    name = "mSpt"
    recipe = "mspt"
    positives = ["dc", "cc", "bc", "dc-or-cc"]   # a list expands the grid: mSpt-dc, ...

    [[run]]
    name = "Specter"
    recipe = "specter"

Each (run, seed) trains into ``out/models/<name>-s<seed>`` (skipped when that model exists
with the same config: an interrupted experiment resumes), then every model is scored on every
split. A trained row is the mean over its seeds; its significance is a paired two-tailed
t-test of its per-query AP (averaged over seeds) against the baseline's. ``out/results.json``
holds every figure, ``out/results.md`` the tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from openmsd.corpus import Corpus, enriched_name, parse_enriched, parse_variant
from openmsd.eval import (
    COLUMNS,
    DIRECTIONS,
    METRICS,
    TASKS,
    breakdown_rows,
    evaluate_sdsm,
    header,
    markdown_table,
    paired_t_test,
    table_rows,
)
from openmsd.experiment.dev import train_model
from openmsd.io import arrow_table, atomic_path, write_json
from openmsd.train import ConfigError, TrainConfig, check_keys, read_file

EXPERIMENT_KEYS = {"corpus", "out", "splits", "seeds", "models", "baseline", "dc"}


@dataclass
class Run:
    """One trained row of the table: a name and its training config (seed 0)."""

    name: str
    config: dict[str, Any]


@dataclass
class Experiment:
    corpus: str
    out: Path
    runs: list[Run]
    splits: list[str] = field(default_factory=lambda: ["idt", "odt"])
    seeds: list[int] = field(default_factory=lambda: [0])
    models: list[str] = field(default_factory=list)
    baseline: str | None = None
    dc: str = "both"

    def trained(self, run: Run, seed: int) -> TrainConfig:
        return TrainConfig(**{**run.config, "seed": seed, "corpus": self.corpus,
                              "out": str(self.out / "models" / f"{run.name}-s{seed}")})


def load_experiment(path: Path) -> Experiment:
    """Read and validate an experiment file; every run's config is checked before anything
    trains (:class:`ConfigError` naming the file and the key)."""
    data = read_file(path)
    unknown = set(data) - {"experiment", "defaults", "run"}
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {', '.join(sorted(unknown))}; expected "
                          "experiment, defaults, run")
    head = data.get("experiment")
    if not isinstance(head, dict):
        raise ConfigError(f"{path}: missing [experiment] section")
    for key in head:
        if key not in EXPERIMENT_KEYS:
            raise ConfigError(f"{path}: [experiment]: unknown key {key!r}; known keys: "
                              f"{', '.join(sorted(EXPERIMENT_KEYS))}")
    for key in ("corpus", "out"):
        if key not in head:
            raise ConfigError(f"{path}: [experiment]: missing key {key!r}")
    defaults = data.get("defaults", {})
    check_keys(defaults, f"{path}: [defaults]")
    runs: list[Run] = []
    for number, run in enumerate(data.get("run", []), start=1):
        where = f"{path}: [[run]] {number}"
        if "name" not in run or "recipe" not in {**defaults, **run}:
            raise ConfigError(f"{where}: needs a name and a recipe (in it or in [defaults])")
        values = {k: v for k, v in run.items() if k != "name"}
        positives = values.pop("positives", defaults.get("positives", "dc"))
        sets = positives if isinstance(positives, list) else [positives]
        check_keys(values, where)
        for positive in sets:
            name = run["name"] if len(sets) == 1 else f"{run['name']}-{positive}"
            config = {**defaults, **values, "positives": positive}
            try:
                TrainConfig(**{**config, "corpus": head["corpus"], "out": "x"})
            except (ConfigError, TypeError) as error:
                raise ConfigError(f"{where} ({name}): {error}") from None
            runs.append(Run(name, config))
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise ConfigError(f"{path}: run names repeat: {names}")
    experiment = Experiment(head["corpus"], Path(head["out"]), runs,
                            list(head.get("splits", ["idt", "odt"])),
                            list(head.get("seeds", [0])), list(head.get("models", [])),
                            head.get("baseline"), head.get("dc", "both"))
    if not runs and not experiment.models:
        raise ConfigError(f"{path}: nothing to do: no [[run]] and no untrained models")
    if experiment.baseline and experiment.baseline not in experiment.models + names:
        raise ConfigError(f"{path}: baseline {experiment.baseline!r} is neither an untrained "
                          "model nor a run name")
    return experiment


def trained_already(config: TrainConfig) -> bool:
    """Whether ``config.out`` holds a model trained with ``config``: the same settings
    wherever it was trained (``out`` aside: a model linked in from another experiment counts),
    a key the saved config lacks (added to openmsd since) counting as its default."""
    manifest = Path(config.out) / "openmsd_train.json"
    if not manifest.exists():
        return False
    saved = json.loads(manifest.read_text())["config"]
    defaults = {f.name: f.default for f in fields(TrainConfig)}
    return all(saved.get(key, defaults.get(key)) == value
               for key, value in config.as_dict().items() if key != "out")


def scored_name(config: TrainConfig) -> str:
    """The name a trained model is scored under: its directory, ``+VARIANT`` when it was
    trained on enriched text (it is then tested on the same enriched text)."""
    return enriched_name(config.out, *parse_variant(config.enrich)) if config.enrich else config.out


def row_models(experiment: Experiment) -> dict[str, list[str]]:
    """The models scored for each row of the table: an untrained model for itself; a run's
    model of every seed (:func:`scored_name`); for ``RUN+VARIANT`` among the untrained
    models, the run's models tested on that enriched text."""
    runs = {run.name: run for run in experiment.runs}
    members = {}
    for model in experiment.models:
        enriched = parse_enriched(model)
        if enriched and enriched[0] in runs:
            members[model] = [enriched_name(experiment.trained(runs[enriched[0]], s).out,
                                            *enriched[1:]) for s in experiment.seeds]
        else:
            members[model] = [model]
    for run in experiment.runs:
        members[run.name] = [scored_name(experiment.trained(run, s)) for s in experiment.seeds]
    return members


def run_experiment(experiment: Experiment,
                   log: Callable[[str], None] = print) -> dict[str, Any]:
    """Train every (run, seed), score everything on every split; write and return the
    results (``splits.<split>.rows.<row>``: mean figures over seeds, per seed, significance)."""
    corpus = Corpus(experiment.corpus)
    for run in experiment.runs:
        for seed in experiment.seeds:
            config = experiment.trained(run, seed)
            if trained_already(config):
                log(f"{run.name} seed {seed}: trained already ({config.out})")
                continue
            log(f"{run.name} seed {seed}: training ({config.recipe}, {config.positives}, "
                f"{config.max_steps} steps)")
            manifest = train_model(config)
            log(f"  dev MAP {manifest['metrics']['dev_before']['dev_MAP']:.2f} → "
                f"{manifest['metrics']['dev_best']['dev_MAP']:.2f}")
    results: dict[str, Any] = {"corpus": experiment.corpus, "seeds": experiment.seeds,
                               "splits": {}}
    members = row_models(experiment)
    every = [m for group in members.values() for m in group]
    for split in experiment.splits:
        log(f"scoring {len(every)} models on {split}")
        scored = evaluate_sdsm(corpus, every, split, experiment.dc, embed=True)
        results["splits"][split] = summarise(scored.summary, scored.per_query, members,
                                             experiment.baseline)
    experiment.out.mkdir(parents=True, exist_ok=True)
    write_json(experiment.out / "results.json", results)
    with atomic_path(experiment.out / "results.md") as tmp:
        tmp.write_text(markdown(results), encoding="utf-8")
    return results


def summarise(summary: dict[str, Any], per_query: dict[str, pa.Table],
              members: dict[str, list[str]], baseline: str | None) -> dict[str, Any]:
    """Rows of the table: each row's figures averaged over its members (seeds), and its
    significance against ``baseline`` on per-query AP averaged over the members."""
    rows: dict[str, Any] = {}
    for row, models in members.items():
        figures = [summary["models"][m] for m in models]
        rows[row] = {column: _mean(figures, column) for column in COLUMNS}
        rows[row]["by_direction"] = {
            direction: {"average": _mean([f["by_direction"][direction] for f in figures],
                                         "average")}
            for direction in DIRECTIONS if all("by_direction" in f for f in figures)}
        rows[row]["seeds"] = len(models)
    merged = {row: _mean_per_query([per_query[m] for m in models if m in per_query])
              for row, models in members.items()}
    reference = baseline or next(iter(members))
    significance = {row: paired_t_test(table, merged[reference])
                    for row, table in merged.items() if row != reference and table is not None
                    and merged[reference] is not None}
    return {"pool": summary["pool"], "left_out": summary["left_out"], "rows": rows,
            "significance": {"baseline": reference, "models": significance,
                             "test": "paired two-tailed t-test on per-query AP (mean over "
                                     "seeds)"}}


def _mean(figures: list[dict[str, Any]], column: str) -> dict[str, Any]:
    out: dict[str, Any] = {"n_queries": figures[0][column]["n_queries"]}
    for metric in METRICS:
        values = [f[column][metric] for f in figures if f[column][metric] is not None]
        out[metric] = round(float(np.mean(values)), 4) if values else None
        out[f"{metric} sd"] = round(float(np.std(values)), 4) if len(values) > 1 else None
    return out


def _mean_per_query(tables: list[pa.Table]) -> pa.Table | None:
    """Per (task, query), AP and nDCG@10 averaged over the tables."""
    if not tables:
        return None
    con = duckdb.connect()
    for i, table in enumerate(tables):
        con.register(f"t{i}", table)
    union = " UNION ALL ".join(f"SELECT task, query, \"AP\", \"nDCG@10\" FROM t{i}"
                               for i in range(len(tables)))
    return arrow_table(con, f"SELECT task, query, avg(\"AP\") AS \"AP\", avg(\"nDCG@10\") "
                            f"AS \"nDCG@10\" FROM ({union}) GROUP BY ALL ORDER BY ALL")


def markdown(results: dict[str, Any]) -> str:
    """One Table 5/6-style table per split (mean over seeds; † / ‡ p < 0.05 / 0.01)."""
    lines = [f"# Experiment on `{results['corpus']}` (seeds {results['seeds']})", ""]
    for split, figures in results["splits"].items():
        summary = {"models": figures["rows"], "significance": figures["significance"]}
        lines += [f"## {split}: pool {figures['pool']:,} papers", "",
                  *markdown_table(header(), table_rows(summary))]
        queries = next(iter(figures["rows"].values()))
        lines += ["", "Queries: " + ", ".join(f"{t} {queries[t]['n_queries']}" for t in TASKS)
                  + f". † / ‡: MAP differs from `{figures['significance']['baseline']}` at "
                    "p < 0.05 / 0.01.", ""]
        head, rows = breakdown_rows(summary, "by_direction", list(DIRECTIONS))
        if rows:
            lines += ["Average MAP (queries) by language direction:", "",
                      *markdown_table(head, rows), ""]
    return "\n".join(lines)
