"""SDSM results as tables and pictures: the layout of OpenMSD's Tables 5 and 6 (rows models,
columns tasks × MAP / nDCG@10, then the average), as Markdown and JSON, per-query values as
Parquet, and plots: per-task bars with 95 % confidence intervals, and a heat map of average MAP
per model and query language (and per language direction).

``write_report(result, DIR)`` writes ``DIR/sdsm.json``, ``DIR/sdsm.md``,
``DIR/per_query.parquet``, ``DIR/tasks.png`` and ``DIR/languages.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Group
from rich.table import Table

from openmsd.eval.sdsm import DIRECTIONS, METRICS, RESOURCE_LEVELS, TASKS, SDSMResult
from openmsd.io import atomic_path, write_json

COLUMNS = [*TASKS, "average"]
#: Significance marks against the baseline (paired t-test on per-query AP).
MARKS = ((0.01, "‡"), (0.05, "†"))


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _mark(summary: dict[str, Any], model: str, task: str) -> str:
    test = summary.get("significance", {}).get("models", {}).get(model, {}).get(task)
    if not test or test.get("p") is None:
        return ""
    return next((mark for level, mark in MARKS if test["p"] < level), "")


def table_rows(summary: dict[str, Any]) -> list[list[str]]:
    """One row per model: name, then MAP and nDCG@10 for each task and the average (MAP of a
    task marked † / ‡ where it differs from the baseline's at p < 0.05 / 0.01; ``± sd``
    where the figures are means over seeds with a ``MAP sd``)."""
    rows = []
    for model, figures in summary["models"].items():
        row = [model]
        for column in COLUMNS:
            for metric in METRICS:
                mark = _mark(summary, model, column) if metric == "MAP" else ""
                sd = figures[column].get(f"{metric} sd")
                row.append(_cell(figures[column][metric]) + mark
                           + (f" ± {sd:.2f}" if sd is not None else ""))
        rows.append(row)
    return rows


def header() -> list[str]:
    return ["model", *(f"{column} {metric}" for column in COLUMNS for metric in METRICS)]


def markdown_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]


def breakdown_rows(summary: dict[str, Any], key: str, groups: list[str] | None = None
                   ) -> tuple[list[str], list[list[str]]]:
    """Average MAP (n queries) per model and group of ``key`` (``by_language``,
    ``by_direction``, ``by_resource``)."""
    models = [m for m, f in summary["models"].items() if key in f]
    if groups is None:
        groups = sorted({g for m in models for g in summary["models"][m][key]})
    rows = []
    for model in models:
        cells = [model]
        for group in groups:
            average = summary["models"][model][key].get(group, {}).get("average", {})
            cells.append(f"{_cell(average.get('MAP'))} ({average.get('n_queries', 0)})")
        rows.append(cells)
    return ["model", *groups], rows


def markdown(summary: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    counts = summary["relevant_pairs"]
    lines = [f"# SDSM evaluation, split `{summary['split']}`", "",
             f"Pool: {summary['pool']:,} papers (left out: "
             + (", ".join(f"{n:,} {why}" for why, n in summary["left_out"].items()) or "none")
             + f"). Relevant pairs: {', '.join(f'{t} {n:,}' for t, n in counts.items())}. "
             f"Citation relevance: DC partners ({summary['dc']}). MAP and nDCG@10 in %.", "",
             *markdown_table(header(), table_rows(summary)), "",
             f"† / ‡: MAP differs from `{summary['significance']['baseline']}`'s at p < 0.05 / "
             "0.01 (paired two-tailed t-test on per-query AP).", ""]
    queries = [[m, *(str(f[c]["n_queries"]) for c in COLUMNS)]
               for m, f in summary["models"].items()][:1]
    lines += ["Queries: " + ", ".join(f"{c} {n}" for c, n in zip(COLUMNS, queries[0][1:],
                                                                  strict=True)), ""]
    for title, key, groups in (("By query language", "by_language", None),
                               ("By language direction", "by_direction", list(DIRECTIONS)),
                               ("By resource level of the query language", "by_resource",
                                list(RESOURCE_LEVELS))):
        head, rows = breakdown_rows(summary, key, groups)
        lines += [f"## {title} (average MAP, queries)", "", *markdown_table(head, rows), ""]
    errors = {m: f["error"] for m, f in summary["models"].items() if "error" in f}
    if errors:
        lines += ["## Not scored", "", *(f"- `{m}`: {e}" for m, e in errors.items()), ""]
    return "\n".join(lines)


def plot_tasks(summary: dict[str, Any], path: Path) -> None:
    """Grouped bars: per task (and average), each model's MAP and nDCG@10 with 95 % CIs."""
    import matplotlib  # optional: the eval extra; matplotlib takes ~0.5 s to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional: the eval extra; matplotlib takes ~0.5 s to import

    models = [m for m, f in summary["models"].items() if "error" not in f]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    width = 0.8 / max(1, len(models))
    for ax, metric in zip(axes, METRICS, strict=True):
        x = np.arange(len(COLUMNS))
        for i, model in enumerate(models):
            figures = summary["models"][model]
            values = [figures[c][metric] or 0 for c in COLUMNS]
            errors = [figures[c].get(f"{metric} ci95") or 0 for c in COLUMNS]  # average: none
            ax.bar(x + (i - (len(models) - 1) / 2) * width, values, width, yerr=errors,
                   capsize=2, label=model)
        ax.set_xticks(x, [f"{c}\n(n={summary['models'][models[0]][c]['n_queries']})"
                          for c in COLUMNS] if models else COLUMNS)
        ax.set_ylabel(f"{metric} (%)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"SDSM, split {summary['split']}, pool {summary['pool']:,} papers "
                 "(bars: 95 % CI over queries)")
    fig.tight_layout()
    _save(fig, path)


