"""Retrieval evaluation: rank a corpus for each query with a model, then score the ranking
against relevance judgements (qrels) with :mod:`openmsd.eval.metrics`, as trec_eval does.

Queries and documents are JSON-lines records with an ``id`` (or BEIR's ``_id``) and text from
whichever of ``title``, ``abstract``, ``context``, ``text`` they have. Qrels lines are
``query_id<TAB>doc_id<TAB>relevance`` (integer grades; BEIR's header line is skipped).
Every metric is a fraction in [0, 1], a mean over the queries that have at least one relevant
document (relevance > 0); the others are skipped and counted.

>>> evaluate_ranking({"q": {"a": 1, "c": 1}}, {"q": ["b", "a", "d", "c"]})["MAP"]
0.5
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openmsd.corpus import identify
from openmsd.eval.metrics import (
    average_precision,
    ndcg,
    rank_rows,
    recall,
    reciprocal_rank,
)
from openmsd.eval.ranks import listed_ranks
from openmsd.ingest import TEXT_FIELDS, RetrievalEvalError, as_str, read_qrels, read_records
from openmsd.models import paper_input
from openmsd.rank import Papers, Queries, Scorer, load_scorer
from openmsd.report import Report

#: The contract's metric names and ranx's names for them (ranx: the tests' oracle).
METRICS: dict[str, str] = {"MAP": "map", "nDCG@10": "ndcg@10", "MRR": "mrr",
                           "Recall@1": "recall@1", "Recall@10": "recall@10",
                           "Recall@100": "recall@100"}
#: How many documents are ranked per query: the largest cutoff of :data:`METRICS`.
CUTOFF = 100


def record_text(record: Mapping[str, Any]) -> str:
    """The text of a query or document record: openmsd's paper format of its ``title`` and
    ``abstract`` (:func:`openmsd.models.formatting.paper_input`), then its ``context`` and
    ``text``, leaving out what is missing; "" when it has none of them."""
    title, abstract, context, text = (as_str(record.get(name)) for name in TEXT_FIELDS)
    return " ".join(part for part in (paper_input(title, abstract), context, text) if part)


def text_papers(ids: Sequence[str], texts: Sequence[str]) -> Papers:
    """A collection of texts that is not a corpus (languages identified here)."""
    languages = [language or "und" for language, _ in identify(list(texts))]
    return Papers(list(ids), list(texts), languages)


def rank(scorer: Scorer, queries: Sequence[str], k: int = CUTOFF
         ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best documents of ``scorer``'s collection for each query text, best first:
    ``(indices, scores)``, both (queries × min(k, docs)); a place with no document the scorer
    has evidence for (BM25: no shared word) holds index -1 and score -inf."""
    if not len(scorer.papers):
        raise ValueError("rank: no documents")
    return scorer.top_k(Queries.of_texts(list(queries)), min(k, len(scorer.papers)))


def evaluate_ranking(qrels: Mapping[str, Mapping[str, int]],
                     ranking: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The mean of each metric of :data:`METRICS` over the queries of ``qrels``, as fractions.

    ``qrels``: ``{query_id: {doc_id: grade}}``, each query with at least one grade > 0;
    ``ranking``: ``{query_id: [doc_id, ...]}``, best first (a query missing from it retrieved
    nothing). trec_eval semantics (ranx's too, the tests' oracle): a document is relevant when
    its grade is > 0; AP and recall divide by all relevant documents, retrieved or not; nDCG
    gains are the grades (trec_eval's ``ndcg_cut``); MAP and MRR are over the whole ranking
    given."""
    relevant = {q: {d: int(g) for d, g in judged.items() if g > 0} for q, judged in qrels.items()}
    empty = [q for q, judged in relevant.items() if not judged]
    if empty:
        raise ValueError(f"evaluate_ranking: {len(empty)} queries without a relevant document, "
                         f"e.g. {empty[0]!r}")
    if not relevant:
        raise ValueError("evaluate_ranking: no queries")
    places = listed_ranks(ranking, {q: list(judged) for q, judged in relevant.items()})
    query = np.repeat(np.arange(len(places)), [len(p) for p in places])
    ranks = rank_rows(query, np.concatenate(places), len(places))
    gains = rank_rows(query, np.concatenate(places), len(places),
                      values=[g for judged in relevant.values() for g in judged.values()])
    values = {"MAP": average_precision(ranks), "nDCG@10": ndcg(ranks, 10, gains),
              "MRR": reciprocal_rank(ranks), "Recall@1": recall(ranks, 1),
              "Recall@10": recall(ranks, 10), "Recall@100": recall(ranks, 100)}
    return {name: float(values[name].mean()) for name in METRICS}


def evaluate_retrieval(queries: Mapping[str, str], corpus: Mapping[str, str],
                       qrels: Mapping[str, Mapping[str, int]],
                       ranker: Callable[[Papers], Scorer], k: int = CUTOFF) -> dict[str, Any]:
    """Rank ``corpus`` (``{doc_id: text}``) for each query (``{query_id: text}``) with the
    scorer ``ranker`` makes of it and score the top ``k`` against ``qrels`` (``{query_id:
    {doc_id: grade}}``).

    Returns ``n_queries`` (queries evaluated), ``n_docs``, ``metrics`` (fractions, see
    :func:`evaluate_ranking`), ``skipped_queries`` (queries without a relevant document in
    ``qrels``: not evaluated) and ``cutoff``. A query's own id is a candidate like any other
    (in a cross-lingual set the same paper can be query and answer)."""
    evaluated = [q for q in queries if any(g > 0 for g in qrels.get(q, {}).values())]
    if not evaluated:
        raise RetrievalEvalError("no query has a relevant document (grade > 0) in the qrels")
    doc_ids = list(corpus)
    scorer = ranker(text_papers(doc_ids, [corpus[d] for d in doc_ids]))
    indices, _ = rank(scorer, [queries[q] for q in evaluated], k)
    ranking = {q: [doc_ids[i] for i in row if i >= 0]
               for q, row in zip(evaluated, indices.tolist(), strict=True)}
    metrics = evaluate_ranking({q: qrels[q] for q in evaluated}, ranking)
    return {"n_queries": len(evaluated), "n_docs": len(doc_ids), "metrics": metrics,
            "skipped_queries": len(queries) - len(evaluated), "cutoff": k}


def evaluate_files(queries: Path, corpus: Path, qrels: Path, model: str,
                   strict: bool = False, batch_size: int = 32) -> tuple[dict[str, Any], Report]:
    """``openmsd eval retrieval``: read the three files, make the ranker ``model``
    (:func:`openmsd.rank.load_scorer`: a fusion, BM25, a registry name, a directory or hub
    name) over the documents, evaluate. Returns the result (the contract's ``model``,
    ``n_queries``, ``n_docs``, ``metrics``, plus ``skipped_queries``, ``cutoff``,
    ``metric_scale``, ``problems``, ``problems_by_reason``) and the report of input problems.
    With ``strict``, the first problem raises :class:`openmsd.report.IngestError`."""
    report = Report(strict=strict)
    query_texts = read_records(queries, report, record_text)
    doc_texts = read_records(corpus, report, record_text)
    judgements = read_qrels(qrels, report, query_texts, doc_texts)
    result = evaluate_retrieval(query_texts, doc_texts, judgements,
                                lambda papers: load_scorer(model, papers))
    summary = report.summary()
    return ({"model": model, **result, "metric_scale": "fraction",
             "problems": summary["problems"],
             "problems_by_reason": summary["problems_by_reason"]}, report)
