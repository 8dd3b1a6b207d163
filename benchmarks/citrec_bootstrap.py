"""What a test set can resolve: a paired bootstrap over the test locations of a
:mod:`benchmarks.citrec_table3` run, and an exact (Clopper–Pearson) interval of each row's
Recall@10.

Reads the run's ``--out`` directory after its Table 3 (``data.pickle`` and the score matrices
it kept in ``scores.pickle``: the baselines, the own-sentence features and, per model, the
manuscript cosine and the graph features), rebuilds each asked row's scores of one seed's test
locations (``fused:RUN``: the prefetch's top :data:`~openmsd.rank.PREFETCH_DEPTH` reordered by
``seedN/RUN``'s learned fusion; a baseline as kept), and prints each row's Recall@10 (positive
≥ 1) with its 95 % exact interval (locations with one cited work are a binomial draw), and
each row's ratio to ``--against`` rows with a 95 % percentile interval over ``--resamples``
paired resamples of the locations. No model is run: seconds::

    python benchmarks/citrec_bootstrap.py /tmp/taln16e/talnt --seed 0 \\
        --rows fused:mpt-src-tgt fused:start --against bm25 prefetch
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from openmsd.eval import PREFETCH, location_ranks
from openmsd.models import RerankFusion, read_settings
from openmsd.rank import PREFETCH_DEPTH, rerank_rows, split_locations


def row_scores(name: str, kept: dict[str, np.ndarray], directory: Path, seed: int
               ) -> np.ndarray:
    """The test score matrix of ``name``: ``prefetch``, a kept baseline, or ``fused:RUN``."""
    if name == "prefetch":
        return kept[PREFETCH]
    kind, _, run = name.partition(":")
    if kind != "fused":
        if name not in kept:
            raise SystemExit(f"{name}: not kept in {directory / 'scores.pickle'} (kept: "
                             f"{', '.join(k for k in kept if ':' not in k)})")
        return kept[name]
    model = directory / f"seed{seed}" / run
    try:
        settings = read_settings(model)
    except ValueError as error:  # names the file
        raise SystemExit(f"{name}: {error}") from None
    if settings.rerank is None:
        raise SystemExit(f"{model}: no learned rerank fusion in its citrec.json")
    fusion = RerankFusion.of(settings.rerank)
    signals = {f: kept.get(f"{f}:{model}", kept.get(f)) for f in fusion.features
               if f != "prefetch"}
    missing = sorted(f for f, v in signals.items() if v is None)
    if missing:
        raise SystemExit(f"{name}: {', '.join(missing)} not kept in "
                         f"{directory / 'scores.pickle'}: run its Table 3 (--rerank {run}) first")
    return rerank_rows(kept[PREFETCH], signals, fusion, PREFETCH_DEPTH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a citrec_table3.py --out directory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=["random", "time"], default="time")
    parser.add_argument("--test-fraction", type=float, default=0.3)
    parser.add_argument("--rows", nargs="+", required=True,
                        help="rows: prefetch, a baseline kept by the run, or fused:RUN")
    parser.add_argument("--against", nargs="+", default=["bm25", "prefetch"])
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    data = pickle.loads((args.directory / "data.pickle").read_bytes())
    memo = pickle.loads((args.directory / "scores.pickle").read_bytes())
    _, locations, test = split_locations(data, args.test_fraction, args.seed, args.split)
    kept = memo.get("\n".join(sorted(test)))
    if kept is None:
        raise SystemExit(f"{args.directory / 'scores.pickle'}: no scores of seed {args.seed}'s "
                         "test set (run its Table 3 first)")
    column = {p: i for i, p in enumerate(sorted(data.papers))}
    cited = np.array([len(loc.cited) for loc in locations])
    recall = {}
    for name in dict.fromkeys([*args.against, *args.rows]):
        ranks = location_ranks(row_scores(name, kept, args.directory, args.seed), locations,
                               column)
        recall[name] = (ranks <= 10).sum(1) / cited
    single = cited == 1
    out: dict[str, dict[str, object]] = {}
    print(f"{len(locations)} test locations of {len(test)} citing papers (seed {args.seed}, "
          f"{args.split} split; {int(single.sum())} cite one work); Recall@10 positive ≥ 1, %")
    for name, values in recall.items():
        hits = int(values[single].sum())
        interval = binomtest(hits, int(single.sum())).proportion_ci(0.95, "exact")
        out[name] = {"recall@10": round(float(values.mean()), 4),
                     "one_cited_exact_95": [round(interval.low, 4), round(interval.high, 4)]}
        print(f"{name}: {100 * values.mean():.1f} (locations citing one work: {hits} of "
              f"{int(single.sum())}, exact 95 % {100 * interval.low:.1f}–"
              f"{100 * interval.high:.1f})")
    draws = np.random.default_rng(0).integers(0, len(locations),
                                              (args.resamples, len(locations)))
    for name in args.rows:
        for base in args.against:
            if base == name:
                continue
            ratio = recall[name][draws].mean(1) / np.maximum(recall[base][draws].mean(1), 1e-12)
            low, high = np.percentile(ratio, [2.5, 97.5])
            point = recall[name].mean() / recall[base].mean()
            out[name][f"x_{base}"] = [round(float(point), 3), round(float(low), 3),
                                      round(float(high), 3)]
            print(f"{name} / {base}: {point:.2f} × (95 % paired bootstrap over locations "
                  f"{low:.2f}–{high:.2f})")
    if args.json:
        args.json.write_text(json.dumps({"directory": str(args.directory), "seed": args.seed,
                                         "test_locations": len(locations), "rows": out},
                                        indent=1))


if __name__ == "__main__":
    main()
