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
from jinja2 import Environment, select_autoescape

from openmsd.corpus.store import atomic_path, write_jsonl
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
    from openTSNE import TSNE

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


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>openmsd robustness report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left}
td.ok{background:#cfcfcf;font-weight:bold} .muted{color:#777}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}
details{margin:1em 0} pre{white-space:pre-wrap;font-size:12px}
</style></head><body>
<h1>Robustness: short queries and textual neighbours</h1>
<p>{{ r.n_papers }} papers from {{ r.input.files|join(", ") }} (language {{ r.input.language }};
{{ r.input.papers }} usable, skipped: {{ r.input.skipped }}; sample {{ r.input.sample }},
seed {{ r.input.seed }}). Models: {{ models|join(", ") }}. Method: Singh &amp; Singh,
<i>The Inefficiency of Language Models in Scholarly Retrieval</i>.</p>

<h2>Short queries: alternative-self retrieval (Table 3)</h2>
<p>Task I: each title against the title+abstract (T+A) of every paper. Task II: every other
title joins the candidates. MRR, and T100 = % of titles with their T+A in the top 100.</p>
<table><tr><th class="l">model</th><th>Task I MRR</th><th>Task I T100</th>
<th>Task II MRR</th><th>Task II T100</th></tr>
{% for m in models %}{% set x = r.models[m] %}<tr><td class="l">{{ m }}</td>
<td>{{ x.task1.MRR }}</td><td>{{ x.task1.T100 }}</td><td>{{ x.task2.MRR }}</td>
<td>{{ x.task2.T100 }}</td></tr>{% endfor %}</table>
<img src="tsne.png" alt="t-SNE of T and T+A vectors">

<h2>Capability matrix (Table 5)</h2>
<p>AOP-20 per category; shaded cells meet the paper's threshold for an optimal representation.</p>
<table><tr><th class="l">model</th>{% for c in categories %}<th>{{ c }}</th>{% endfor %}</tr>
<tr><td class="l muted">threshold</td>{% for c in categories %}
<td class="muted">{{ r.models[models[0]].capability[c].threshold }}</td>{% endfor %}</tr>
{% for m in models %}<tr><td class="l">{{ m }}</td>{% for c in categories %}
{% set cell = r.models[m].capability[c] %}<td class="{{ 'ok' if cell.optimal else '' }}">
{{ cell['AOP-20'] }}</td>{% endfor %}</tr>{% endfor %}</table>

<h2>Categories (Table 4, Figure 5)</h2>
<table><tr><th class="l">category</th>{% for m in models %}<th>{{ m }}<br>NN1_Ret</th>
<th>NN10_Ret</th><th>AOP-10</th>{% endfor %}</tr>
{% for c in categories %}<tr><td class="l">{{ c }}</td>{% for m in models %}
{% set x = r.models[m].categories[c] %}<td>{{ x.NN1_Ret }}</td><td>{{ x.NN10_Ret }}</td>
<td>{{ x['AOP-10'] }}</td>{% endfor %}</tr>{% endfor %}</table>
<img src="categories.png" alt="NN1_Ret and NN10_Ret per category">

<h2>The 32 neighbours (Figures 6 and 7)</h2>
<p>n = papers for which the neighbour changed the text (others: nothing to change, empty, or
skipped for want of a tagger).</p>
<table><tr><th class="l">code</th><th class="l">category</th><th class="l">form</th><th>n</th>
<th>unchanged</th><th>empty</th><th>skipped</th>
{% for m in models %}<th>{{ m }}<br>NN1_Ret</th><th>NN10_Ret</th><th>AOP-10</th>
<th>AOP-20</th>{% endfor %}</tr>
{% for code, s in r.neighbours.items() %}<tr><td class="l">{{ code }}</td>
<td class="l">{{ s.category }}</td><td class="l">{{ s.form }}</td><td>{{ s.ok }}</td>
<td>{{ s.unchanged }}</td><td>{{ s.empty }}</td><td>{{ s.skipped }}</td>
{% for m in models %}{% set x = r.models[m].neighbours[code] %}<td>{{ x.NN1_Ret }}</td>
<td>{{ x.NN10_Ret }}</td><td>{{ x['AOP-10'] }}</td><td>{{ x['AOP-20'] }}</td>{% endfor %}
</tr>{% endfor %}</table>
{% if r.skipped_by_language %}<p>Skipped for want of a tagger or antonyms:
{% for lang, codes in r.skipped_by_language.items() %}{{ lang }}: {{ codes|join(", ") }};
{% endfor %}</p>{% endif %}
<img src="nn1_by_neighbour.png" alt="NN1_Ret per neighbour">
<img src="aop10_by_neighbour.png" alt="AOP-10 per neighbour">

<h2>Where the neighbours lie (Figures 3 and 4)</h2>
<img src="similarity.png" alt="pairwise similarity per category">
<img src="above_mean.png" alt="pairs above mean similarity">

<h2>Time</h2>
<table><tr><th class="l">model</th><th>embed (s)</th><th>measure (s)</th>
<th>texts embedded now</th><th>neighbour texts (unique)</th></tr>
{% for m in models %}{% set x = r.models[m] %}<tr><td class="l">{{ m }}</td>
<td>{{ x.timing_s.embed }}</td><td>{{ x.timing_s.measure }}</td>
<td>{{ x.texts.unique_embedded_now }}</td>
<td>{{ x.texts.neighbour_texts }} ({{ x.texts.unique_neighbour_texts }})</td></tr>{% endfor %}
</table>

<h2>Example: the neighbours of one paper</h2>
{% if example %}<p>Paper <code>{{ example[0].paper_id }}</code>{% if r.input.example_sources %}
(examples are taken from {{ r.input.example_sources|join(", ") }} only){% endif %}.</p>
{% else %}<p class="muted">No paper of the example sources is in the sample.</p>{% endif %}
{% for e in example %}<details {{ 'open' if loop.first else '' }}><summary>{{ e.code }}
({{ e.category }}, {{ e.status }})</summary><pre>T: {{ e.title }}
A: {{ e.abstract }}</pre></details>{% endfor %}
</body></html>
"""


def render_html(report: Mapping[str, Any], example: list[dict[str, Any]]) -> str:
    """The HTML page of a report (models side by side) with one paper's neighbours."""
    environment = Environment(autoescape=select_autoescape(default=True))
    return environment.from_string(TEMPLATE).render(
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
