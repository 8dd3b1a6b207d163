"""The suite's report: plots (matplotlib, Agg), a t-SNE of title vs T+A vectors (openTSNE), an
HTML page putting the models side by side, and a few papers' neighbours as examples.

Files written into ``DIR`` (each atomically): ``report.html``, ``categories.png`` (Figure 5:
NN1_Ret with NN10_Ret stacked, per category), ``nn1_by_neighbour.png`` (Figure 6),
``aop10_by_neighbour.png`` (Figure 7), ``similarity.png`` (Figure 4: pairwise similarities per
category), ``above_mean.png`` (Figure 3), ``tsne.png`` (Figure 2) and ``examples.jsonl``.
``report.json`` is written by :func:`openmsd.robustness.suite.run_suite`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from openmsd.io import atomic_path, write_jsonl
from openmsd.robustness.neighbours import CATEGORIES, NEIGHBOURS

COLOURS = {"LL-HS": "#1b9e77", "LO-HS": "#66a61e", "LL-PS": "#7570b3", "LO-PS": "#e7298a",
           "LO-DS": "#d95f02"}
EXAMPLE_PAPERS = 3


def _save(figure: plt.Figure, target: Path) -> None:
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)


def plot_categories(report: Mapping[str, Any], target: Path) -> None:
    """Figure 5: per category and model, NN1_Ret with NN10_Ret stacked on it."""
    models = list(report["models"])
    figure, ax = plt.subplots(figsize=(2.2 + 1.6 * len(CATEGORIES) * len(models) / 2, 4))
    width = 0.8 / len(models)
    for m, model in enumerate(models):
        cats = report["models"][model]["categories"]
        nn1 = np.array([cats[c]["NN1_Ret"] or 0 for c in CATEGORIES])
        nn10 = np.array([cats[c]["NN10_Ret"] or 0 for c in CATEGORIES])
        x = np.arange(len(CATEGORIES)) + (m - (len(models) - 1) / 2) * width
        ax.bar(x, nn1, width, color=f"C{m}", label=f"{model} NN1_Ret")
        ax.bar(x, nn10 - nn1, width, bottom=nn1, color=f"C{m}", alpha=0.35,
               label=f"{model} NN10_Ret")
    ax.set_xticks(np.arange(len(CATEGORIES)), CATEGORIES)
    ax.set_ylabel("% of neighbours retrieving their original")
    ax.set_ylim(0, 105)
    ax.set_title("Original T+A in the 1 (solid) / 10 (light) nearest T+A of a neighbour")
    ax.legend(fontsize=7, ncol=len(models), loc="lower left")
    _save(figure, target)


def plot_by_neighbour(report: Mapping[str, Any], metric: str, target: Path) -> None:
    """Figures 6 and 7: one metric per neighbour code and model, codes grouped by category."""
    models = list(report["models"])
    codes = [c for cat in CATEGORIES for c, n in NEIGHBOURS.items() if n.category == cat]
    figure, ax = plt.subplots(figsize=(8, 0.28 * len(codes) * max(1, len(models) / 1.5) + 1))
    height = 0.8 / len(models)
    y = np.arange(len(codes))
    for m, model in enumerate(models):
        values = [report["models"][model]["neighbours"][c][metric] for c in codes]
        ax.barh(y + (m - (len(models) - 1) / 2) * height,
                [v if v is not None else 0 for v in values], height, color=f"C{m}", label=model)
    ax.set_yticks(y, codes, fontsize=8)
    for tick, code in zip(ax.get_yticklabels(), codes, strict=True):
        tick.set_color(COLOURS[NEIGHBOURS[code].category])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"{metric} (%)")
    ax.set_title(f"{metric} per neighbour (labels coloured by category: "
                 + ", ".join(CATEGORIES) + ")", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    _save(figure, target)


def plot_similarity(report: Mapping[str, Any], target: Path) -> None:
    """Figure 4: per category and model, the mean ± std of pairwise similarities among the
    neighbours (bars) and their min and max (markers); the originals' for reference."""
    models = list(report["models"])
    groups = ["originals", *CATEGORIES]
    figure, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(models)
    for m, model in enumerate(models):
        result = report["models"][model]
        stats = [result["similarity_originals"]] + [result["categories"][c]["similarity"]
                                                    for c in CATEGORIES]
        x = np.arange(len(groups)) + (m - (len(models) - 1) / 2) * width
        for xi, s in zip(x, stats, strict=True):
            if s is None:
                continue
            ax.errorbar(xi, s["mean"], yerr=s["std"], fmt="o", color=f"C{m}", capsize=3,
                        lw=2, label=model if xi == x[0] else None)
            ax.plot([xi, xi], [s["min"], s["max"]], color=f"C{m}", lw=0.8, alpha=0.6)
            ax.plot([xi, xi], [s["min"], s["max"]], "_", color=f"C{m}", ms=9)
    ax.set_xticks(np.arange(len(groups)), groups)
    ax.set_ylabel("cosine similarity of document pairs")
    ax.set_title("Pairwise similarity within each neighbour category: mean ± std, min to max")
    ax.legend(fontsize=8)
    _save(figure, target)


