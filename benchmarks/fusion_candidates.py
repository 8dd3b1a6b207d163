"""What the cheap candidate stage of a fused ranker costs in quality, on an SDSM split.

A fused ranker answers ``related`` and ``search`` from candidates: with ``pool="cheap"`` (the
default) the dense member's top N (its FAISS index) and, for a corpus paper, the graph members'
linked papers; every member then scores only those. This compares, on the SDSM tasks of a split
(average MAP, text-only protocol), the ranking of:

* ``whole``: the fusion scored over every paper of the pool (what ``openmsd eval sdsm``
  reports);
* ``all``: the fused top list from every member's top 100 (the exhaustive candidate mode);
* ``cheap N``: the fused top list from the cheap candidates, for each N of ``--depths``.

A relevant paper outside a top list counts as not retrieved (AP contribution 0). The split's
pool can be small (TALN dev: 68 papers, fewer than the candidates); ``--over corpus`` ranks the
split's queries against every paper of the corpus instead (the relevant papers are the same),
which is where a candidate cut can lose anything::

    python benchmarks/fusion_candidates.py /tmp/i15/taln --split dev --over corpus \\
        --ranker hybrid --ranker bm25@same+e5-small-multilingual --depths 25,50,100,200,400
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pyarrow as pa
from rich.progress import track

from openmsd.corpus.store import Corpus
from openmsd.eval.ranks import ScorerRows
from openmsd.eval.sdsm import (
    Pool,
    check_protocol,
    common_pool,
    load_pool,
    model_ranks,
    pool_papers,
    score_model,
)
from openmsd.rank import Fusion, Queries, corpus_papers, load_scorer

NOT_RETRIEVED = 10**9


def top_list_ranks(pool, fusion: Fusion) -> pa.Table:
    """The pool's judgements with each relevant paper's rank in the fused top list of its
    query (:data:`NOT_RETRIEVED` when the list does not hold it)."""
    position = {paper: i for i, paper in enumerate(pool.ids)}
    judged = pool.judgements
    queries = sorted({position[q] for q in judged["query"].to_pylist()})
    rank_of: dict[int, dict[int, int]] = {}
    for q in track(queries, description=f"{fusion.name} ({fusion.pool} "
                                        f"{fusion.pool_depth if fusion.pool == 'cheap' else ''})",
                   transient=True):
        rows, _ = fusion.top_k(Queries.of_rows(fusion.papers, [q]), len(pool.ids))
        rank_of[q] = {int(r): i + 1 for i, r in enumerate(rows[0]) if r >= 0}
    ranks = [rank_of[position[q]].get(position[d], NOT_RETRIEVED)
             for q, d in zip(judged["query"].to_pylist(), judged["doc"].to_pylist(),
                             strict=True)]
    return judged.append_column("rank", pa.array(ranks, pa.int64()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--ranker", action="append", default=None)
    parser.add_argument("--depths", default="25,50,100,200,400")
    parser.add_argument("--over", choices=["pool", "corpus"], default="pool",
                        help="The candidates: the split's pool (SDSM), or every corpus paper.")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    rankers = args.ranker or ["hybrid"]
    pool, _ = common_pool(corpus, load_pool(corpus, args.split), rankers)
    if args.over == "corpus":  # the split's judgements, every corpus paper a candidate
        every = corpus_papers(corpus)
        texts = dict(zip(every.ids, every.texts, strict=True))
        english = dict(zip(every.ids, every.english, strict=True))
        pool = Pool(pool.split, pa.table({
            "paper_id": every.ids, "text": [texts[i] for i in every.ids],
            "language": every.languages, "english": [english[i] for i in every.ids]}),
            pool.judgements, pool.resource_levels, pool.left_out)
    figures: dict[str, dict[str, float]] = {}
    for name in rankers:
        scorer = check_protocol(load_scorer(name, pool_papers(corpus, pool)), "text-only")
        if not isinstance(scorer, Fusion):
            raise SystemExit(f"{name!r} is not a fusion")
        rows = {"whole": model_ranks(pool, ScorerRows(scorer))}
        variants = [("all", Fusion(name, scorer.members, scorer.weights, scorer.method,
                                   pool="all"))]
        variants += [(f"cheap {n}", Fusion(name, scorer.members, scorer.weights,
                                           scorer.method, pool="cheap", pool_depth=int(n)))
                     for n in args.depths.split(",")]
        for label, fusion in variants:
            rows[label] = top_list_ranks(pool, fusion)
        figures[name] = {label: score_model(pool, ranked)[0]["average"]["MAP"]
                         for label, ranked in rows.items()}
        print(name, json.dumps(figures[name]), flush=True)
    result = {"corpus": str(args.corpus), "split": args.split, "over": args.over,
              "candidates": len(pool.ids),
              "queries": len(set(pool.judgements["query"].to_pylist())),
              "average_MAP": figures}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
