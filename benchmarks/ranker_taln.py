"""The learned ranker on TALN: ``openmsd train ranker`` on the train and dev splits (its
out-of-fold table), then the test splits read once: IDT and ODT apart, each language direction,
the learned ranker against every single member and the untuned fusion, and French → English
Recall@1 of its free-text head.

    openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out taln
    openmsd relations taln --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    openmsd embed taln && openmsd embed taln --model minilm-en
    python benchmarks/ranker_taln.py taln --record

1. the untuned ``hybrid`` and ``hybrid-graph`` are scored first (the corpus's ranker moved
   aside), then ``openmsd train ranker`` fits the learned ones (its adapters first), which
   are scored the same way, the adapters as single signals too;
2. text-only protocol (``hybrid``): BM25 within a language, BM25 across languages in English,
   each dense model, ``authors``; hidden-links protocol (``hybrid-graph``): those and the
   graph's signals; on IDT and ODT;
3. the French abstracts of TALN find their own English translation among all English
   abstracts, ranked by the learned ranker's free-text head over the same members.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ranker_crosslingual import crosslingual
from record import write_record

from openmsd.corpus import Corpus
from openmsd.eval import evaluate_sdsm
from openmsd.experiment import train_ranker
from openmsd.experiment.adapters import adapted_members
from openmsd.experiment.ranker import GRAPH_SIGNALS, text_signals
from openmsd.rank import HYBRID, HYBRID_GRAPH, ranker_path

SPLITS = ("idt", "odt")


def scored(corpus: Corpus, models: list[str], protocol: str,
           splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """Average MAP (and per task, per direction) of ``models`` on each of ``splits``, with the
    split's relevant pairs (``queries``) and its queries in all and per direction
    (``queries_by_direction``)."""
    out: dict[str, Any] = {}
    for split in splits:
        summary = evaluate_sdsm(corpus, models, split=split, protocol=protocol).summary
        out[split] = {name: {"average": round(m["average"]["MAP"], 2),
                             **{task: round(m[task]["MAP"], 2)
                                for task in ("citation", "co-citation", "bib-coupling")
                                if task in m and m[task]["MAP"] is not None},
                             "by_direction": {d: round(v["average"]["MAP"], 2) for d, v in
                                              m["by_direction"].items()
                                              if v["average"]["MAP"] is not None}}
                      for name, m in summary["models"].items()}
        out[split]["queries"] = summary["relevant_pairs"]
        first = next(iter(summary["models"].values()))
        out[split]["queries_by_direction"] = {
            "average": first["average"]["n_queries"],
            **{d: v["average"]["n_queries"] for d, v in first["by_direction"].items()}}
    return out


def singles_of(*tables: dict[str, Any], but: str) -> dict[str, Any]:
    """The single members' figures of one split's ``scored`` tables: every model but ``but``
    (the fusion), the counts left out."""
    return {m: v for table in tables for m, v in table.items()
            if m not in (but, "queries", "queries_by_direction")}


def members_of(corpus: Corpus) -> tuple[list[str], list[str]]:
    """The single members scored beside each untuned fusion: the text signals and authors
    (``hybrid``), and those with the graph signals (``hybrid-graph``)."""
    text_models = [*text_signals(corpus), "authors"]
    return text_models, [*text_models, *GRAPH_SIGNALS]


def before_and_after(corpus: Corpus, splits: tuple[str, ...] = SPLITS, contexts: bool = True
                     ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], float]:
    """The untuned fusions and every member scored on ``splits`` (the corpus's ranker moved
    aside), then ``train_ranker`` (``contexts``: recommend's first stage learned too), then
    the learned fusions and the adapters it made: ``(before, after, trained, seconds)``, each
    table ``{protocol: scored(...)}``."""
    path = ranker_path(corpus)
    if path.exists():
        shutil.move(path, path.with_suffix(".json.before"))
    text_models, graph_models = members_of(corpus)
    print("untuned fusions...", file=sys.stderr, flush=True)
    before = {"text-only": scored(corpus, [*text_models, HYBRID], "text-only", splits),
              "hidden-links": scored(corpus, [*graph_models, HYBRID_GRAPH], "hidden-links",
                                     splits)}
    started = time.perf_counter()
    trained = train_ranker(corpus, contexts=contexts)
    seconds = round(time.perf_counter() - started, 1)
    print(f"trained in {seconds} s; learned fusions...", file=sys.stderr, flush=True)
    adapters = adapted_members(corpus)  # trained by train ranker: single signals too
    after = {"text-only": scored(corpus, [HYBRID, *adapters], "text-only", splits),
             "hidden-links": scored(corpus, [HYBRID_GRAPH, *adapters], "hidden-links",
                                    splits)}
    return before, after, trained, seconds


def out_of_fold(trained: dict[str, Any]) -> dict[str, Any]:
    """``train_ranker``'s out-of-fold table per ranker and head (what was tried, what was
    kept)."""
    return {name: {head: {k: v for k, v in found[head].items() if k != "head"}
                   for head in ("paper", "free_text") if head in found}
            for name, found in trained["report"].items() if "skipped" not in found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--backend", default="onnx-sq8", help="the dense models' backend for "
                        "the cross-lingual task (the corpus's vectors: onnx-sq8)")
    parser.add_argument("--record", action="store_true", help="write "
                        "benchmarks/results/ranker_taln.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    corpus = Corpus(args.corpus)
    text_models, graph_models = members_of(corpus)
    before, after, trained, seconds = before_and_after(corpus)
    figures: dict[str, Any] = {}
    for protocol, fused in (("text-only", HYBRID), ("hidden-links", HYBRID_GRAPH)):
        for split in SPLITS:
            singles = singles_of(before[protocol][split], after[protocol][split], but=fused)
            best = max(singles, key=lambda m: singles[m]["average"])
            learned = after[protocol][split][fused]
            figures[f"{protocol} {split}"] = {
                "learned": learned, "untuned": before[protocol][split][fused],
                "best_single": best, "best_single_figures": singles[best],
                "singles": singles,
                "learned_over_best_single": round(learned["average"]
                                                  / singles[best]["average"], 3)}
            print(f"{protocol} {split}: learned {learned['average']:.2f}, untuned "
                  f"{before[protocol][split][fused]['average']:.2f}, best single {best} "
                  f"{singles[best]['average']:.2f}", flush=True)
    cross = crosslingual(corpus, args.backend)
    report = trained["report"]
    ratios = [f["learned_over_best_single"] for f in figures.values()]
    numbers = {
        "headline": f"{min(ratios):.2f}",
        "headline_means": "the lowest ratio, over IDT and ODT and both protocols, of the "
                          "learned ranker's average MAP to its best single member's on the "
                          "test splits",
        "peer": "the best single member on each test split", "train_seconds": seconds,
        "out_of_fold": out_of_fold(trained),
        "queries": {n: f["queries"] for n, f in report.items() if "queries" in f},
        "test": figures, "crosslingual_fr_en": cross}
    if args.record:
        write_record("ranker_taln", numbers,
                     data={"corpus": str(args.corpus), "papers": corpus.connect().execute(
                         "SELECT count(*) FROM papers").fetchone()[0],
                           "members": {"text": text_models, "graph": graph_models}},
                     load_before=load_before,
                     notes="Trained on train and dev (out-of-fold figures); TALN's test "
                           "splits (IDT, ODT) read by this run after training, as by its "
                           "earlier runs; nothing in the ranker, its members or the untuned "
                           "fusions was chosen on them.")


if __name__ == "__main__":
    main()
