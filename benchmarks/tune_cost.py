"""What ``openmsd tune`` costs as a corpus grows: generated corpora of 3K, 30K and 100K papers.

Each corpus is **synthetic** (seeded): papers on topics (about 50 papers a topic), each with a
title and abstract drawn from its topic's words and from words common to all, two or three
authors from its topic's authors, a year, and about eight references to earlier papers, most
of them on its topic. It is written as S2ORC metadata lines and goes through the commands a
user runs: ``openmsd ingest``, ``openmsd relations`` (train / dev / test split), vectors of a
stand-in dense model (a seeded random projection of each paper's word counts, 64 dimensions,
stored as ``openmsd embed`` stores a model's: ``synthetic-bow``; no transformer runs), then
:func:`openmsd.experiment.tune_fusion` with the members ``openmsd tune`` weighs (BM25 views,
the dense model, their feedback, the metadata and graph members). Timed: the whole tune and
each step (``hybrid``: members scored, grid points and folds; ``hybrid-graph`` likewise), the
CPU seconds of the process (on a shared machine the wall time mostly measures the others'
work), the peak memory of the process, and how many queries each fit read out of how many it
had (at most ``openmsd.experiment.pools.MAX_QUERIES`` a split).

    python benchmarks/tune_cost.py --sizes 3000 30000 100000
    python benchmarks/tune_cost.py --sizes 100000 --append   # one size, the others kept

Writes ``benchmarks/results/tune_cost.json`` (:mod:`record`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from record import read_record, write_record

from openmsd.corpus import Corpus
from openmsd.experiment import tune_fusion
from openmsd.experiment.pools import MAX_QUERIES
from openmsd.models import embed_corpus

#: Papers a topic holds, on average.
TOPIC_SIZE = 50
COMMON = [f"common{i}" for i in range(300)]


class BagOfWordsProjection:
    """A stand-in dense model: each text's word counts through a seeded random projection,
    L2-normalised (papers that share topic words get close vectors)."""

    name = "synthetic-bow"

    def __init__(self, dim: int = 64, seed: int = 0):
        self.dim, self.seed = dim, seed
        self.cache: dict[str, np.ndarray] = {}

    def word(self, token: str) -> np.ndarray:
        if token not in self.cache:
            digest = int.from_bytes(token.encode()[:16].ljust(16, b"\0"), "little") % (2**32)
            self.cache[token] = np.random.default_rng([self.seed, digest, len(token)]
                                                      ).standard_normal(self.dim)
        return self.cache[token]

    def encode(self, texts: Sequence[str], kind: str = "passage", batch_size: int = 32
               ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for token in text.lower().split():
                out[i] += self.word(token.strip(".,"))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def generate(papers: int, path: Path, seed: int = 0) -> dict[str, int]:
    """``papers`` S2ORC metadata lines in ``path`` (gzip); returns the counts written."""
    rng = np.random.default_rng(seed)
    topics = max(2, papers // TOPIC_SIZE)
    topic = rng.integers(0, topics, papers)
    by_topic: dict[int, list[int]] = {}
    references = 0
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for i in range(papers):
            t = int(topic[i])
            words = [f"t{t}w{j}" for j in rng.integers(0, 40, 12)]
            common = [COMMON[j] for j in rng.integers(0, len(COMMON), 12)]
            title = " ".join(rng.permutation(words[:4] + common[:3]))
            abstract = " ".join(rng.permutation(words + common)) + "."
            earlier_same = by_topic.get(t, [])
            cited: set[int] = set()
            for _ in range(int(rng.integers(4, 12))):
                if earlier_same and rng.random() < 0.8:
                    cited.add(int(earlier_same[rng.integers(0, len(earlier_same))]))
                elif i:
                    cited.add(int(rng.integers(0, i)))
            references += len(cited)
            authors = [{"first": "A", "middle": [], "last": f"T{t}Author{int(a)}", "suffix": ""}
                       for a in rng.integers(0, 8, int(rng.integers(2, 4)))]
            record = {"paper_id": f"{i}", "title": title.capitalize(), "abstract": abstract,
                      "authors": authors, "year": 1990 + i * 30 // papers,
                      "venue": f"Venue {t % 20}", "outbound_citations": [str(c) for c in cited],
                      "inbound_citations": []}
            out.write(json.dumps(record) + "\n")
            by_topic.setdefault(t, []).append(i)
    return {"papers": papers, "topics": topics, "references": references}


def cli(*args: str) -> float:
    """Run ``openmsd ARGS`` (quietly); the seconds it took."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "openmsd", *args], capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"openmsd {' '.join(args)} failed (exit {done.returncode}):\n"
                         f"{done.stdout[-1000:]}{done.stderr[-2000:]}")
    return time.perf_counter() - started


