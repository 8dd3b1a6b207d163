"""``recommend``'s first stage learned from a corpus's citation contexts, on held-out citing papers.

    openmsd ingest ../shared/data/unarxive-sample/arXiv_src_2212_086.jsonl --out corpus-ux
    openmsd embed corpus-ux
    openmsd demo --out corpus-demo
    PYTHONPATH=. python benchmarks/citrec_prefetch.py corpus-ux corpus-demo

For each corpus (its citation contexts, references outside it being candidates too, as
``train citrec-prefetch`` reads them): a seeded ``--test-fraction`` of the citing papers is held
out (:func:`openmsd.rank.held_out_citing`, the draw ``eval citrec`` makes); on the others
``train citrec-prefetch``'s selection runs as the command runs it (pulls compared out of fold,
folds grouped by citing paper, the head kept only where it beats the untrained model there,
then refitted on all of them); then, once, the held-out papers' contexts rank every candidate
with the untrained dense model and with what the selection kept (the untrained model where it
kept nothing): Recall@10 and Recall@50, and the paired per-context difference of Recall@10
(its mean and a 95 % bootstrap interval over the held-out citing papers). Where the selection
refused the head, the head it refused (the best pull, fitted on every training paper) is
measured on the held-out papers too, to show what refusing it spared them.

Writes ``benchmarks/results/citrec_prefetch.json`` (``--record NAME`` to name it otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from record import write_record

from openmsd.corpus import Corpus
from openmsd.rank import held_out_citing
from openmsd.train import PrefetchConfig, fit_head, prefetch_task, select_head


def per_context_recall(task: Any, rows: np.ndarray, weight: np.ndarray | None,
                       k: int = 10) -> np.ndarray:
    """Each held-out context's Recall@k (the share of its cited papers in its top k)."""
    scores = task.scores(rows, weight)
    column = {p: j for j, p in enumerate(task.ids)}
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    return np.array([np.mean([column[c] in set(top[r].tolist())
                              for c in task.data.locations[i].cited])
                     for r, i in enumerate(rows)])


def bootstrap(differences: np.ndarray, groups: list[str], seed: int = 0,
              draws: int = 2000) -> list[float]:
    """A 95 % interval of the mean difference, resampling whole citing papers."""
    rng = np.random.default_rng(seed)
    names = sorted(set(groups))
    members = {g: np.flatnonzero(np.array(groups) == g) for g in names}
    means = []
    for _ in range(draws):
        chosen = rng.choice(len(names), len(names))
        rows = np.concatenate([members[names[c]] for c in chosen])
        means.append(float(differences[rows].mean()))
    return [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)),
                                                              4)]


def measure(root: Path, fraction: float, seed: int, config: PrefetchConfig) -> dict[str, Any]:
    """The held-out figures of one corpus."""
    started = time.perf_counter()
    task = prefetch_task(Corpus(root), config.model)
    test = held_out_citing(set(task.citing), fraction, seed)
    rows = np.arange(len(task.citing))
    train = rows[[c not in test for c in task.citing]]
    held = rows[[c in test for c in task.citing]]
    chosen = select_head(task, train, config)
    weight = chosen.get("weight")
    untrained = task.recalls(held, None, config.ks)
    learned = task.recalls(held, weight, config.ks)
    difference = (per_context_recall(task, held, weight) - per_context_recall(task, held, None))
    refused = {}
    if not chosen["kept"] and chosen["chosen"]:  # what refusing it spared the held-out papers
        pull = float(chosen["chosen"].split("=")[1])
        refused = {"refused_head_on_test": task.recalls(
            held, fit_head(task, train, pull, config), config.ks)}
    return {
        "model": task.model, "candidates": len(task.ids),
        "train_contexts": len(train), "train_citing_papers": len(set(task.citing) - test),
        "test_contexts": len(held), "test_citing_papers": len(test),
        "out_of_fold_on_train": chosen["out_of_fold"], "chosen": chosen["chosen"],
        "kept": chosen["kept"], **({"why": chosen["why"]} if "why" in chosen else {}),
        "test": {"untrained": untrained, "learned": learned,
                 "learned_over_untrained": {k: round(learned[k] / untrained[k], 3)
                                            if untrained[k] else None for k in untrained},
                 "recall@10_difference": round(float(difference.mean()), 4),
                 "recall@10_difference_95ci": bootstrap(
                     difference, [task.citing[i] for i in held], seed), **refused},
        "seconds": round(time.perf_counter() - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--test-fraction", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record", default="citrec_prefetch")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    config = PrefetchConfig(seed=args.seed)
    numbers: dict[str, Any] = {root.name: measure(root, args.test_fraction, args.seed, config)
                               for root in args.corpora}
    numbers["headline"] = "; ".join(
        f"{name}: Recall@10 {found['test']['untrained']['Recall@10']:.3f} untrained → "
        f"{found['test']['learned']['Recall@10']:.3f} learned"
        + ("" if found["kept"] else " (refused: the untrained first stage)")
        + f", Recall@50 {found['test']['untrained']['Recall@50']:.3f} → "
        f"{found['test']['learned']['Recall@50']:.3f} ({found['test_contexts']:,} contexts)"
        for name, found in numbers.items())
    numbers["headline_means"] = (
        "recommend's dense first stage on the citation contexts of held-out citing papers: the "
        "untrained model against the query head train citrec-prefetch learns (chosen out of "
        "fold on the other citing papers, kept only where it wins there)")
    numbers["peer"] = "the untrained dense model on the same contexts and candidates"
    data = {"corpora": [str(root) for root in args.corpora], "test_fraction": args.test_fraction,
            "seed": args.seed, "config": config.as_dict()}
    path = write_record(args.record, numbers, data=data, load_before=load_before, notes=(
        "The head and its pull were chosen on the training citing papers only (out of fold, "
        "grouped by citing paper); the held-out citing papers' contexts were ranked once, "
        "after training. Candidates: the corpus's papers and the references outside it (their "
        "title or raw string), as train citrec-prefetch and eval citrec read them."))
    print(json.dumps(numbers, indent=1))
    print(path)


if __name__ == "__main__":
    main()
