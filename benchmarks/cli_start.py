"""Start-up time of the ``openmsd`` command: ``--help``, ``--version`` and ``search --help``.

Each command runs N times as a user runs it (the ``openmsd`` script of this interpreter's
environment, in a child process, this tree first on ``PYTHONPATH``); the figure is the median
wall time, with the median CPU time (user + system of the child) beside it: on a shared machine
wall time counts the other jobs, CPU time much less. The peers, timed in the same rounds, are a
bare interpreter (``python -c pass``) and the command-line library alone
(``python -c 'import typer'``); the ratios are against them. Rounds interleave the commands, so
a change of load touches all of them alike. ``--before REV`` times the tree of a git revision
too (exported to a temporary directory), in the same rounds.

    python benchmarks/cli_start.py [--runs 11] [--before REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_record

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"--help": ["--help"], "--version": ["--version"],
            "search --help": ["search", "--help"]}


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, the child's CPU seconds (user + system) and the exit status of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, check=False,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.returncode


def export_tree(rev: str, into: Path) -> Path:
    """The files of git revision ``rev`` under ``into`` (``git archive``)."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def median_of(runs: list[tuple[float, float, int]]) -> dict[str, float | int]:
    return {"wall_s": round(statistics.median(r[0] for r in runs), 3),
            "cpu_s": round(statistics.median(r[1] for r in runs), 3),
            "exit_status": runs[0][2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=11, help="Runs of each command.")
    parser.add_argument("--before", help="Also time the tree of this git revision.")
    args = parser.parse_args()
    script = str(Path(sys.executable).parent / "openmsd")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if args.before:
            trees[f"before ({args.before})"] = export_tree(args.before, Path(tmp))
        jobs: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], dict(os.environ)),
            "python -c 'import typer'": ([sys.executable, "-c", "import typer"],
                                         dict(os.environ)),
        }
        for tree_name, tree in trees.items():
            env = {**os.environ, "PYTHONPATH": str(tree)}
            for name, argv in COMMANDS.items():
                label = f"openmsd {name}" + ("" if tree == ROOT else f", {tree_name}")
                jobs[label] = ([script, *argv], env)
        runs: dict[str, list[tuple[float, float, int]]] = {label: [] for label in jobs}
        loads = []
        for round_ in range(args.runs):
            for label, (command, env) in jobs.items():
                runs[label].append(timed(command, env))
            loads.append(round(os.getloadavg()[0], 2))
            print(f"round {round_ + 1}/{args.runs}: load {loads[-1]}", flush=True)
    medians = {label: median_of(r) for label, r in runs.items()}
    bare = medians["python -c pass"]
    typer_ = medians["python -c 'import typer'"]
    for label, got in medians.items():
        got["x_python"] = round(got["wall_s"] / bare["wall_s"], 1)
        got["x_typer"] = round(got["wall_s"] / typer_["wall_s"], 2)
        got["cpu_x_python"] = round(got["cpu_s"] / bare["cpu_s"], 1) if bare["cpu_s"] else None
        print(f"{label:45s} {got['wall_s']:7.3f} s wall {got['cpu_s']:7.3f} s cpu  "
              f"{got['x_python']:5.1f}x python  {got['x_typer']:5.2f}x import typer  "
              f"exit {got['exit_status']}")
    help_ = medians["openmsd --help"]
    write_record(
        "cli_start",
        {"headline": f"--help in {help_['wall_s']:.2f} s, {help_['x_python']:.1f}× a bare "
                     "Python start",
         "headline_means": "median wall time of `openmsd --help` (a child process), and its "
                           "ratio to `python -c pass` timed in the same rounds",
         "peers": ["python -c pass", "python -c 'import typer'"],
         "runs_each": args.runs, "load_per_round": loads, "medians": medians},
        data={"commands": [f"openmsd {name}" for name in COMMANDS],
              "trees": {name: str(tree) if tree == ROOT else name for name, tree in trees.items()}},
        load_before=load_before,
        notes="Wall times count the other jobs of a shared machine; cpu_s is the child's own "
              "cost.")


if __name__ == "__main__":
    main()
