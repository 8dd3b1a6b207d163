"""What ``openmsd train ranker`` costs as a corpus grows: the generated corpora of
:mod:`generated_corpus` (topics, authors, references by preferential attachment, a stand-in
dense model), built by the commands a user runs, then :func:`openmsd.experiment.train_ranker`
timed in this process, by step, with its CPU seconds and peak memory. The training is a corpus's
first: the adapter of its dense model is trained too (an adapter already there is removed
first, unless ``--keep-adapters``). Run one size a process (``--append``) so that the peak
memory is that size's:

    nice -n 10 python benchmarks/ranker_cost.py --sizes 3000
    nice -n 10 python benchmarks/ranker_cost.py --sizes 30000 --append
    nice -n 10 python benchmarks/ranker_cost.py --sizes 100000 --append

Writes ``benchmarks/results/ranker_cost.json`` (:mod:`record`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from generated_corpus import build
from record import read_record, write_record

from openmsd.corpus import Corpus
from openmsd.experiment import train_ranker
from openmsd.experiment.pools import MAX_QUERIES
from openmsd.index import index_dir
from openmsd.models import corpus_adapters
from openmsd.rank import dense_models
from openmsd.vectors import vectors_dir


class Steps:
    """A ``progress(label, total)`` for :func:`openmsd.experiment.train_ranker` that times each
    labelled step."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.last: dict[str, float] = {}
        self.cpu: dict[str, list[float]] = {}
        self.peak: dict[str, float] = {}

    def __call__(self, label: str, total: int | None) -> Callable[[int], None]:
        self.started[label] = time.perf_counter()
        self.totals[label] = total or 0
        self.done[label] = 0
        self.last[label] = self.started[label]
        self.cpu[label] = [time.process_time()] * 2
        self.peak[label] = peak_rss_gib()
        print(f"  {label}: {total} steps", flush=True)

        def advance(n: int) -> None:
            self.done[label] += n
            self.last[label] = time.perf_counter()
            self.cpu[label][1] = time.process_time()
            self.peak[label] = peak_rss_gib()

        return advance

    def summary(self) -> dict[str, dict[str, float]]:
        """Per step: steps done and planned, wall and CPU seconds from its start to its last
        step, and the process's peak memory (GiB) by then."""
        return {label: {"steps": self.done[label], "planned": self.totals[label],
                        "seconds": round(self.last[label] - self.started[label], 2),
                        "cpu_s": round(self.cpu[label][1] - self.cpu[label][0], 2),
                        "peak_rss_gib": self.peak[label]}
                for label in self.started}


def peak_rss_gib() -> float:
    """This process's peak resident memory so far (GiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)


def runs(name: str, sizes: Sequence[int], work: Path | None, append: bool,
         measure: Callable[[int, Path], dict[str, Any]], load_before: float
         ) -> list[dict[str, Any]]:
    """One row per size of ``measure(size, work)`` (``work``: a temporary folder when None),
    each with the load and the commit; with ``append``, record ``name``'s rows of other
    sizes too, by size."""
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        work = work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            rows.append({**measure(size, work), "load_before": load_before,
                         "load_after": round(os.getloadavg()[0], 2),
                         "commit": subprocess.run(["git", "rev-parse", "HEAD"],
                                                  capture_output=True, text=True).stdout.strip()})
    if append:
        try:
            kept = read_record(name)["numbers"]["runs"]
        except FileNotFoundError:
            kept = []
        rows = sorted([r for r in kept if r["papers"] not in sizes] + rows,
                      key=lambda r: r["papers"])
    return rows


def remove_adapters(corpus: Corpus) -> list[str]:
    """Remove the corpus's adapters, their vectors and indexes, and any adapter's vectors or
    index left without it (the names removed)."""
    root = corpus_adapters(corpus)
    names = sorted({*(p.name for p in (root.iterdir() if root.is_dir() else ())),
                    *(k for k in dense_models(corpus) if k.startswith("adapter-"))})
    for name in names:
        index = index_dir(corpus, name)
        builds = index.parent / ".builds" / name
        for path in (root / name, vectors_dir(corpus, name), index, builds):
            if path.is_symlink():  # an index is a link to its build
                path.unlink()
            elif path.exists():
                shutil.rmtree(path)
    return names


def measure(papers: int, work: Path, reuse: bool, keep_adapters: bool) -> dict[str, Any]:
    """Build a corpus of ``papers`` and train its ranker; the costs and what was kept."""
    corpus, built = build(papers, work, reuse)
    if not keep_adapters:
        removed = remove_adapters(corpus)
        if removed:
            print(f"removed the adapters {', '.join(removed)}", flush=True)
    steps = Steps()
    started, cpu = time.perf_counter(), time.process_time()
    found = train_ranker(corpus, progress=steps)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    kept = {name: {head: {"chosen": fit[head]["chosen"],
                          "out_of_fold_map": fit[head]["out_of_fold_map"]}
                   for head in ("paper", "free_text") if head in fit}
            for name, fit in found["report"].items() if "skipped" not in fit}
    adapters = [{"name": a.get("name", a.get("base")), "skipped": a.get("skipped"),
                 "seconds": a.get("training", {}).get("seconds"),
                 "chosen": a.get("training", {}).get("chosen"),
                 "rows": a.get("training", {}).get("rows"),
                 "selection": a.get("selection", {}).get("method")}
                for a in found["adapters"]]
    row = {"papers": papers, "build": built, "train_s": round(seconds, 1),
           "train_cpu_s": round(cpu, 1), "adapters_trained": adapters,
           "steps": steps.summary(), "kept": kept, "peak_rss_gib": peak_rss_gib()}
    print(json.dumps({k: v for k, v in row.items() if k != "build"}, indent=1), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 30000])
    parser.add_argument("--work", type=Path, default=None, help="where the corpora go "
                        "(default: a temporary folder, removed)")
    parser.add_argument("--reuse", action="store_true", help="keep a corpus of the same "
                        "size already built in --work")
    parser.add_argument("--keep-adapters", action="store_true", help="train with the "
                        "corpus's adapters as they are (default: removed, trained anew)")
    parser.add_argument("--append", action="store_true", help="keep the record's runs of "
                        "other sizes (each run says its commit and load)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = runs("ranker_cost", args.sizes, args.work, args.append,
                lambda size, work: measure(size, work, args.reuse, args.keep_adapters),
                load_before)
    path = write_record(
        "ranker_cost", {"runs": rows, "max_queries_per_split": MAX_QUERIES},
        data={"corpora": [{k: v for k, v in r["build"].items() if k not in ("steps",
                                                                           "relations")}
                          for r in rows]},
        load_before=load_before, synthetic=True,
        notes="Generated corpora and a stand-in dense model (benchmarks/generated_corpus.py); "
              "the training timed in this process, a corpus's first (its adapter trained "
              "too), by step: wall and CPU seconds from a step's start to its last tick, and the "
              "process's peak memory by then (peak_rss_gib: its peak, one size a process). "
              "The machine's 2 cores were shared with other work: see the load averages and "
              "compare the CPU seconds.")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
