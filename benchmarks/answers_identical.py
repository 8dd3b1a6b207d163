"""Are openmsd's answers the same as at another commit? Every answer a user can get from a
corpus with relations (TALN), byte for byte: ``related`` for each dev query paper with
``hybrid``, ``hybrid-graph`` and the dense model; 100 free-text searches; the SDSM dev
evaluation of ``hybrid`` (text-only) and ``hybrid-graph`` (hidden links); the HTTP API's
related, search, library and recommend answers; and, with ``--demo``, ``openmsd demo``.

    python benchmarks/answers_identical.py CORPUS --save answers/     # at the old commit
    python benchmarks/answers_identical.py CORPUS --against answers/ --demo --record
        # at the new one; --record writes benchmarks/results/answers_identical.json

The corpus is copied to a temporary folder first, so that no cache written by one commit's
code is read by the other's. Durations in the demo's output (``in 85 s``) are masked.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
from record import write_record
from typer.testing import CliRunner

DURATION = re.compile(r"\b\d+(?:[.,]\d+)? ?(?:s|ms|seconds|min)\b")
PACKAGE = Path(str(importlib.util.find_spec("openmsd").origin)).parent  # type: ignore[union-attr]
DEMO_PARAGRAPH = PACKAGE / "data" / "demo-paragraph.md"


def copy_corpus(source: Path, into: Path) -> Path:
    """A copy of ``source`` under ``into`` without the caches a run leaves (dot folders)."""
    target = into / "corpus"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".related", ".builds",
                                                                   ".cache"))
    return target


def queries(corpus: Path) -> tuple[list[str], list[str]]:
    """The dev query papers, and 100 titles spread over the corpus (every n-th by id)."""
    con = duckdb.connect()
    dev = [r[0] for r in con.execute(
        f"SELECT paper_id FROM '{corpus}/relations/splits.parquet' WHERE split = 'dev' "
        "ORDER BY paper_id").fetchall()]
    titles = [r[0] for r in con.execute(
        f"SELECT title FROM '{corpus}/papers.parquet' WHERE title IS NOT NULL "
        "AND length(title) > 10 ORDER BY paper_id").fetchall()]
    step = max(1, len(titles) // 100)
    return dev, titles[::step][:100]


def cli_answers(corpus: Path, dense: str) -> Iterator[dict[str, Any]]:
    """The command line's answers, in process (``openmsd ...``)."""
    from openmsd.cli import app

    runner = CliRunner()
    dev, titles = queries(corpus)

    def run(kind: str, args: list[Any]) -> dict[str, Any]:
        args = [str(a) for a in args]
        result = runner.invoke(app, args)
        output = result.stdout if result.exit_code == 0 else result.stdout + result.stderr
        shown = [a.replace(str(corpus), "CORPUS").replace(str(DEMO_PARAGRAPH), DEMO_PARAGRAPH.name)
                 for a in args]
        return {"kind": kind, "args": shown,
                "exit_code": result.exit_code, "output": output.replace(str(corpus), "CORPUS")}

    for model in ("hybrid", "hybrid-graph", dense):
        for paper in dev:
            yield run(f"related {model}", ["related", corpus, paper, "--model", model, "-k",
                                           "20", "--json"])
    for model in ("hybrid", dense):
        for title in titles:
            yield run(f"search {model}", ["search", corpus, title, "--model", model,
                                          "--json"])
    yield run("search table", ["search", corpus, titles[0]])
    yield run("related table", ["related", corpus, dev[0]])
    yield run("recommend", ["recommend", corpus, "--manuscript", DEMO_PARAGRAPH, "--json"])
    yield run("sdsm hybrid", ["eval", "sdsm", corpus, "--split", "dev", "--model", "hybrid",
                              "--json"])
    yield run("sdsm hybrid-graph", ["eval", "sdsm", corpus, "--split", "dev", "--protocol",
                                    "hidden-links", "--model", "hybrid-graph", "--json"])


