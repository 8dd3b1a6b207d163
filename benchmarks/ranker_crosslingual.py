"""French → English on TALN with a corpus's trained ranker: each French abstract finds its
own English translation among all English abstracts (as ``crosslingual_taln.py``), ranked by
the trained ``hybrid``'s free-text head (what ``search`` ranks with) over the same members,
and by each member alone.

    openmsd train ranker TALN
    python benchmarks/ranker_crosslingual.py TALN --record
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from crosslingual_taln import DATA, read_task, shared_dense
from record import write_record

from openmsd.corpus import Corpus
from openmsd.eval import evaluate_retrieval, text_papers
from openmsd.rank import (
    HYBRID,
    LEARNED,
    RankerEntry,
    RankerSpec,
    adapters_of,
    learned_fusion,
    load_scorer,
    tuned,
)


def crosslingual(corpus: Corpus, backend: str) -> dict[str, Any]:
    """French → English Recall@1 and MRR of the learned ``hybrid``'s free-text head, and of
    its best single member, over TALN's papers that have both abstracts."""
    queries, documents = read_task(DATA)
    papers = text_papers(list(documents), list(documents.values()))
    spec = tuned(corpus)[HYBRID].as_json()
    head = spec.get("free_text", spec.get("paper"))
    if head is None:  # the untuned fusion won: it ranks free text too
        head = {"members": spec["members"], "model": None, "method": spec["method"],
                "weights": spec["weights"]}
    members = list(head["members"])
    specs = {m: RankerSpec.parse(m) for m in members}
    plain = {m: spec.inner if spec.language else spec  # without its pair (minilm-en:onnx@en)
             for m, spec in specs.items()}
    cache = shared_dense([spec.model for spec in plain.values()], papers, backend)
    qrels = {q: {q: 1} for q in queries}

    adapters = {a.name: a.path for a in adapters_of(corpus)}

    def loaded(name: str):
        """The member ``name``, its dense model encoded once (``cache``), its language pair
        kept (an English-only model hears English pairs only); an adapter of the corpus
        encodes with its bases, then maps."""
        bare = plain[name].model
        if bare in adapters:
            found = load_scorer(str(adapters[bare]), papers, backend=backend, cache={})
        else:
            found = cache.get(bare) or load_scorer(bare, papers, backend=backend, cache={})
        return load_scorer(name, papers, backend=backend, cache={str(plain[name]): found})

    out = {}
    scorers = [loaded(m) for m in members]
    fusion = learned_fusion(HYBRID, scorers, RankerEntry.from_json(
        {"members": members, "method": LEARNED, "paper": head}))
    for label, scorer in [("trained free-text head", fusion),
                          *[(m, s) for m, s in zip(members, scorers, strict=True)]]:
        result = evaluate_retrieval(queries, documents, qrels, lambda _p, s=scorer: s)
        out[label] = {k: round(v, 4) for k, v in result["metrics"].items()
                      if k in ("Recall@1", "MRR", "Recall@10")}
        print(label, out[label], file=sys.stderr, flush=True)
    return {"queries": len(queries), "documents": len(documents), "head": {
        k: v for k, v in head.items() if k in ("members", "method", "weights", "untuned")}
        | {"model": head["model"]["kind"] if head.get("model") else None}, "rankers": out}




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="TALN with a trained ranker")
    parser.add_argument("--backend", default="onnx-sq8", help="the dense models' backend (the "
                        "corpus's vectors: onnx-sq8)")
    parser.add_argument("--record", action="store_true", help="write "
                        "benchmarks/results/ranker_crosslingual.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    found = crosslingual(Corpus(args.corpus), args.backend)
    head = found["rankers"]["trained free-text head"]
    if args.record:
        write_record("ranker_crosslingual",
                     {"headline": f"{head['Recall@1']:.3f}",
                      "headline_means": "Recall@1 of the trained ranker's free-text head: the "
                                        "French abstract finds its own English translation "
                                        "first among all English abstracts", **found},
                     data={"corpus": str(args.corpus), "source": str(DATA),
                           "backend": args.backend},
                     load_before=load_before,
                     notes="No split: every TALN paper with both abstracts; the ranker was "
                           "trained on the corpus's train and dev links, not on this task.")
    print(found, file=sys.stderr)


if __name__ == "__main__":
    main()
