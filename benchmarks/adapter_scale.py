"""What an adapter costs on a large corpus: a generated one of 100,000 papers whose positive
set holds about a million train pairs, trained by the command as a user runs it.

    python benchmarks/adapter_scale.py /tmp/adapter-scale --papers 100000

The papers (English, 500 topics, each citing 5 of the 20 papers of its topic before it) are
written as JSONL and built with ``openmsd ingest`` and ``openmsd relations``; their vectors (384
dimensions, the topic in 32 of them under noise) are written in the vectors format as
``e5-small-multilingual@onnx`` (no model encodes 100,000 papers on this machine in
minutes). Then ``openmsd train adapter CORPUS --positives dc-or-cc`` is timed, with the peak
resident memory of its process (GNU time). Writes ``benchmarks/results/adapter_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np
import orjson
from record import write_record

from openmsd.corpus import Corpus
from openmsd.models import current_hashes
from openmsd.vectors import vectors_dir, write_part

KEY = "e5-small-multilingual@onnx"
DIM, SIGNAL, TOPICS, CITES, WINDOW = 384, 32, 500, 5, 20


def generate(path: Path, papers: int, seed: int = 0) -> None:
    """``papers`` JSONL records; paper i is of topic i % TOPICS and cites CITES earlier ones of
    its topic."""
    rng = np.random.default_rng(seed)
    with path.open("wb") as out:
        for i in range(papers):
            topic = i % TOPICS
            earlier = i // TOPICS  # the topic's papers before this one: cite among the last
            window = np.arange(max(0, earlier - WINDOW), earlier)  # few (no paper cited by all)
            cites = (rng.choice(window, size=min(CITES, len(window)), replace=False) * TOPICS
                     + topic) if len(window) else []
            out.write(orjson.dumps({
                "id": f"g{i:06d}", "title": f"Generated paper {i} on topic {topic}",
                "abstract": f"An abstract about topic {topic}, paper {i}.", "language": "en",
                "year": 1990 + i % 30, "references": [f"g{j:06d}" for j in sorted(cites)]})
                + b"\n")


def write_vectors(corpus: Corpus, seed: int = 1, chunk: int = 20_000) -> int:
    """Vectors of every paper under :data:`KEY`: the topic in SIGNAL dimensions, noise."""
    rng = np.random.default_rng(seed)
    hashes = current_hashes(corpus, KEY)
    ids = sorted(hashes)
    centres = rng.normal(size=(TOPICS, SIGNAL))
    directory = vectors_dir(corpus, KEY)
    directory.mkdir(parents=True, exist_ok=True)
    for part, start in enumerate(range(0, len(ids), chunk)):
        block = ids[start:start + chunk]
        topics = np.array([int(p[1:]) % TOPICS for p in block])
        rows = np.hstack([0.2 * centres[topics] + rng.normal(size=(len(block), SIGNAL)),
                          rng.normal(size=(len(block), DIM - SIGNAL))]).astype(np.float32)
        write_part(directory / f"part-{part:05d}.parquet", block, [hashes[p] for p in block],
                   rows)
    return len(ids)


def run(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", type=Path)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--positives", default="dc-or-cc")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    root = args.work / "corpus"
    setup: dict[str, float] = {}
    if not (root / "relations" / "relations.json").exists():
        generate(args.work / "papers.jsonl", args.papers)
        setup["ingest_seconds"] = run(["openmsd", "ingest", str(args.work / "papers.jsonl"),
                                       "--out", str(root)])
        setup["relations_seconds"] = run(["openmsd", "relations", str(root),
                                          "--top-languages", "1", "--idt", "0.1", "--odt",
                                          "0", "--dev", "0.05"])
    corpus = Corpus(root)
    if not vectors_dir(corpus, KEY).is_dir():
        write_vectors(corpus)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "peak-rss-kib %M", "openmsd", "train",
                           "adapter", str(root), "--base", KEY, "--positives", args.positives,
                           "--json"], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    peak = int(done.stderr.rsplit("peak-rss-kib", 1)[1].split()[0]) / 2**20  # KiB -> GiB
    manifest = json.loads(done.stdout)
    selection = manifest["selection"]
    numbers = {
        "train_seconds_command": round(seconds, 1),
        "train_seconds_in_process": manifest["training"]["seconds"],
        "peak_rss_gib": round(peak, 2),
        "rows": manifest["training"]["rows"],
        "chosen": manifest["training"]["chosen"],
        "selection": {"method": selection["method"], "identity_MAP": selection["identity_map"],
                      "chosen_MAP": selection["chosen_map"], "queries": selection["queries"],
                      "final_steps": selection["final_steps"]},
        "setup": setup,
    }
    write_record("adapter_scale", numbers, load_before=load_before, synthetic=True, data={
        "papers": manifest["corpus"]["papers_with_vectors"],
        "train_papers": manifest["corpus"]["train_papers"],
        "positive_set": args.positives, "dim": DIM,
        "generator": f"{TOPICS} topics, {CITES} citations a paper among the {WINDOW} of its "
                     f"topic before it, topic in {SIGNAL} of "
                     f"{DIM} dimensions"}, notes=(
        "Peak RSS: the maximum resident set of the train command's process (GNU time %M); "
        "the setup (ingest, relations, vectors) is not timed in train_seconds."))
    print(json.dumps(numbers, indent=1))


if __name__ == "__main__":
    main()
