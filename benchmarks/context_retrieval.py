"""Citation contexts → the cited paper, with any ranker (``openmsd eval retrieval``'s
evaluation): each fusion against each of its single scorers, on the same queries, with a paired
t-test of each ranker's per-context AP against the first ranker's.

Queries are the citation contexts of a corpus (``contexts.parquet``) whose reference resolved
to a corpus paper; the documents are the corpus papers with a title or abstract
(``--targets papers``) or the reference entries' titles (``--targets references``: for a
corpus such as the unarXive sample whose references mostly point outside it); the relevant
document is the cited one.

    python benchmarks/context_retrieval.py taln --rankers bm25 bm25-en e5-small-multilingual hybrid
    python benchmarks/context_retrieval.py taln --splits idt odt   # the test papers' contexts
    python benchmarks/context_retrieval.py taln --groups train,dev idt,odt   # one run, 2 tables
    python benchmarks/context_retrieval.py unarxive --targets references

``--splits``: only the contexts of citing papers of these relation splits (``openmsd tune``
fits ``hybrid``'s free-text fallback on those of ``train`` and ``dev``).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from scipy import stats

from openmsd.corpus import Corpus
from openmsd.eval import text_papers
from openmsd.eval.retrieval import evaluate_ranking, rank
from openmsd.experiment import citation_contexts
from openmsd.rank import HYBRID, corpus_papers, load_scorer, tuned


def task(corpus: Corpus, targets: str, splits: list[str] | None = None
         ) -> tuple[dict, dict, dict]:
    """queries ``{context_id: text}``, documents ``{id: text}``, qrels."""
    con = corpus.connect()
    if targets == "papers":
        every = corpus_papers(corpus)
        docs = {i: t for i, t in zip(every.ids, every.texts, strict=True) if t}
        contexts = citation_contexts(corpus, corpus_papers(corpus, docs), splits)
        pairs = [(f"context{i}", text, paper) for i, (text, paper) in enumerate(zip(
            contexts["text"].to_pylist(), contexts["cited_id"].to_pylist(), strict=True))]
    else:
        rows = con.execute("""
            SELECT c.citing_id, c.position, c.text, r.citing_id || '/' || r.ref_id,
                   coalesce(r.title, r.raw)
            FROM contexts c JOIN "references" r ON r.citing_id = c.citing_id
                 AND r.ref_id = c.ref_id
            WHERE c.text IS NOT NULL AND coalesce(r.title, r.raw) IS NOT NULL
            ORDER BY ALL""").fetchall()
        docs = {ref: title for *_, ref, title in rows}
        every = con.execute("SELECT citing_id || '/' || ref_id, coalesce(title, raw) "
                            'FROM "references" '
                            "WHERE coalesce(title, raw) IS NOT NULL").fetchall()
        docs.update({ref: title for ref, title in every})
        pairs = [(f"{c}#{p}#{ref}", text, ref) for c, p, text, ref, _ in rows]
    queries = {q: text for q, text, _ in pairs}
    qrels: dict[str, dict[str, int]] = {}
    for q, _, doc in pairs:
        qrels.setdefault(q, {})[doc] = 1
    return queries, docs, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--targets", choices=["papers", "references"], default="papers")
    parser.add_argument("--rankers", nargs="+",
                        default=["bm25", "bm25-en", "e5-small-multilingual", "hybrid"])
    parser.add_argument("--splits", nargs="+", default=None,
                        help="only the contexts of these splits' citing papers (papers targets)")
    parser.add_argument("--groups", nargs="+", default=None,
                        help="sets of splits, each comma-separated (train,dev idt,odt): one "
                             "table per set in one run, the rankers loaded once")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    sets = [g.split(",") for g in args.groups] if args.groups else [args.splits]
    tasks = {"+".join(splits) if splits else "all": task(corpus, args.targets, splits)
             for splits in sets}
    cache: dict = {}
    found: dict[str, dict] = {}
    for label, (queries, docs, qrels) in tasks.items():
        print(f"{label}: {len(queries)} contexts, {len(docs)} candidate documents", flush=True)
        found[label] = {"queries": len(queries), "documents": len(docs),
                        "rankers": evaluate(corpus, args.targets, args.rankers, queries, docs,
                                            qrels, cache)}
    # what the tuned hybrid's free-text fallback was chosen by (train + dev, out of fold)
    rankers = {name: entry.as_json() for name, entry in tuned(corpus).items()}
    fallbacks = rankers.get(HYBRID, {}).get("fallbacks", [])
    chosen = {k: fallbacks[0][k] for k in ("chosen", "members", "weights", "method",
                                           "cross_validation") if k in fallbacks[0]} \
        if fallbacks else None
    if args.json:
        out = found[next(iter(found))] if len(found) == 1 else {"groups": found}
        args.json.write_text(json.dumps({**out, "hybrid_fallback": chosen}, indent=2) + "\n")


def evaluate(corpus: Corpus, targets: str, rankers: list[str], queries: dict, docs: dict,
             qrels: dict, cache: dict) -> dict[str, dict]:
    """Each ranker's metrics (and seconds) on one task, and a paired t-test of its per-context
    AP against the first ranker's; ``cache`` shares the scorers."""
    results, per_query = {}, {}
    # corpus papers as documents: their English view and stored vectors are the corpus's
    collection = corpus_papers(corpus, docs) if targets == "papers" else None
    if collection is not None:
        docs = {paper_id: docs[paper_id] for paper_id in collection.ids}
    papers = collection or text_papers(list(docs), list(docs.values()))
    doc_ids = list(papers.ids)
    for name in rankers:
        started = time.perf_counter()
        rows, _ = rank(load_scorer(name, papers, cache=cache), list(queries.values()))
        ranking = {q: [doc_ids[i] for i in row if i >= 0]
                   for q, row in zip(queries, rows.tolist(), strict=True)}
        m = evaluate_ranking(qrels, ranking)
        per_query[name] = [evaluate_ranking({q: qrels[q]}, {q: ranking[q]})["MAP"]
                           for q in queries]
        results[name] = {**m, "seconds": round(time.perf_counter() - started)}
        if name != rankers[0]:
            test = stats.ttest_rel(per_query[name], per_query[rankers[0]])
            p = float(test.pvalue)  # NaN: the same AP on every context
            results[name][f"p_vs_{rankers[0]}"] = round(p, 4) if math.isfinite(p) else None
        print(f"{name:<28} MAP {m['MAP']:.3f}  MRR {m['MRR']:.3f}  R@1 {m['Recall@1']:.3f}  "
              f"R@10 {m['Recall@10']:.3f}  R@100 {m['Recall@100']:.3f}  "
              f"p {results[name].get(f'p_vs_{rankers[0]}', '-')}", flush=True)
    return results


if __name__ == "__main__":
    main()
