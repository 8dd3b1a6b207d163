"""In-process A/B of session 13's two changes at 100,000 papers, in one process: the fused
search (``rank_search`` with the ``hybrid`` ranker, k = 11, the query vector given as the
server's encoder hands it) and the dense-only one (``nearest``, the HNSW index), over titles of
the corpus, with session 12's code paths put back for A (the dense member's candidates read
again from the whole vector matrix, the summary columns of the results read from Arrow slices)
and this session's for B; passes alternate A and B, the answers of both are compared, the
median ``time.process_time`` per request of each is printed (A first in even passes, B first
in odd ones)::

    OMP_NUM_THREADS=1 PYTHONPATH=. nice -n 19 python docs/server/session13/ab.py \\
        /tmp/latency15e/server-load/n100000/corpus --passes 7 --json ab.json
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pyarrow as pa

from openmsd.corpus import Corpus
from openmsd.index import load_index
from openmsd.rank import Queries
from openmsd.search import corpus_scorer, nearest, rank_search
from openmsd.search import ranking as ranking_module
from openmsd.search.paper_records import PaperRecords


class Session12Queries(Queries):
    """Queries that keep nothing a fusion's dense member read (``read`` always None)."""

    read = property(lambda self: None, lambda self, value: None)  # type: ignore[assignment]


def session12_get(self: PaperRecords, ids: list[str], columns: list[str] | None = None
                  ) -> list[dict]:
    table = self.table if columns is None else self.table.select(columns)
    rows = [table.slice(self.rows[i], 1) for i in ids if i in self.rows]
    return pa.concat_tables(rows).to_pylist() if rows else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    fused = corpus_scorer(corpus, "hybrid")
    dense = next(m for m in fused.members if m.name == "muse-v3")
    index = load_index(corpus, "muse-v3")
    titles = [r[0] for r in corpus.connect().execute(
        "SELECT title FROM papers WHERE title IS NOT NULL ORDER BY paper_id LIMIT ?",
        [args.queries]).fetchall()]
    # query vectors as the encoder would hand them: stored vectors of random papers
    vectors = dense.vectors[np.random.default_rng(0).integers(0, len(dense.vectors),
                                                              len(titles))]
    ways = {"A (session 12)": (Session12Queries, session12_get),
            "B (session 13)": (Queries, PaperRecords.get)}

    def use(way: str) -> None:
        queries, get = ways[way]
        ranking_module.Queries = queries  # what rank_search builds its query with
        PaperRecords.get = get

    def searches(kind: str) -> list:
        if kind == "fused":
            return [[r.as_dict() for r in rank_search(corpus, t, fused, 11,
                                                      vectors={dense.name: vectors[i:i + 1]})]
                    for i, t in enumerate(titles)]
        return [[r.as_dict() for r in nearest(corpus, vectors[i:i + 1], "muse-v3", 11,
                                              index=index)] for i in range(len(titles))]

    answers = {}
    for way in ways:  # warm-up, and the answers of both
        use(way)
        answers[way] = (searches("fused"), searches("dense"))
    same = answers["A (session 12)"] == answers["B (session 13)"]
    ms: dict[str, list[float]] = {f"{w}, {k}": [] for w in ways for k in ("fused", "dense")}
    for n in range(args.passes):
        for way in (list(ways) if n % 2 == 0 else list(ways)[::-1]):  # A first, then B first
            use(way)
            for kind in ("fused", "dense"):
                start = time.process_time()
                searches(kind)
                ms[f"{way}, {kind}"].append((time.process_time() - start) * 1000 / len(titles))
    out: dict[str, object] = {name: round(float(np.median(v)), 3) for name, v in ms.items()}
    for kind in ("fused", "dense"):
        out[f"B / A, {kind}"] = round(out[f"B (session 13), {kind}"]
                                      / out[f"A (session 12), {kind}"], 3)
    for way in ways:
        out[f"fused / dense, {way}"] = round(out[f"{way}, fused"] / out[f"{way}, dense"], 3)
    out["same answers"] = same
    out["load average"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
