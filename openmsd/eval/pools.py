"""The merged-pool protocol of OpenMSD's Appendix A, for any corpus with task labels.

SciDocs groups each task's papers into clusters (an anchor, five positives, 25 negatives) and
ranks an anchor's cluster only, so every model scores 90 %+ nDCG. The merged-pool protocol
puts the papers of all tasks in one pool and ignores the clusters: each query ranks the whole
pool. Both protocols are here, on the same scorers and metrics as ``openmsd eval sdsm``:

* ``clustered``: a query's candidates are the papers judged for it in its task (label 0 or 1);
* ``merged``: its candidates are every paper of every task (never the query itself).

Tasks are qrels files: ``query 0 doc label`` (TREC / SciDocs) or ``query<TAB>doc<TAB>label``
lines; papers are JSON lines with ``id`` (or ``_id``, ``paper_id``), ``title``, ``abstract``,
or SciDocs' metadata JSON (one object: id → record).

>>> tasks = {"cite": {"a": {"b": 1, "c": 0}}}
>>> sorted(pool_ids(tasks))
['a', 'b', 'c']
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from openmsd.eval.metrics import per_query
from openmsd.eval.ranks import Scorer, ScorerRows, relevant_ranks
from openmsd.eval.retrieval import record_text, text_papers
from openmsd.ingest.queries import RetrievalEvalError, read_papers, read_task
from openmsd.rank import load_scorer
from openmsd.report import Report

Tasks = Mapping[str, Mapping[str, Mapping[str, int]]]  # task -> query -> doc -> label


def pool_ids(tasks: Tasks) -> set[str]:
    """Every query and judged paper of every task: the merged pool."""
    return {paper for judged in tasks.values() for query, docs in judged.items()
            for paper in (query, *docs)}


class ClusterScorer:
    """A scorer whose candidates for each query are only its cluster (other papers -inf)."""

    def __init__(self, scorer: Scorer, clusters: Mapping[int, np.ndarray]):
        self.scorer = scorer
        self.clusters = clusters
        self.n_docs = scorer.n_docs

    def rows(self, queries: np.ndarray) -> np.ndarray:
        scores = self.scorer.rows(queries)
        masked = np.full_like(scores, -np.inf)
        for i, query in enumerate(queries):
            cluster = self.clusters[int(query)]
            masked[i, cluster] = scores[i, cluster]
        return masked


def evaluate_pools(tasks: Tasks, ids: list[str], scorer: Scorer, clustered: bool
                   ) -> dict[str, dict[str, Any]]:
    """Per task MAP and nDCG@10 (%) and query counts, ranking the merged pool ``ids`` (the
    scorer's row/column order) or, with ``clustered``, each query's cluster. Queries with no
    positive label are counted in ``skipped``."""
    position = {paper: i for i, paper in enumerate(ids)}
    rows: list[tuple[str, int, int]] = []  # task, query position, doc position
    clusters: dict[tuple[str, int], np.ndarray] = {}
    skipped: dict[str, int] = {}
    for task, judged in tasks.items():
        skipped[task] = 0
        for query, docs in judged.items():
            positives = [d for d, label in docs.items() if label > 0 and d != query]
            if not positives:
                skipped[task] += 1
                continue
            q = position[query]
            rows += [(task, q, position[d]) for d in positives]
            clusters[task, q] = np.array([position[d] for d in docs if d != query], np.int64)
    out: dict[str, dict[str, Any]] = {}
    for task in tasks:
        pairs = [(q, d) for t, q, d in rows if t == task]
        if not pairs:
            out[task] = {"MAP": None, "nDCG@10": None, "n_queries": 0,
                         "skipped": skipped[task]}
            continue
        queries, pair_query = np.unique([q for q, _ in pairs], return_inverse=True)
        task_scorer = (ClusterScorer(scorer, {q: clusters[task, q] for q in queries})
                       if clustered else scorer)
        ranks = relevant_ranks(task_scorer, queries, pair_query, np.array([d for _, d in pairs]),
                               tie_order=np.arange(len(ids)))
        values = per_query(pa.table({"query": queries[pair_query], "rank": ranks}), ["query"])
        out[task] = {"MAP": round(float(np.mean(values["AP"].to_numpy())) * 100, 4),
                     "nDCG@10": round(float(np.mean(values["nDCG@10"].to_numpy())) * 100, 4),
                     "n_queries": values.num_rows, "skipped": skipped[task]}
    scored = [v for v in out.values() if v["n_queries"]]
    out["average"] = {metric: (round(sum(v[metric] for v in scored) / len(scored), 4)
                               if scored else None) for metric in ("MAP", "nDCG@10")}
    out["average"]["n_queries"] = sum(v["n_queries"] for v in scored)
    return out


def known_papers(tasks: Tasks, texts: Mapping[str, str], report: Report
                 ) -> dict[str, dict[str, dict[str, int]]]:
    """``tasks`` without judgements naming a paper that has no text (each counted in
    ``report``: a query without text drops its whole cluster)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for task, judged in tasks.items():
        kept: dict[str, dict[str, int]] = {}
        for query, docs in judged.items():
            if query not in texts:
                report.problem(task, f"query {query!r}", "paper without text: not in the "
                               "papers file, or no title and abstract")
                continue
            missing = [d for d in docs if d not in texts]
            for doc in missing:
                report.problem(task, f"query {query!r}, doc {doc!r}",
                               "paper without text: not in the papers file, or no title and "
                               "abstract")
            kept[query] = {d: label for d, label in docs.items() if d in texts}
        out[task] = kept
    return out


def evaluate_files(papers: Path, task_files: Mapping[str, Path], models: list[str],
                   protocols: tuple[str, ...] = ("clustered", "merged"), seed: int = 0
                   ) -> tuple[dict[str, Any], Report]:
    """``openmsd eval pools``: per model and protocol, per task MAP / nDCG@10 (%) and the
    average; the merged pool's size; and the report of input problems."""
    report = Report()
    texts = read_papers(papers, report, record_text)
    tasks = known_papers({name: read_task(path, report) for name, path in task_files.items()},
                         texts, report)
    ids = sorted(pool_ids(tasks))
    if not ids:
        raise RetrievalEvalError("no judged paper has text")
    result: dict[str, Any] = {"pool": len(ids), "tasks": {t: len(j) for t, j in tasks.items()},
                              "models": {}}
    papers = text_papers(ids, [texts[i] for i in ids])
    cache: dict = {}
    for model in models:
        scorer = ScorerRows(load_scorer(model, papers, seed=seed, cache=cache))
        result["models"][model] = {protocol: evaluate_pools(tasks, ids, scorer,
                                                            protocol == "clustered")
                                   for protocol in protocols}
    summary = report.summary()
    result["problems"] = summary["problems"]
    result["problems_by_reason"] = summary["problems_by_reason"]
    return result, report
