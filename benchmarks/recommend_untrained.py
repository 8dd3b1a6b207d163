"""How ``openmsd recommend`` should rank when no citation model is trained: its three candidate
paths measured on the citation locations of real corpora, chosen on the locations of the
non-held-out citing papers and read once on the held-out (newest) ones.

    python benchmarks/recommend_untrained.py taln --split time --out /tmp/recommend-untrained/taln
    python benchmarks/recommend_untrained.py ux --outside-references --split time \
        --out /tmp/recommend-untrained/ux

Each location is scored over every candidate (its cited papers among them) by:

* ``bm25`` and ``e5-small-multilingual``: the fundamental context (its sentence with the ones
  before and after) against title + abstract, as ``eval citrec``'s baselines;
* ``dense, own sentence first``: what ``recommend`` once ranked by without a trained model:
  the index's cosine with ``0.6 × the own sentence's vector + 0.4 × the
  context's`` (:class:`openmsd.rank.RankWeights`), which orders candidates as
  ``0.6 × cos(sentence) + 0.4 × cos(context)`` of the unit vectors;
* ``prefetch``: the fused ranker (:data:`openmsd.eval.PREFETCH`: RRF of BM25 and e5) on the
  fundamental context;
* ``prefetch + dense, own sentence first``: the prefetch's top 200 reranked by the equal-weight
  reciprocal-rank fusion of the prefetch's rank and the sentence-first dense rank
  (:func:`openmsd.rank.two_stage_hits` with weight 0.5);
* ``fused, own sentence first``: the prefetch fusion's scores of the own sentence and of the
  fundamental context, ``0.6 × sentence + 0.4 × context`` (the same weights): BM25 and e5 on
  both, the sentence first.

Prints and writes (``--out``: ``.json`` and ``.md``) Recall@10, MAP@10, MRR and nDCG@10 for
positive ≥ 1 on both location sets, with each row's ratio to BM25 and to today's path.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.corpus import Corpus
from openmsd.eval import PREFETCH, Queries, location_ranks, metric_values, score_rows, summarise
from openmsd.io import write_json
from openmsd.models import DEFAULT_MODEL
from openmsd.rank import (
    PREFETCH_DEPTH,
    RankWeights,
    candidate_mask,
    load_citrec,
    split_locations,
    two_stage,
)

TODAY = "dense, own sentence first"
FUSED = "fused, own sentence first"
ROWS = ("bm25", DEFAULT_MODEL, TODAY, "prefetch", f"prefetch + {TODAY}", FUSED)


def scored(data: Any, locations: list[Any], candidates: list[str], split: str
           ) -> dict[str, dict[str, dict[str, float]]]:
    """Each row of :data:`ROWS` over ``locations``: ``{row: {group: {metric: value}}}``."""
    column = {p: i for i, p in enumerate(candidates)}
    queries = Queries(locations, candidates, column)
    mask = candidate_mask(data, locations, candidates, split)

    def rows(name: str, texts: list[str] | None = None) -> np.ndarray:
        return np.where(mask, np.asarray(score_rows(name, data, queries, texts=texts),
                                         np.float64), -np.inf)

    weights = RankWeights()
    context = rows(DEFAULT_MODEL)
    sentences = [loc.sentences[loc.at] for loc in locations]
    own = rows(DEFAULT_MODEL, sentences)
    prefetch = rows(PREFETCH)
    today = weights.sentence * own + weights.context * context
    matrices = {"bm25": rows("bm25"), DEFAULT_MODEL: context, TODAY: today,
                "prefetch": prefetch,
                f"prefetch + {TODAY}": two_stage(today, prefetch, 0.5, PREFETCH_DEPTH),
                FUSED: weights.sentence * rows(PREFETCH, sentences) + weights.context * prefetch}
    n_relevant = np.array([len(loc.cited) for loc in locations])
    return {name: summarise(n_relevant, metric_values(location_ranks(m, locations, column)))
            for name, m in matrices.items()}


def markdown(result: dict[str, Any]) -> str:
    """The two location sets' rows as Markdown tables (positive ≥ 1)."""
    lines = [f"# `recommend` without a trained model: {result['corpus']} "
             f"({result['split']} split, {result['candidates']:,} candidates)", ""]
    for part in ("choose", "test"):
        table = result[part]
        bm25 = table["bm25"]["positive>=1"]["Recall@10"]
        today = table[TODAY]["positive>=1"]["Recall@10"]
        lines += [f"## {part}: {table['bm25']['positive>=1']['n']} locations", "",
                  "| ranker | Recall@10 | MAP@10 | MRR | nDCG@10 | R@10 / BM25 | R@10 / today |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for name in ROWS:
            row = table[name]["positive>=1"]
            lines.append(f"| {name} | {100 * row['Recall@10']:.1f} | {100 * row['MAP@10']:.1f} "
                         f"| {100 * row['MRR']:.1f} | {100 * row['nDCG@10']:.1f} | "
                         f"{row['Recall@10'] / bm25:.2f} | {row['Recall@10'] / today:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--split", choices=("time", "random"), default="time")
    parser.add_argument("--test-fraction", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--outside-references", action="store_true")
    parser.add_argument("--out", type=Path, help="write OUT.json and OUT.md")
    args = parser.parse_args(argv)
    data = load_citrec(Corpus(args.corpus), args.outside_references)
    choose, test, held = split_locations(data, args.test_fraction, args.seed, args.split)
    candidates = sorted(data.papers)
    result: dict[str, Any] = {
        "corpus": args.corpus.name, "split": args.split, "seed": args.seed,
        "candidates": len(candidates), "held_out_citing_papers": len(held),
        "fundamental_context": "the sentence with the one before and the one after",
        "choose": scored(data, choose, candidates, args.split),
        "test": scored(data, test, candidates, args.split)}
    text = markdown(result)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.out.with_suffix(".json"), result)
        args.out.with_suffix(".md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
