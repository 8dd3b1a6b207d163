"""CPU of the server's search answer (``openmsd.server.api.search_answer``, what ``GET
/api/search`` runs once its parameters are parsed) in process, fused (the default ``hybrid``)
against dense only (``model=muse-v3``), over titles of the corpus; query vectors come from the
server's batching encoder thread as under load (its CPU is counted: ``time.process_time``).
Passes alternate fused and dense; the median per request of each, and with ``--cprofile`` the
functions where the fused answer's extra CPU goes (cProfile of the event loop's thread)::

    OMP_NUM_THREADS=1 PYTHONPATH=. nice -n 19 python docs/server/session12/profile_server.py \\
        /tmp/server-load/n100000/corpus [--cprofile 25]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from openmsd.corpus import Corpus
from openmsd.server.api import Filters, search_answer
from openmsd.server.resources import Resources


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--cprofile", type=int, default=0,
                        help="Print this many functions by own time, fused and dense.")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    resources = Resources(args.corpus, ["muse-v3"])
    resources.encoder("muse-v3")
    resources.warm()
    rows = Corpus(args.corpus).connect().execute(
        "SELECT title FROM papers WHERE title IS NOT NULL ORDER BY paper_id LIMIT ?",
        [args.queries]).fetchall()
    titles = [r[0] for r in rows]
    ways = {"fused (hybrid)": Filters(k=10), "dense (muse-v3)": Filters(k=10, model="muse-v3")}
    loop = asyncio.new_event_loop()

    def answer(filters: Filters) -> None:
        for title in titles:
            loop.run_until_complete(search_answer(resources, title, filters))

    for filters in ways.values():  # warm-up
        answer(filters)
    ms: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.passes):
        for name, filters in ways.items():
            start = time.process_time()
            answer(filters)
            ms[name].append((time.process_time() - start) * 1000 / len(titles))
    out: dict[str, object] = {name: round(float(np.median(v)), 3) for name, v in ms.items()}
    out["ratio fused / dense"] = round(out["fused (hybrid)"] / out["dense (muse-v3)"], 3)
    out["load average"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))
    if args.cprofile:
        for name, filters in ways.items():
            profile = cProfile.Profile()
            profile.enable()
            answer(filters)
            profile.disable()
            print(f"== {name}: own time of {len(titles)} answers")
            pstats.Stats(profile).sort_stats("tottime").print_stats(args.cprofile)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(out, handle, indent=1)
    resources.close()


if __name__ == "__main__":
    main()
