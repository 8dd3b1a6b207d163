"""Related lists computed once per build (``openmsd index related``) against the live fusion, on
one corpus: the answers of N random papers compared (lookup vs live, every field of every
result), and the CPU per request of each, in this process (``OMP_NUM_THREADS=1`` as the server
runs). The lists must exist and be current (``openmsd index related CORPUS``); the live answers
are taken with the lists file moved aside, then it is put back.

    python benchmarks/related_lists.py /tmp/latency15/server-load/n100000/corpus --papers 300
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

from openmsd.corpus import Corpus
from openmsd.rank import HYBRID_GRAPH
from openmsd.search import corpus_scorer, is_current, lists_path, rank_related


def answers(corpus: Corpus, ids: list[str], ranker: str, k: int) -> tuple[list, float]:
    """Each paper's results as dicts, and the CPU milliseconds per request."""
    started = time.process_time()
    out = [[r.as_dict() for r in rank_related(corpus, p, ranker, k)] for p in ids]
    return out, (time.process_time() - started) * 1000 / max(len(ids), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--ranker", default=HYBRID_GRAPH)
    parser.add_argument("--papers", type=int, default=300)
    parser.add_argument("-k", type=int, default=11, help="Results per request (the API asks "
                                                         "for k + 1: 11).")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    if not is_current(corpus, args.ranker):
        raise SystemExit(f"{args.corpus}: no current related lists of {args.ranker}; run "
                         f"'openmsd index related {args.corpus} --ranker {args.ranker}'")
    started = time.process_time()
    papers = corpus_scorer(corpus, args.ranker).papers
    load_s = time.process_time() - started
    ids = random.Random(0).sample(papers.ids, min(args.papers, len(papers)))
    answers(corpus, ids[:3], args.ranker, args.k)  # the lists read once
    stored, stored_ms = answers(corpus, ids, args.ranker, args.k)
    path = lists_path(corpus, args.ranker)
    aside = path.with_name(path.name + ".aside")
    os.replace(path, aside)
    try:
        live, live_ms = answers(corpus, ids, args.ranker, args.k)
    finally:
        os.replace(aside, path)
    same = sum(a == b for a, b in zip(stored, live, strict=True))
    result = {"papers": len(papers), "checked": len(ids), "identical": same, "k": args.k,
              "ranker": args.ranker, "lookup_cpu_ms": round(stored_ms, 2),
              "live_cpu_ms": round(live_ms, 2), "ranker_load_cpu_s": round(load_s, 1),
              "load_average_1m": os.getloadavg()[0]}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if same != len(ids):
        raise SystemExit(f"{len(ids) - same} of {len(ids)} answers differ")


if __name__ == "__main__":
    main()
