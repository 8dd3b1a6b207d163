"""Cross-lingual sanity on real data: TALN papers with a French abstract and the authors'
English translation. The French abstract is the query; the answer is the same paper's English
abstract among all English abstracts. Every ranker is evaluated in one process over one
collection, so that a dense model's vectors are encoded once and shared by the fusions that
hold it, documents and queries alike (a query text is encoded once, whichever ranker asks
first; Recall@1, MRR, nDCG@10, Recall@10, as ``openmsd eval retrieval`` computes them).

    python benchmarks/crosslingual_taln.py --models bm25 e5-small-multilingual hybrid \
        bm25+e5-small-multilingual --backend onnx

Writes ``benchmarks/results/crosslingual_taln.json``; ``--record NAME`` names the record
otherwise, e.g. the adapter's figure (an adapter directory is a model name)::

    python benchmarks/crosslingual_taln.py --models e5-small-multilingual \
        CORPUS/adapters/adapter-e5-small-multilingual --backend onnx --record adapter_crosslingual
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from record import write_record

from openmsd.eval import evaluate_retrieval, text_papers
from openmsd.models import DenseEncoder
from openmsd.rank import DenseScorer, Papers, Scorer, is_dense, load_encoder, load_scorer
from openmsd.vectors import BACKENDS

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "taln" / "papers.jsonl"


def read_task(source: Path) -> tuple[dict[str, str], dict[str, str]]:
    """French abstracts (queries) and English abstracts (documents) by paper id; the answer to
    a query is the document of the same id."""
    queries, documents = {}, {}
    for line in source.read_text(encoding="utf-8").splitlines():
        paper = json.loads(line)
        french = (paper.get("abstract") or "").strip()
        english = (((paper.get("translations") or {}).get("en") or {}).get("abstract")
                   or "").strip()
        if french and english:
            queries[paper["id"]], documents[paper["id"]] = french, english
    return queries, documents


class Remembered:
    """A dense encoder that encodes each (text, kind) once: the rankers of one run holding the
    same model get the same query vectors (no second encoding, no batch-dependent rounding)."""

    def __init__(self, encoder: DenseEncoder):
        self.inner, self.name, self.dim = encoder, encoder.name, encoder.dim
        self.known: dict[tuple[str, str], np.ndarray] = {}

    def encode(self, texts: list[str], kind: str = "passage", batch_size: int = 32
               ) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if (t, kind) not in self.known))
        if todo:
            for text, vector in zip(todo, self.inner.encode(todo, kind, batch_size),
                                    strict=True):
                self.known[(text, kind)] = vector
        return np.stack([self.known[(t, kind)] for t in texts]) if texts else np.zeros((0, 1))


def shared_dense(models: list[str], papers: Papers, backend: str) -> dict[str, Scorer]:
    """The dense models among ``models`` (single names), each over ``papers`` with a
    :class:`Remembered` encoder: the cache every ranker of the run is loaded with."""
    return {m: DenseScorer.from_texts(papers, Remembered(load_encoder(m, backend)), m)
            for m in models if "+" not in m and is_dense(m)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["bm25", "e5-small-multilingual",
                                                         "hybrid"])
    parser.add_argument("--papers", type=Path, default=DATA)
    parser.add_argument("--backend", default="torch", choices=BACKENDS)
    parser.add_argument("--out", type=Path, default=None, help="write the figures (JSON)")
    parser.add_argument("--record", default="crosslingual_taln",
                        help="the record's name (benchmarks/results/NAME.json)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    queries, documents = read_task(args.papers)
    print(f"{len(queries)} French queries, {len(documents)} English abstracts", file=sys.stderr)
    papers = text_papers(list(documents), list(documents.values()))
    cache = shared_dense(args.models, papers, args.backend)
    qrels = {q: {q: 1} for q in queries}
    rows = {}
    for model in args.models:
        start = time.perf_counter()
        result = evaluate_retrieval(queries, documents, qrels, lambda _papers, model=model:
                                    load_scorer(model, papers, backend=args.backend,
                                                cache=cache))
        rows[model] = {**result["metrics"], "seconds": round(time.perf_counter() - start, 1)}
        print(model, json.dumps(rows[model]), file=sys.stderr, flush=True)
    print(f"{'model':<32} {'R@1':>6} {'MRR':>6} {'nDCG@10':>8} {'R@10':>6} {'seconds':>8}")
    for model, m in rows.items():
        print(f"{model:<32} {m['Recall@1']:6.3f} {m['MRR']:6.3f} {m['nDCG@10']:8.3f} "
              f"{m['Recall@10']:6.3f} {m['seconds']:8.0f}")
    best = max(rows, key=lambda model: rows[model]["Recall@1"])
    write_record(
        args.record,
        {"headline": f"{rows[best]['Recall@1']:.3f}",
         "headline_means": f"Recall@1 of {best}: the French abstract finds its own English "
                           "translation first among all English abstracts",
         "peer": args.models[0], "rankers": rows},
        data={"queries": len(queries), "documents": len(documents), "backend": args.backend,
              "source": str(args.papers)},
        load_before=load_before,
        notes="Every TALN paper with both abstracts; no split and nothing tuned on this task "
              "(the rankers are untuned).")
    if args.out:
        args.out.write_text(json.dumps({"queries": len(queries), "documents": len(documents),
                                        "backend": args.backend, "rankers": rows}, indent=2)
                            + "\n")


if __name__ == "__main__":
    main()
