"""CPU per fused search (``rank_search`` with ``hybrid``) and per dense-only search
(``nearest``, muse-v3's index) in process over a corpus, and where the fused one's goes
(session 11: docs/server.md). Query vectors are encoded once beforehand, as the server's
batching encoder hands them; each figure is ``time.process_time`` per request, the median of
``--passes`` passes over ``--queries`` titles of the corpus, passes interleaved.
``--related``: also the same papers' related papers with ``hybrid-graph`` (``rank_related``:
its stored lists when current, else ranked live) and with the dense index
(``related_papers``)::

    OMP_NUM_THREADS=1 PYTHONPATH=. nice -n 19 python docs/server/session11/profile_search.py \
        /tmp/server-load/n100000/corpus [--related] [--cprofile out.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import load_index
from openmsd.models import load_model
from openmsd.rank import Queries
from openmsd.search import (
    corpus_scorer,
    dense_members,
    is_current,
    nearest,
    rank_related,
    rank_search,
    related_papers,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--queries", type=int, default=299)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--k", type=int, default=11)
    parser.add_argument("--cprofile", default=None)
    parser.add_argument("--json", default=None)
    parser.add_argument("--related", action="store_true")
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    fused = corpus_scorer(corpus, "hybrid")
    dense = dense_members(fused)[0]
    index = load_index(corpus, dense.name)
    rows = corpus.connect().execute(
        "SELECT paper_id, title FROM papers WHERE title IS NOT NULL ORDER BY paper_id LIMIT ?",
        [args.queries]).fetchall()
    ids, titles = [r[0] for r in rows], [r[1] for r in rows]
    vectors = np.asarray(load_model(dense.name).encode(titles, "query"), np.float32)

    def fused_one(i: int) -> None:
        rank_search(corpus, titles[i], fused, args.k, vectors={dense.name: vectors[i:i + 1]})

    def dense_one(i: int) -> None:
        nearest(corpus, vectors[i:i + 1], dense.name, args.k, index=index)

    def language(i: int) -> None:
        Queries.of_texts([titles[i]])

    steps = {"rank_search fused": fused_one, "nearest dense": dense_one,
             "language identification": language}
    if args.related:
        steps["rank_related hybrid-graph"] = lambda i: rank_related(corpus, ids[i],
                                                                     "hybrid-graph", args.k)
        steps["related_papers dense"] = lambda i: related_papers(corpus, ids[i], dense.name,
                                                                 args.k, index=index)
    for step in steps.values():  # warm-up
        for i in range(len(titles)):
            step(i)
    if args.cprofile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.passes):
            for i in range(len(titles)):
                fused_one(i)
        profile.disable()
        profile.dump_stats(args.cprofile)
    ms: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.passes):
        for name, step in steps.items():
            start = time.process_time()
            for i in range(len(titles)):
                step(i)
            ms[name].append((time.process_time() - start) * 1000 / len(titles))
    out = {name: round(float(np.median(v)), 3) for name, v in ms.items()}
    out["ratio fused / dense"] = round(out["rank_search fused"] / out["nearest dense"], 3)
    if args.related:
        out["related lists current"] = is_current(corpus, "hybrid-graph")
        out["ratio related fused / dense"] = round(out["rank_related hybrid-graph"]
                                                   / out["related_papers dense"], 3)
    out["load average"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