def api_answers(corpus: Path, dense: str) -> Iterator[dict[str, Any]]:
    """The HTTP API's answers (FastAPI's test client, the app ``openmsd serve`` runs)."""
    from fastapi.testclient import TestClient

    from openmsd.server import create_app

    dev, titles = queries(corpus)
    with TestClient(create_app(corpus, [dense], watch_s=None)) as client:
        def get(kind: str, url: str, **params: Any) -> dict[str, Any]:
            response = client.get(url, params=params)
            return {"kind": kind, "args": [url, params], "exit_code": response.status_code,
                    "output": response.text.replace(str(corpus), "CORPUS")}

        def post(kind: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
            response = client.post(url, json=body)
            return {"kind": kind, "args": [url, body], "exit_code": response.status_code,
                    "output": response.text.replace(str(corpus), "CORPUS")}

        for paper in dev[:20]:
            yield get("api related", f"/api/papers/{paper}/related", k=20)
        for title in titles[:20]:
            yield get("api search", "/api/search", q=title)
        yield post("api library", "/api/related", {"positive": dev[:3], "k": 10})
        yield post("api recommend", "/api/recommend",
                   {"text": DEMO_PARAGRAPH.read_text(encoding="utf-8"), "k": 5})


def demo_answer() -> Iterator[dict[str, Any]]:
    """``openmsd demo``'s output, durations masked."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, COLUMNS="100", HOME=home)
        done = subprocess.run([sys.executable, "-m", "openmsd", "demo"], capture_output=True,
                              text=True, env=env, cwd=home, check=False)
    yield {"kind": "demo", "args": [], "exit_code": done.returncode,
           "output": DURATION.sub("<t>", done.stdout)}


def digest(answers: list[dict[str, Any]]) -> dict[str, str]:
    """sha256 of the answers of each kind, in order."""
    by_kind: dict[str, Any] = {}
    for answer in answers:
        by_kind.setdefault(answer["kind"], hashlib.sha256()).update(
            json.dumps(answer, sort_keys=True, ensure_ascii=False).encode())
    return {kind: h.hexdigest() for kind, h in by_kind.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--dense", default="e5-small-multilingual")
    parser.add_argument("--save", type=Path, help="write the answers here")
    parser.add_argument("--against", type=Path, help="compare with the answers saved here")
    parser.add_argument("--demo", action="store_true", help="also run 'openmsd demo'")
    parser.add_argument("--no-api", action="store_true")
    parser.add_argument("--record", action="store_true",
                        help="with --against: write benchmarks/results/answers_identical.json")
    args = parser.parse_args()
    start, load = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = copy_corpus(args.corpus, Path(tmp))
        answers = list(cli_answers(corpus, args.dense))
        if not args.no_api:
            answers += list(api_answers(corpus, args.dense))
    if args.demo:
        answers += list(demo_answer())
    failed = [a for a in answers if a["exit_code"] not in (0, 200, 2)]
    for answer in failed:
        print(f"failed: {answer['kind']} {answer['args']} -> {answer['exit_code']}: "
              f"{answer['output'][:300]}")
    numbers = {"answers": len(answers), "failed": len(failed),
               "seconds": round(time.perf_counter() - start, 1), "digests": digest(answers)}
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / "answers.jsonl").write_text(
            "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8")
        numbers["commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                           text=True, check=False).stdout.strip()
        (args.save / "digests.json").write_text(json.dumps(numbers, indent=1))
    if args.against:
        before = [json.loads(line) for line in
                  (args.against / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
        kinds = {a["kind"] for a in answers}
        before = [b for b in before if b["kind"] in kinds]
        differ = [(b, a) for b, a in zip(before, answers, strict=False) if b != a]
        for b, a in differ[:20]:
            print(f"DIFFERS: {b['kind']} {b['args']}\n  before: {b['output'][:400]!r}\n"
                  f"  now:    {a['output'][:400]!r}")
        same = len(before) == len(answers) and not differ
        numbers["identical"] = same
        numbers["differing"] = len(differ) + abs(len(before) - len(answers))
        print(f"{len(answers)} answers; {numbers['differing']} differ from {args.against}")
        if args.record:
            saved = json.loads((args.against / "digests.json").read_text())
            numbers["against_commit"] = saved.get("commit")
            verdict = "all byte-identical" if same else f"{numbers['differing']} differ"
            numbers["headline"] = f"{len(answers)} answers, {verdict}"
            write_record("answers_identical", numbers, load_before=load,
                         data={"corpus": str(args.corpus), "answers": len(answers)})
    print(json.dumps({k: v for k, v in numbers.items() if k != "digests"}))
    sys.exit(1 if failed or numbers.get("identical") is False else 0)


if __name__ == "__main__":
    main()