def build(papers: int, work: Path, reuse: bool = False) -> tuple[Corpus, dict[str, Any]]:
    """Generate, ingest, derive relations and store the stand-in vectors; what each took
    (``reuse``: a corpus already ingested, or with relations, in ``work`` is kept: None)."""
    source = work / f"s2orc-{papers}.jsonl.gz"
    counts = generate(papers, source)
    root = work / f"corpus-{papers}"
    times: dict[str, float | None] = {"ingest_s": None, "relations_s": None}
    if not (reuse and (root / "papers.parquet").is_file()):
        times["ingest_s"] = cli("ingest", str(source), "--out", str(root), "--format", "s2orc")
    if not (reuse and (root / "relations" / "pairs.parquet").is_file()):
        times["relations_s"] = cli("relations", str(root), "--top-languages", "1", "--idt",
                                   "0.1", "--odt", "0", "--dev", "0.1")
    started = time.perf_counter()
    corpus = Corpus(root)
    embed_corpus(corpus, BagOfWordsProjection(), "synthetic-bow", batch_size=4096)
    times["vectors_s"] = time.perf_counter() - started
    return corpus, {**counts, **times}


class Steps:
    """A ``progress(label, total)`` for :func:`tune_fusion` that times each labelled step."""

    def __init__(self) -> None:
        self.started: dict[str, float] = {}
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.last: dict[str, float] = {}

    def __call__(self, label: str, total: int | None) -> Callable[[int], None]:
        self.started[label] = time.perf_counter()
        self.totals[label] = total or 0
        self.done[label] = 0
        self.last[label] = self.started[label]
        print(f"  {label}: {total} steps", flush=True)

        def advance(n: int) -> None:
            self.done[label] += n
            self.last[label] = time.perf_counter()

        return advance

    def summary(self) -> dict[str, dict[str, float]]:
        return {label: {"steps": self.done[label], "planned": self.totals[label],
                        "seconds": round(self.last[label] - self.started[label], 2)}
                for label in self.started}


def measure(papers: int, work: Path, reuse: bool = False) -> dict[str, Any]:
    corpus, built = build(papers, work, reuse)
    print(f"{papers:,} papers built: {json.dumps(built)}", flush=True)
    steps = Steps()
    started, cpu = time.perf_counter(), time.process_time()
    spec = tune_fusion(corpus, progress=steps)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    fits = {name: {"kept": "tuned" if entry.get("tuned") else "untuned",
                   "method": entry["method"], "queries": entry.get("queries"),
                   "queries_available": entry.get("queries_available"),
                   "out_of_fold_map": entry.get("cross_validation", {}).get("out_of_fold_map"),
                   "free_text": entry.get("free_text")}
            for name, entry in spec.items()}
    row = {"papers": papers, "build": built, "tune_s": round(seconds, 1),
           "tune_cpu_s": round(cpu, 1), "steps":
           steps.summary(), "fits": fits,
           "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2)}
    print(json.dumps(row, indent=1), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[3000, 30000, 100000])
    parser.add_argument("--work", type=Path, default=None, help="where the corpora go "
                        "(default: a temporary folder, removed)")
    parser.add_argument("--reuse", action="store_true", help="keep a corpus of the same "
                        "size already built in --work (its build times are then null)")
    parser.add_argument("--append", action="store_true", help="keep the record's runs of "
                        "other sizes (each run says its commit and load)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        for size in args.sizes:
            rows.append({**measure(size, work, args.reuse), "load_before": load_before,
                         "load_after": round(os.getloadavg()[0], 2),
                         "commit": subprocess.run(["git", "rev-parse", "HEAD"],
                                                  capture_output=True, text=True).stdout.strip()})
    if args.append:
        try:
            kept = read_record("tune_cost")["numbers"]["runs"]
        except FileNotFoundError:
            kept = []
        rows = sorted([r for r in kept if r["papers"] not in args.sizes] + rows,
                      key=lambda r: r["papers"])
    path = write_record(
        "tune_cost", {"runs": rows, "max_queries_per_split": MAX_QUERIES},
        data={"corpora": [r["build"] for r in rows]}, load_before=load_before, synthetic=True,
        notes="Generated corpora (S2ORC lines, topics of about 50 papers) and a stand-in dense "
              "model (random projection of word counts); each size in one process, one after "
              "the other, so peak_rss_gib is the largest so far. The machine's 2 cores were "
              "shared with other work: see the load averages.")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
