"""How long ``openmsd search``, ``related`` and ``recommend`` take to answer on the demo corpus,
each from a cold process with a warm disk, against ``openmsd serve``'s answer to the same
question in the same run.

A command is run once to warm the disk cache (its answer not counted), then ``--repeats`` times
in a new process each, as a user runs it; each run's wall time and CPU time (user + system of
the child) are kept, and the median is the figure. The peer is the same question asked of a
server over the same corpus (``openmsd serve``, started once, loopback HTTP): its first answer
(what the server loads on first use) and the median of the next ``--repeats``. On a shared
machine wall time counts the other jobs; CPU time does not.

The model cache (``~/.cache/openmsd``) must be built (``openmsd demo`` once); the demo corpus is
built into a temporary directory unless ``--corpus`` names one.

    python benchmarks/cli_answer_time.py [--corpus demo-corpus] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from demo_corpus import demo_corpus
from record import write_record

ROOT = Path(__file__).resolve().parents[1]
PAPER = "10.1590/2236-8906-76-2021"
QUERY = "florestas secundárias"
MANUSCRIPT = ROOT / "openmsd" / "data" / "demo-paragraph.md"


def commands(corpus: Path) -> dict[str, list[str]]:
    """Each command as a user types it."""
    return {"search": ["search", str(corpus), QUERY],
            "related": ["related", str(corpus), PAPER],
            "recommend": ["recommend", str(corpus), "--manuscript", str(MANUSCRIPT)]}


def timed(args: list[str]) -> dict[str, float]:
    """Wall and CPU seconds (user + system) and peak memory of ``openmsd ARGS`` in a new
    process, its output to a pipe."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "openmsd.cli", *args], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": round(wall, 3),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
                           3),
            "load_1min": round(os.getloadavg()[0], 2)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ask(url: str, body: dict | None = None) -> float:
    """Seconds for one answer of the server (the whole body read)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={
        "Content-Type": "application/json"} if data else {})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as response:
        response.read()
    return time.perf_counter() - start


def served(corpus: Path, repeats: int) -> dict[str, dict[str, float]]:
    """The server's first and median answer time for each question."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "openmsd.cli", "serve", str(corpus),
                               "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while True:
            try:
                ask(f"{base}/healthz")
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise RuntimeError("openmsd serve did not start") from None
                time.sleep(0.2)
        questions = {
            "search": (f"{base}/api/search?q={urllib.parse.quote(QUERY)}", None),
            "related": (f"{base}/api/papers/{urllib.parse.quote(PAPER, safe='')}/related",
                        None),
            "recommend": (f"{base}/api/recommend",
                          {"text": MANUSCRIPT.read_text(encoding="utf-8"), "k": 10}),
        }
        out = {}
        for name, (url, body) in questions.items():
            first = ask(url, body)
            times = [ask(url, body) for _ in range(repeats)]
            out[name] = {"first_s": round(first, 3),
                         "median_s": round(statistics.median(times), 4)}
        return out
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=None,
                        help="The demo corpus (default: built into a temporary directory).")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = demo_corpus(args.corpus, Path(tmp))
        start_up = [timed(["--help"]) for _ in range(args.repeats)]
        cold = {}
        for name, command in commands(corpus).items():
            timed(command)  # the disk cache warmed, the answer not counted
            runs = [timed(command) for _ in range(args.repeats)]
            cold[name] = {"median_wall_s": statistics.median(r["wall_s"] for r in runs),
                          "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
                          "runs": runs}
            print(f"{name}: {cold[name]['median_wall_s']:.2f} s wall, "
                  f"{cold[name]['median_cpu_s']:.2f} s CPU (median of {args.repeats})",
                  flush=True)
        server = served(corpus, args.repeats)
        print(f"serve: {server}")
    slowest = max(cold, key=lambda name: cold[name]["median_wall_s"])
    write_record(
        "cli_answer_time",
        {"headline": f"{cold[slowest]['median_wall_s']:.1f} s",
         "headline_means": f"the slowest of search, related and recommend ({slowest}) on the "
                           "demo corpus, a new process each, disk cache warm (median wall)",
         "commands": {name: {k: v for k, v in got.items() if k != "runs"}
                      for name, got in cold.items()},
         "runs": {name: got["runs"] for name, got in cold.items()},
         "start_up": {"median_wall_s": statistics.median(r["wall_s"] for r in start_up),
                      "median_cpu_s": statistics.median(r["cpu_s"] for r in start_up),
                      "means": "python -m openmsd.cli --help: interpreter and CLI import"},
         "peer": "openmsd serve over the same corpus, the same questions over loopback HTTP",
         "serve": server,
         "x_serve": {name: round(cold[name]["median_wall_s"] / server[name]["median_s"], 1)
                     for name in cold}},
        data={"corpus": "openmsd demo's corpus (the shipped sample: SciELO, S2ORC, arXiv)",
              "model": "e5-small-multilingual, ONNX Runtime int8 per token (onnx-sq8)",
              "questions": {"search": QUERY, "related": PAPER,
                            "recommend": str(MANUSCRIPT.relative_to(ROOT))},
              "repeats": args.repeats},
        load_before=load_before,
        notes="Wall time on a shared machine counts the other jobs (see load_1min of each "
              "run); cpu_s is the command's own cost.")


if __name__ == "__main__":
    main()