def plot_languages(summary: dict[str, Any], path: Path) -> None:
    """Heat maps of average MAP per model × query language and model × language direction,
    each cell with its number of queries."""
    import matplotlib  # optional: the eval extra; matplotlib takes ~0.5 s to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # optional: the eval extra; matplotlib takes ~0.5 s to import

    fig, axes = plt.subplots(1, 2, figsize=(13, 1.6 + 0.5 * len(summary["models"])),
                             gridspec_kw={"width_ratios": [3, 2]})
    for ax, key, groups in ((axes[0], "by_language", None), (axes[1], "by_direction",
                                                              list(DIRECTIONS))):
        head, _ = breakdown_rows(summary, key, groups)
        groups = head[1:]
        models = [m for m, f in summary["models"].items() if key in f]
        grid = np.full((len(models), len(groups)), np.nan)
        counts = np.zeros_like(grid, dtype=int)
        for i, model in enumerate(models):
            for j, group in enumerate(groups):
                average = summary["models"][model][key].get(group, {}).get("average", {})
                if average.get("MAP") is not None:
                    grid[i, j] = average["MAP"]
                counts[i, j] = average.get("n_queries", 0)
        image = ax.imshow(grid, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")
        ax.set_yticks(range(len(models)), models)
        for i in range(len(models)):
            for j in range(len(groups)):
                text = "–" if np.isnan(grid[i, j]) else f"{grid[i, j]:.1f}\nn={counts[i, j]}"
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="k" if np.isnan(grid[i, j]) or grid[i, j] >= np.nanmax(grid) / 2
                        else "w")
        ax.set_title(f"average MAP (%) {key.replace('_', ' ')}")
        fig.colorbar(image, ax=ax, fraction=0.04)
    fig.tight_layout()
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt  # optional: the eval extra; matplotlib takes ~0.5 s to import

    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def write_report(result: SDSMResult, out: Path) -> list[Path]:
    """Write the report files into ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in ("sdsm.json", "sdsm.md", "per_query.parquet",
                                     "tasks.png", "languages.png")]
    write_json(paths[0], result.summary)
    with atomic_path(paths[1]) as tmp:
        tmp.write_text(markdown(result.summary), encoding="utf-8")
    tables = [table.append_column("model", pa.array([model] * table.num_rows, pa.string()))
              for model, table in result.per_query.items()]
    if tables:
        with atomic_path(paths[2]) as tmp:
            pq.write_table(pa.concat_tables(tables), tmp)
    else:
        paths.remove(paths[2])
    plot_tasks(result.summary, paths[-2])
    plot_languages(result.summary, paths[-1])
    return paths


def _table(title: str, head: list[str], rows: list[list[str]]) -> Table:
    """A terminal table: the first column (the model) left, the figures right."""
    table = Table(title=title)
    for i, column in enumerate(head):
        table.add_column(column, justify="right" if i else "left")
    for row in rows:
        table.add_row(*row)
    return table


def sdsm_view(summary: dict[str, Any], split: str) -> Group:
    """An SDSM summary for a terminal: Tables 5/6 (MAP / nDCG@10 per task), the query counts
    and the baseline of the t-tests, then average MAP by query language, direction and
    resource level."""
    left_out = ", ".join(f"{n:,} {why}" for why, n in summary["left_out"].items() if n)
    main = _table(f"SDSM, split {split}: pool {summary['pool']:,} papers"
                  + (f" ({left_out} left out)" if left_out else "") + "; MAP / nDCG@10 in %",
                  [column.replace(" ", "\n") for column in header()], table_rows(summary))
    counts = next(iter(summary["models"].values()))
    queries = ("queries: " + ", ".join(f"{t} {counts[t]['n_queries']}" for t in
                                       ("citation", "co-citation", "bib-coupling", "average"))
               + f"; † / ‡ p < 0.05 / 0.01 against {summary['significance']['baseline']} "
                 "(paired t-test on per-query AP)")
    breakdowns = []
    for title, key, groups in (("by query language", "by_language", None),
                               ("by direction", "by_direction", list(DIRECTIONS)),
                               ("by resource level", "by_resource", list(RESOURCE_LEVELS))):
        head, rows = breakdown_rows(summary, key, groups)
        breakdowns.append(_table(f"average MAP (queries) {title}", head, rows))
    return Group(main, queries, *breakdowns)


def pools_view(result: dict[str, Any], tasks: list[str], protocols: list[str]) -> Group:
    """A merged-pool / clustered evaluation for a terminal: one table per protocol, MAP and
    nDCG@10 per task and their average, one row per model."""
    columns = [*tasks, "average"]
    tables = []
    for name in protocols:
        rows = [[model, *(_cell(figures[name][c][m]) for c in columns for m in METRICS)]
                for model, figures in result["models"].items()]
        tables.append(_table(f"{name} protocol: pool {result['pool']:,} papers; MAP / "
                             "nDCG@10 in %",
                             ["model", *(f"{c}\n{m}" for c in columns for m in METRICS)], rows))
    return Group(*tables)
