"""The effect of English-summary enrichment on the SDSM tasks (OpenMSD Tables 5-6, §7).

For each encoder, the plain model and its enriched variants (``MODEL+author64``, ...) are
scored together on one pool of the split (``openmsd.eval.sdsm.evaluate_sdsm``: common pool,
paired t-test of per-query AP against the plain model). Vectors must have been stored first::

    openmsd enrich CORPUS --method author --length 64
    openmsd embed CORPUS --model M --split test [--enrich author-64]

Writes ``OUT/enrich-sdsm.md`` (MAP / nDCG@10 per task and average; average MAP by language
direction; the share of the pool's non-English papers each variant enriched) and
``OUT/enrich-sdsm.png``.

    python benchmarks/enrich_effect.py /tmp/taln --model e5-small-multilingual --model muse-v3 \\
        --variant author64 --variant topn64 --variant llm64 --out docs
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from openmsd.corpus.store import Corpus
from openmsd.corpus.summaries import current_summaries, parse_enriched
from openmsd.eval.sdsm import DIRECTIONS, TASKS, evaluate_sdsm, load_pool


def _cell(figures: dict, metric: str) -> str:
    value = figures.get(metric)
    return "–" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--model", action="append", required=True)
    parser.add_argument("--variant", action="append", default=[],
                        help="METHODLENGTH, e.g. author64, llm64")
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    pool_ids = load_pool(corpus, args.split).papers
    non_en = {p for p, lang in zip(pool_ids["paper_id"].to_pylist(),
                                   pool_ids["language"].to_pylist(), strict=True) if lang != "en"}
    lines = [f"SDSM on split `{args.split}` of `{args.corpus}`; MAP / nDCG@10 in %; † / ‡: "
             "p < 0.05 / 0.01 against the plain model (paired t-test on per-query AP).", "",
             "| model | enriched | " + " | ".join(f"{t} MAP | {t} nDCG@10" for t in
                                                  [*TASKS, "average"]) + " |",
             "|---|---|" + "---|---|" * (len(TASKS) + 1)]
    direction_lines = ["| model | " + " | ".join(DIRECTIONS) + " |",
                       "|---|" + "---|" * len(DIRECTIONS)]
    bars: dict[str, list[float]] = {}
    for model in args.model:
        names = [model] + [f"{model}+{v}" for v in args.variant]
        result = evaluate_sdsm(corpus, names, args.split, baseline=model)
        summary = result.summary
        tests = summary["significance"]["models"]
        for name in names:
            figures = summary["models"][name]
            parsed = parse_enriched(name)
            share = "–"
            if parsed:
                done = set(current_summaries(corpus, parsed[1], parsed[2])) & non_en
                share = f"{len(done)}/{len(non_en)}"
            row = [name, share]
            for task in [*TASKS, "average"]:
                p = tests.get(name, {}).get(task, {}).get("p")
                mark = "" if p is None else "‡" if p < 0.01 else "†" if p < 0.05 else ""
                row += [_cell(figures[task], "MAP") + mark, _cell(figures[task], "nDCG@10")]
            lines.append("| " + " | ".join(row) + " |")
            direction_lines.append("| " + name + " | " + " | ".join(
                f"{_cell(figures['by_direction'][d]['average'], 'MAP')} "
                f"({figures['by_direction'][d]['average']['n_queries']})"
                for d in DIRECTIONS) + " |")
            bars[name] = [figures[t]["MAP"] or 0.0 for t in [*TASKS, "average"]]
        pool = f"pool {summary['pool']} papers, queries: " + ", ".join(
            f"{t} {summary['models'][model][t]['n_queries']}" for t in TASKS)
        lines.append("| " + " | ".join([pool, *[""] * (2 * len(TASKS) + 3)]) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "enrich-sdsm.md").write_text(
        "\n".join([*lines, "", "Average MAP (queries) by language direction:", "",
                   *direction_lines]) + "\n")
    fig, ax = plt.subplots(figsize=(10, 4.5))
    columns = [*TASKS, "average"]
    width = 0.8 / len(bars)
    for i, (name, values) in enumerate(bars.items()):
        ax.bar([c + i * width for c in range(len(columns))], values, width, label=name)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(columns))], columns)
    ax.set_ylabel("MAP (%)")
    ax.set_title(f"SDSM on {args.split}: plain vs enriched with English summaries")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(args.out / "enrich-sdsm.png", dpi=120)
    print((args.out / "enrich-sdsm.md").read_text())


if __name__ == "__main__":
    main()
