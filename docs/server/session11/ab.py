"""Interleaved A/B of session 11's fused-search changes in one process (docs/server.md):
``rank_search`` (``hybrid``) and ``nearest`` (dense only) CPU per request with this session's
code (B) and with session 10's code paths put back (A: no ``score_pools`` on ``DenseScorer``
and ``LanguagePairScorer``, so one ``score()`` per query; reciprocal ranks with
``np.put_along_axis``; the candidates' union by ``np.unique``); median of ``--passes`` passes
each, A and B alternating::

    OMP_NUM_THREADS=1 PYTHONPATH=. nice -n 19 python docs/server/session11/ab.py \
        /tmp/server-load/n100000/corpus
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import load_index
from openmsd.models import load_model
from openmsd.rank import DenseScorer
from openmsd.rank import fusion as fusion_module
from openmsd.rank.scorer import LanguagePairScorer
from openmsd.search import corpus_scorer, dense_members, nearest, rank_search

NEW = {"reciprocal_ranks": fusion_module.reciprocal_ranks, "_union": fusion_module._union}
NEW_POOLS = {DenseScorer: DenseScorer.score_pools,
             LanguagePairScorer: LanguagePairScorer.score_pools}


def old_reciprocal_ranks(scores: np.ndarray, k: int = fusion_module.RRF_K) -> np.ndarray:
    """Session 10's ``reciprocal_ranks``."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1)[None, :].repeat(
        len(scores), axis=0), axis=1)
    return np.where(np.isfinite(scores), 1.0 / (k + ranks), 0.0).astype(np.float32)


def old_union(parts: list[np.ndarray]) -> np.ndarray:
    return np.unique(np.concatenate(parts))


def use(new: bool) -> None:
    """This session's code paths (``new``) or session 10's."""
    fusion_module.reciprocal_ranks = NEW["reciprocal_ranks"] if new else old_reciprocal_ranks
    fusion_module._union = NEW["_union"] if new else old_union
    for cls, method in NEW_POOLS.items():
        if new:
            cls.score_pools = method
        elif "score_pools" in vars(cls):
            delattr(cls, "score_pools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--queries", type=int, default=299)
    parser.add_argument("--passes", type=int, default=7)
    args = parser.parse_args()
    corpus = Corpus(args.corpus)
    fused = corpus_scorer(corpus, "hybrid")
    dense = dense_members(fused)[0]
    index = load_index(corpus, dense.name)
    titles = [t for (t,) in corpus.connect().execute(
        "SELECT title FROM papers WHERE title IS NOT NULL ORDER BY paper_id LIMIT ?",
        [args.queries]).fetchall()]
    vectors = np.asarray(load_model(dense.name).encode(titles, "query"), np.float32)
    answers: dict[bool, list] = {}
    ms: dict[str, list[float]] = {}
    for n in range(args.passes + 1):
        for new in (False, True):
            use(new)
            for name, one in (
                    ("rank_search fused", lambda i: rank_search(
                        corpus, titles[i], fused, 11, vectors={dense.name: vectors[i:i + 1]})),
                    ("nearest dense", lambda i: nearest(corpus, vectors[i:i + 1], dense.name, 11,
                                                        index=index))):
                start = time.process_time()
                found = [one(i) for i in range(len(titles))]
                spent = (time.process_time() - start) * 1000 / len(titles)
                if n:  # the first pass warms up
                    ms.setdefault(f"{name} ({'B' if new else 'A'})", []).append(spent)
                if name.startswith("rank_search"):
                    answers[new] = [[r.as_dict() for r in results] for results in found]
    use(True)
    out = {name: round(float(np.median(v)), 3) for name, v in sorted(ms.items())}
    for which in ("A", "B"):
        out[f"ratio fused / dense ({which})"] = round(
            out[f"rank_search fused ({which})"] / out[f"nearest dense ({which})"], 3)
    out["same answers"] = answers[False] == answers[True]
    out["load average"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