def plot_above_mean(report: Mapping[str, Any], target: Path) -> None:
    """Figure 3: % of neighbour pairs whose similarity is above that neighbour type's mean."""
    models = list(report["models"])
    codes = list(NEIGHBOURS)
    figure, ax = plt.subplots(figsize=(12, 3.8))
    width = 0.8 / len(models)
    for m, model in enumerate(models):
        values = [(report["models"][model]["neighbours"][c]["similarity"] or {})
                  .get("above_mean_pct", 0) for c in codes]
        ax.bar(np.arange(len(codes)) + (m - (len(models) - 1) / 2) * width, values, width,
               color=f"C{m}", label=model)
    ax.axhline(50, color="grey", lw=0.8, ls="--")
    ax.set_xticks(np.arange(len(codes)), codes, rotation=75, fontsize=7)
    for tick, code in zip(ax.get_xticklabels(), codes, strict=True):
        tick.set_color(COLOURS[NEIGHBOURS[code].category])
    ax.set_ylabel("% of pairs above the mean")
    ax.set_title("Pairs of neighbours more similar than their type's average")
    ax.legend(fontsize=8)
    _save(figure, target)


def tsne_coordinates(titles: np.ndarray, documents: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D openTSNE embedding of the title rows followed by the T+A rows."""
    from openTSNE import TSNE  # optional: the robustness extra; openTSNE takes ~3.5 s to import

    points = np.vstack([titles, documents]).astype(np.float64)
    perplexity = min(30.0, (len(points) - 1) / 3)
    return np.asarray(TSNE(perplexity=perplexity, metric="cosine", n_jobs=2,
                           random_state=seed).fit(points))


def plot_tsne(coordinates: Mapping[str, np.ndarray], n_papers: int, target: Path) -> None:
    """Figure 2: t-SNE of title (T) and title + abstract (T+A) vectors, one panel per model."""
    figure, axes = plt.subplots(1, len(coordinates), figsize=(4.2 * len(coordinates), 4.2),
                                squeeze=False)
    for ax, (model, xy) in zip(axes[0], coordinates.items(), strict=True):
        ax.scatter(*xy[:n_papers].T, s=3, alpha=0.5, color="#d95f02", label="T")
        ax.scatter(*xy[n_papers:].T, s=3, alpha=0.5, color="#1b9e77", label="T+A")
        ax.set_title(model)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.legend(markerscale=4, fontsize=8)
    figure.suptitle("t-SNE of title and title+abstract vectors")
    _save(figure, target)


def examples(table: pd.DataFrame, papers: pd.DataFrame, n: int = EXAMPLE_PAPERS,
             sources: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The neighbours of the first ``n`` papers (of those read from ``sources``, input files
    as given, when named: e.g. the ones whose licence lets the report be published): one row
    per (paper, code)."""
    chosen = papers.index if not sources else papers.index[papers["source"].isin(sources)]
    rows = []
    for row in table[table["paper"].isin(chosen[:n])].itertuples(index=False):
        rows.append({"paper_id": str(papers["paper_id"].iat[row.paper]), "code": row.code,
                     "category": row.category, "status": row.status, "title": row.title,
                     "abstract": row.abstract})
    return rows




def render_html(report: Mapping[str, Any], example: list[dict[str, Any]]) -> str:
    """The HTML page of a report (models side by side) with one paper's neighbours."""
    environment = Environment(loader=PackageLoader("openmsd.robustness"),
                              autoescape=select_autoescape(default=True))
    return environment.get_template("report.html.j2").render(
        r=report, models=list(report["models"]), categories=CATEGORIES, example=example)


def write_report(report: Mapping[str, Any], table: pd.DataFrame, papers: pd.DataFrame,
                 vectors: Mapping[str, Mapping[str, np.ndarray]], out: Path, tsne: bool = True,
                 seed: int = 0, example_sources: Sequence[str] | None = None) -> None:
    """Plots, t-SNE, examples (from ``example_sources`` when named) and ``report.html`` into
    ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    plot_categories(report, out / "categories.png")
    plot_by_neighbour(report, "NN1_Ret", out / "nn1_by_neighbour.png")
    plot_by_neighbour(report, "AOP-10", out / "aop10_by_neighbour.png")
    plot_similarity(report, out / "similarity.png")
    plot_above_mean(report, out / "above_mean.png")
    if tsne:
        coordinates = {m: tsne_coordinates(v["titles"], v["documents"], seed)
                       for m, v in vectors.items()}
        plot_tsne(coordinates, len(papers), out / "tsne.png")
    rows = examples(table, papers, sources=example_sources)
    write_jsonl(out / "examples.jsonl", rows)
    first = [r for r in rows if r["paper_id"] == rows[0]["paper_id"]] if rows else []
    with atomic_path(out / "report.html") as tmp:
        tmp.write_text(render_html(report, first), encoding="utf-8")
