"""In-process A/B of ``lists_key`` (what each related request with stored lists computes):
session 11's (A: the index link's real path walked and the description hashed every call)
against session 12's (B: the link resolved again only when replaced, each description hashed
once), interleaved, ``time.thread_time`` per call, the keys of both compared::

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/server/session12/ab_lists_key.py \\
        /tmp/server-load/n100000/corpus
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

import numpy as np

from openmsd.corpus import Corpus
from openmsd.index import index_dir
from openmsd.rank import tuned
from openmsd.search.build_cache import current_build
from openmsd.search.ranking import _vectors_stamp
from openmsd.search.related_lists import _CODE_HASH, lists_key


def session11_key(corpus: Corpus, ranker: str, dense: list[str]) -> str:
    """``lists_key`` as session 11 computed it."""
    models = [[name, _vectors_stamp(corpus, name),
               os.path.basename(os.path.realpath(index_dir(corpus, name)))] for name in dense]
    what = {"build": current_build(corpus), "ranker": ranker,
            "spec": tuned(corpus).get(ranker), "dense": models, "code": _CODE_HASH[0]}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:24]


def main() -> None:
    corpus = Corpus(sys.argv[1])
    ways = {"B session 12": lists_key, "A session 11": session11_key}  # B fills _CODE_HASH
    keys = {name: way(corpus, "hybrid-graph", ["muse-v3"]) for name, way in ways.items()}
    assert len(set(keys.values())) == 1, keys
    us: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(7):
        for name, way in ways.items():
            start = time.thread_time()
            for _ in range(2000):
                way(corpus, "hybrid-graph", ["muse-v3"])
            us[name].append((time.thread_time() - start) / 2000 * 1e6)
    out = {name: round(float(np.median(v)), 1) for name, v in sorted(us.items())}
    print(json.dumps({"key": keys["B session 12"], "microseconds_per_call": out,
                      "ratio B / A": round(out["B session 12"] / out["A session 11"], 3),
                      "load_average": os.getloadavg()[0]}, indent=1))


if __name__ == "__main__":
    main()
