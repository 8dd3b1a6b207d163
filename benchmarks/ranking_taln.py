"""The ranking figures on a corpus with relations (TALN): fusion against its
members, text-only and with hidden links, weights tuned on dev only.

    openmsd ingest ../shared/data/taln/papers.jsonl ../shared/data/taln/parscit --out taln
    openmsd relations taln --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    openmsd embed taln && openmsd embed taln --model minilm-en
    python benchmarks/ranking_taln.py taln --out docs/ranking
    python benchmarks/ranking_taln.py taln --out docs/ranking/text --text-members bm25@same \
        bm25@same~prf bm25-en e5-small-multilingual e5-small-multilingual~prf minilm-en@en

1. ``openmsd tune`` (train + dev splits: text-only for ``hybrid``, hidden links for
   ``hybrid-graph``);
2. the text-only protocol on IDT, ODT and test: bm25, bm25-en, each dense model, ``authors``
   (shared authors, a metadata member), hybrid; the ratio of hybrid's average MAP to the
   better of BM25 and the best dense model (and to its best single member), and a paired
   t-test of per-(task, query) AP against BM25; English queries against the English-only model;
3. the hidden-links protocol on test: hybrid (text) against the graph scorers, the authors'
   citation habits (:mod:`openmsd.rank.authorship`) and hybrid-graph.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
from record import write_record
from scipy import stats

from openmsd.corpus import Corpus
from openmsd.eval import evaluate_sdsm, markdown
from openmsd.experiment import tune_fusion
from openmsd.rank import AUTHOR_SCORERS, HYBRID, HYBRID_GRAPH, dense_models, tuned

GRAPH = ["adamic-adar", "ppr", "co-citation", "coupling", "shared-references", "scincl-graph",
         f"{HYBRID}~links", *AUTHOR_SCORERS]


def pooled_t_test(a: Any, b: Any) -> dict[str, float]:
    """Paired t-test of AP over every (task, query) both per-query tables have."""
    con = duckdb.connect()
    con.register("a", a)
    con.register("b", b)
    x, y = zip(*con.execute('SELECT a."AP", b."AP" FROM a JOIN b USING (task, query)')
               .fetchall(), strict=True)
    test = stats.ttest_rel(x, y)
    return {"n": len(x), "t": round(float(test.statistic), 3), "p": float(test.pvalue),
            "mean_difference": round(100 * (sum(x) - sum(y)) / len(x), 3)}


def _saved(corpus: Corpus, name: str) -> dict:
    """The stored entry of ranker ``name`` as the rankers file writes it ({} without one)."""
    entry = tuned(corpus).get(name)
    return entry.as_json() if entry else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="write figures.json and "
                        "tables.md here")
    parser.add_argument("--no-tune", action="store_true", help="use the saved weights")
    parser.add_argument("--protocols", nargs="+", default=["text-only", "hidden-links"],
                        choices=["text-only", "hidden-links"], help="which tables to measure")
    parser.add_argument("--text-members", nargs="+", default=None,
                        help="the members hybrid may weigh (default: openmsd.experiment.tune's)")
    parser.add_argument("--record", default=None, help="also write "
                        "benchmarks/results/RECORD.json (benchmarks/record.py)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    corpus = Corpus(args.corpus)
    tune_seconds = None
    if not args.no_tune:
        started = time.perf_counter()
        spec = tune_fusion(corpus, members=args.text_members)
        tune_seconds = round(time.perf_counter() - started, 1)
        print(json.dumps(spec, indent=2), file=sys.stderr)
    dense = [m for m in dense_models(corpus) if "+" not in m]
    text_models = ["bm25", "bm25-en", *dense, "authors", HYBRID]
    figures: dict[str, Any] = {"dense": dense, "splits": {}}
    kept = ("members", "weights", "method", "split", "queries", "tuned", "objective_value",
            "cross_validation", "free_text")
    figures["hybrid"] = {k: v for k, v in _saved(corpus, HYBRID).items() if k in kept}
    figures["tune_seconds"] = tune_seconds
    tables = []
    for split in ("idt", "odt", "test") if "text-only" in args.protocols else ():
        result = evaluate_sdsm(corpus, text_models, split)
        models = result.summary["models"]
        best_dense = max(dense, key=lambda m: models[m]["average"]["MAP"])
        reference = max(models["bm25"]["average"]["MAP"], models[best_dense]["average"]["MAP"])
        entry = {name: models[name]["average"]["MAP"] for name in text_models}
        entry["best_dense"] = best_dense
        entry["ratio_hybrid_to_best_single"] = round(models[HYBRID]["average"]["MAP"]
                                                     / reference, 3)
        entry["ratio_hybrid_to_best_member"] = round(
            models[HYBRID]["average"]["MAP"]
            / max(models[m]["average"]["MAP"] for m in text_models if m != HYBRID), 3)
        entry["t_test_hybrid_vs_bm25"] = pooled_t_test(result.per_query[HYBRID],
                                                       result.per_query["bm25"])
        entry["english_queries"] = {
            name: models[name]["by_language"].get("en", {}).get("average", {}).get("MAP")
            for name in text_models}
        entry["english_query_count"] = (models[HYBRID]["by_language"].get("en", {})
                                        .get("average", {}).get("n_queries", 0))
        figures["splits"][split] = entry
        tables.append(f"### {split}, text-only\n\n{markdown(result.summary)}\n")
        print(split, json.dumps(entry), flush=True)
    if "hidden-links" not in args.protocols:
        return finish(args, corpus, figures, tables, load_before)
    hidden = evaluate_sdsm(corpus, ["bm25", HYBRID, *GRAPH, HYBRID_GRAPH], "test",
                           protocol="hidden-links")
    models = hidden.summary["models"]
    figures["hybrid_graph"] = {k: v for k, v in _saved(corpus, HYBRID_GRAPH).items()
                               if k in kept}
    figures["hidden_links"] = {
        "hidden_links": hidden.summary["hidden_links"],
        "queries": models[HYBRID]["citation"]["n_queries"],
        **{name: models[name]["citation"]["MAP"] for name in models},
        "ratio_graph_to_text": round(models[HYBRID_GRAPH]["citation"]["MAP"]
                                     / models[HYBRID]["citation"]["MAP"], 3),
        "t_test_hybrid_graph_vs_hybrid": pooled_t_test(hidden.per_query[HYBRID_GRAPH],
                                                       hidden.per_query[HYBRID])}
    tables.append(f"### test, hidden links\n\n{markdown(hidden.summary)}\n")
    print("hidden-links", json.dumps(figures["hidden_links"]), flush=True)
    finish(args, corpus, figures, tables, load_before)


def finish(args: argparse.Namespace, corpus: Corpus, figures: dict[str, Any],
           tables: list[str], load_before: float) -> None:
    """figures.json and tables.md (``--out``) and the record (``--record``)."""
    write(args.out, figures, tables)
    if args.record:
        papers = corpus.connect().execute("SELECT count(*) FROM papers").fetchone()[0]
        path = write_record(
            args.record, figures, data={"corpus": "TALN (../shared/data/taln)",
                                        "papers": papers},
            load_before=load_before,
            notes="Weights chosen on the train and dev splits only (openmsd tune: 5-fold "
                  "cross-validation over their queries, the tuned fusion kept only where it "
                  "beats the untuned one out of fold). The IDT, ODT and test splits are read "
                  "once, at the end of this run, to report the figures; these TALN test "
                  "splits had been read many times before.")
        print(f"wrote {path}")


def write(out: Path | None, figures: dict[str, Any], tables: list[str]) -> None:
    """figures.json and tables.md in ``out`` (nothing without one)."""
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
        (out / "tables.md").write_text("\n".join(tables))


if __name__ == "__main__":
    main()
