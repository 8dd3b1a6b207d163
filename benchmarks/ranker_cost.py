"""What ``openmsd train ranker`` costs as a corpus grows: the generated corpora of
:mod:`tune_cost` (topics, authors, references by preferential attachment, a stand-in dense
model), built by the commands a user runs, then :func:`openmsd.experiment.train_ranker` timed
in this process, by step, with its CPU seconds and peak memory. The training is a corpus's
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
import shutil
import time
from pathlib import Path
from typing import Any

from record import write_record
from tune_cost import Steps, build, peak_rss_gib, runs

from openmsd.corpus import Corpus
from openmsd.experiment import train_ranker
from openmsd.experiment.pools import MAX_QUERIES
from openmsd.index import index_dir
from openmsd.models import corpus_adapters
from openmsd.rank import dense_models
from openmsd.vectors import vectors_dir


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
        notes="Generated corpora and a stand-in dense model (benchmarks/tune_cost.py); the "
              "training timed in this process, a corpus's first (its adapter trained too), "
              "by step: wall and CPU seconds from a step's start to its last tick, and the "
              "process's peak memory by then (peak_rss_gib: its peak, one size a process). "
              "The machine's 2 cores were shared with other work: see the load averages and "
              "compare the CPU seconds.")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
