"""Untuned fusion: reciprocal rank against score-aware fusion, on TALN's train and dev queries
and on the demo corpus's searches.

The untuned ``hybrid`` and ``hybrid-graph`` hold the members :func:`openmsd.rank.load.default_spec`
gives, with equal weights; only how their scores are combined changes: ``rrf`` (Σ 1 / (60 +
rank)), ``weighted`` (CombSUM of min–max scores) and ``zscore`` (CombSUM of z-scores). Nothing is
fitted, so every train and dev query is held out; the test splits are not read.

1. TALN (``openmsd ingest``, ``openmsd relations --top-languages 2 --idt 0.15 --odt 0.15 --dev
   0.1``, ``openmsd embed``): the average MAP of the three SDSM tasks (text-only, ``hybrid``'s
   members) and the citation MAP of hidden links (``hybrid-graph``'s members), train and dev
   pools, their figures weighted by their queries (as ``openmsd train ranker`` scores);
2. the demo corpus (``openmsd demo``): the first results of the searches a new user tried, and
   of the sentence of the demo paragraph's marker [1];
3. the untuned fusions as shipped (their own weights: ``hybrid-graph``'s graph members at half
   weight) on train and on dev, beside equal-weight RRF.

    python benchmarks/fusion_evidence.py TALN_CORPUS DEMO_CORPUS

Writes ``benchmarks/results/fusion_evidence.json`` (:mod:`record`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np
from record import write_record

from openmsd.corpus import Corpus
from openmsd.experiment.pools import pool_matrices, queries_of, tuning_pools
from openmsd.experiment.weights import Judged, held_out_ap, pooled
from openmsd.rank import (
    HYBRID,
    HYBRID_GRAPH,
    Fusion,
    Queries,
    corpus_papers,
    default_spec,
    fuse,
)
from openmsd.rank import load_scorer as make_scorer

METHODS = ("rrf", "weighted", "zscore")
SEARCHES = ("vacinação infantil", "mortalidade por hepatite C no Brasil",
            "vacunación infantil y desigualdades raciales",
            "bryophytes and orchids of Brazilian forests",
            "Severe acute respiratory syndrome caused by COVID-19 was more frequent among adults "
            "and older people with chronic cardiovascular disease.")


def taln(corpus: Corpus) -> dict[str, Any]:
    """Per untuned fusion and method: MAP on the train and dev queries, and a paired t-test of
    per-query AP against RRF."""
    from scipy import stats

    out: dict[str, Any] = {}
    for name, hidden, task in ((HYBRID, False, None), (HYBRID_GRAPH, True, "citation")):
        pools, links = tuning_pools(corpus, 0, hidden=hidden, limit=10**9)
        members = list(default_spec(name, corpus).members)
        parts = [pool_matrices(corpus, p, members, lk) for p, lk in zip(pools, links,
                                                                         strict=True)]
        sizes = np.array([queries_of(p) for p in pools], float)
        weights = [1.0] * len(members)
        entry: dict[str, Any] = {"members": members, "queries": {p.split: queries_of(p)
                                                                  for p in pools}}
        ap = {m: held_out_ap(pools, parts, weights, m, task) for m in METHODS}
        for method in METHODS:
            entry[method] = round(pooled([Judged(p, task).objective(fuse(rows, weights, method))
                                          for p, rows in zip(pools, parts, strict=True)],
                                         sizes), 2)
            if method != "rrf":
                test = stats.ttest_rel(ap[method], ap["rrf"])
                entry[f"{method}_vs_rrf"] = {"n": len(ap[method]), "p": round(float(
                    test.pvalue), 4), "mean_ap_difference": round(100 * float(
                        (ap[method] - ap["rrf"]).mean()), 2)}
        # as shipped: the untuned spec's own method and weights (hybrid-graph's graph members
        # at half weight), per split
        spec = default_spec(name, corpus)
        entry["untuned"] = {"method": spec.method, "weights": list(spec.weights), **{
            p.split: round(Judged(p, task).objective(fuse(rows, spec.weights, spec.method)), 2)
            for p, rows in zip(pools, parts, strict=True)}}
        entry["untuned_rrf"] = {p.split: round(Judged(p, task).objective(fuse(
            rows, weights, "rrf")), 2) for p, rows in zip(pools, parts, strict=True)}
        entry["singles"] = {m: round(pooled([Judged(p, task).objective(rows[i]) for p, rows
                                             in zip(pools, parts, strict=True)], sizes), 2)
                            for i, m in enumerate(members)}
        out[name] = entry
        print(name, entry, flush=True)
    return out


def demo(corpus: Corpus) -> dict[str, Any]:
    """Per method, the first ten titles of each search (``hybrid``'s untuned members)."""
    papers = corpus_papers(corpus)
    cache: dict = {}
    members = [make_scorer(m, papers, cache=cache)
               for m in list(default_spec(HYBRID, corpus).members)]
    titles = dict(corpus.connect().execute("SELECT paper_id, title FROM papers").fetchall())
    out: dict[str, Any] = {"members": [m.name for m in members]}
    for method in METHODS:
        fusion = Fusion(HYBRID, members, None, method)
        out[method] = {}
        for text in SEARCHES:
            rows, _ = fusion.top_k(Queries.of_texts([text]), 10)
            out[method][text] = [titles[papers.ids[r]][:90] for r in rows[0] if r >= 0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("taln", type=Path)
    parser.add_argument("demo", type=Path)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    numbers = {"taln_train_dev": taln(Corpus(args.taln)), "demo": demo(Corpus(args.demo))}
    for method in METHODS:
        print(method, numbers["demo"][method][SEARCHES[0]][:3])
    path = write_record(
        "fusion_evidence", numbers,
        data={"taln": "TALN (../shared/data/taln): train and dev pools",
              "demo": f"openmsd demo corpus ({len(corpus_papers(Corpus(args.demo)).ids)} papers, "
                      "e5-small-multilingual on ONNX)"},
        load_before=load_before,
        notes="Nothing fitted: every train and dev query is held out; no test split read. "
              "MAP in % (text-only: the mean over the three SDSM tasks; hidden links: "
              "citation), pools weighted by their queries as openmsd train ranker scores.")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
