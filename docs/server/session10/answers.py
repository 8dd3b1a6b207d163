"""Every field of fused search and related answers on a corpus, as JSON, to compare two
versions of the ranking code byte for byte (session 10: docs/server.md).

    PYTHONPATH=OLD python docs/server/session10/answers.py CORPUS before.json [--searches N]
    PYTHONPATH=NEW python docs/server/session10/answers.py CORPUS after.json
    cmp before.json after.json

Searches (``hybrid``) are the first 40, 80, 200 or 400 characters of random papers' texts
(their language identified as a free text's); related lists (``hybrid-graph``, ranked live)
are those of the same papers, k = 11.
"""

from __future__ import annotations

import argparse
import json
import os
import random

os.environ.setdefault("OMP_NUM_THREADS", "1")

from openmsd.corpus import Corpus
from openmsd.rank import Queries
from openmsd.search import corpus_scorer, rank_related, rank_search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("out")
    parser.add_argument("--searches", type=int, default=300)
    parser.add_argument("--related", type=int, default=150)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    papers = corpus_scorer(corpus, "hybrid-graph").papers
    rng = random.Random(7)
    rows = rng.sample(range(len(papers)), min(args.searches, len(papers)))
    texts = [papers.texts[r][:rng.choice([40, 80, 200, 400])] for r in rows]
    out = {"languages": Queries.of_texts(texts).languages,
           "search": [[r.as_dict() for r in rank_search(corpus, t, "hybrid", 11)]
                      for t in texts],
           "related": [[r.as_dict() for r in rank_related(corpus, papers.ids[r], "hybrid-graph",
                                                          11)] for r in rows[:args.related]]}
    with open(args.out, "w") as handle:
        json.dump(out, handle, indent=0)
    print(len(out["search"]), "searches,", sum(map(len, out["search"])), "results;",
          len(out["related"]), "related lists,", sum(map(len, out["related"])), "results")


if __name__ == "__main__":
    main()
