"""Every location's ranked list of ``recommend`` with a trained MP-BERT4CR model (two stages,
its learned rerank with the own sentence's BM25 and e5 scores) for real manuscripts against a
corpus, as JSON, to compare two versions of the code byte for byte (session 12:
docs/citrec.md)::

    PYTHONPATH=OLD python docs/server/session12/recommend_answers.py CORPUS MODEL before.json \\
        MANUSCRIPT...
    PYTHONPATH=NEW python docs/server/session12/recommend_answers.py CORPUS MODEL after.json \\
        MANUSCRIPT...
    cmp before.json after.json

The model's vectors of the corpus papers are seeded unit vectors in an exact in-memory index
(as ``benchmarks/recommend_latency.py`` does; the same in both runs); the own-sentence e5
scores read the corpus's stored e5 vectors (``openmsd embed --backend torch``). An unarXive
JSONL file gives its first ``--papers`` papers; unreadable manuscripts are named and counted.
"""

from __future__ import annotations

import argparse
import json
import os
from itertools import islice
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import faiss
import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import VectorIndex, load_index
from openmsd.ingest import ManuscriptError, read_manuscript
from openmsd.models import load_model
from openmsd.search import recommend_citations


def model_index(corpus: Corpus, dim: int) -> VectorIndex:
    """Seeded unit vectors of ``dim`` for the papers of the corpus's first index."""
    name = next(p.name for p in sorted((corpus.root / "index").iterdir())
                if (p / "papers.parquet").exists())
    rows = load_index(corpus, name).papers
    vectors = np.random.default_rng(1).normal(size=(rows.num_rows, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(dim)
    index.add(vectors)
    return VectorIndex(index, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("model")
    parser.add_argument("out", type=Path)
    parser.add_argument("manuscripts", nargs="+", type=Path)
    parser.add_argument("--papers", type=int, default=3)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    encoder = load_model(args.model)
    index = model_index(corpus, encoder.dim)
    out: dict[str, object] = {}
    unread = []
    for path in args.manuscripts:
        papers = [None]
        if path.suffix == ".jsonl":
            with open(path, "rb") as lines:
                papers = [json.loads(line)["paper_id"] for line in islice(lines, args.papers)]
        for paper in papers:
            try:
                document = read_manuscript(path, paper)
            except ManuscriptError as error:
                unread.append(str(error))
                continue
            found = recommend_citations(corpus, document.text, encoder, args.model, 10,
                                        index=index, max_locations=None,
                                        manuscript_ids=document.ids,
                                        manuscript_title=document.title)
            out[f"{path.name}:{paper or ''}"] = [
                [loc["ranking"], loc["sentence"],
                 [[r["paper_id"], r["score"]] for r in loc["results"]]] for loc in found]
    out["unreadable"] = unread
    args.out.write_text(json.dumps(out, indent=0))
    print(len(out) - 1, "manuscripts,", sum(len(v) for k, v in out.items() if k != "unreadable"),
          "locations,", len(unread), "unreadable")


if __name__ == "__main__":
    main()
