"""Fetching a corpus from OpenAlex, measured against a local server that answers as the API.

The server (``tests/fetch/apiserver.py``) serves the 1,483 TALN papers as OpenAlex works
(real titles, abstracts, authors, years; a fixed citation pattern) with cursor paging.

1. Works per second, ``openmsd.fetch.crawler`` (pyalex on the polite session) against the peer:
   a plain ``requests`` loop over the same cursor pages (no pyalex, no retries, no progress
   file), in the same run. Measured for a paged filter query without faults, the same with a
   429 (``Retry-After: 1``) and a 503 injected, and a crawl from seeds (``--citing --depth
   2``: batched ``openalex_id`` / ``cites`` filters).
2. The researcher's loop from a BibTeX file of 20 papers: ``openmsd fetch openalex --seeds
   my.bib --citing --depth 2``, ``openmsd ingest``, ``openmsd embed``, ``openmsd index build``,
   each run as the user runs it (a new process), wall time per stage (``--no-loop`` skips it).
3. What the crawl costs under OpenAlex's 2026 pricing (the server bills as documented: list
   calls $0.0001, singletons free): calls and USD of this client, its ``--dry-run`` estimate
   of the same plan, and, with ``--peer-rev REV``, the client at an earlier commit (exported
   with ``git archive``, run in a subprocess against the same server, which then accepts its
   ``per-page=200`` and its keyless calls).

    python benchmarks/fetch_throughput.py --taln ../shared/data/taln/papers.jsonl \
        --json /tmp/fetch-throughput.json
    python benchmarks/fetch_throughput.py --taln ../shared/data/taln/papers.jsonl --no-loop \
        --repeats 1 --peer-rev 5e2fae1 --record fetch_cost
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from record import write_record  # noqa: E402

from openmsd.fetch import (  # noqa: E402
    FetchPlan,
    OpenAlex,
    Polite,
    crawl,
    estimate,
    seeds_from_ids,
)
from tests.fetch.apiserver import OPENALEX_KEY, serve, taln_world  # noqa: E402

PEER_CRAWL = """
import json, sys, time
from pathlib import Path
from openmsd.fetch import FetchPlan, OpenAlex, Polite, crawl, seeds_from_ids
url, out, seeds = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
began = time.perf_counter()
report = crawl(OpenAlex(url, Polite(backoff=0.1)),
               FetchPlan(seeds=seeds_from_ids(seeds, "bench"), citing=True, depth=2), out)
print(json.dumps({"works": report.works, "requests": report.requests,
                  "seconds": time.perf_counter() - began}))
"""


def peer(url: str, per_page: int, language: str) -> tuple[int, float]:
    """The same cursor pages with plain requests: works, seconds."""
    began, cursor, works = time.perf_counter(), "*", 0
    with requests.Session() as session:
        while cursor:
            answer = session.get(f"{url}/works", params={
                "filter": f"language:{language}", "per-page": per_page, "cursor": cursor},
                timeout=30).json()
            works += len(answer["results"])
            cursor = answer["meta"]["next_cursor"]
    return works, time.perf_counter() - began


def ours(url: str, plan: FetchPlan, out: Path) -> tuple[int, float, int]:
    began = time.perf_counter()
    report = crawl(OpenAlex(url, Polite(backoff=0.1, api_key=OPENALEX_KEY)), plan, out)
    return report.works, time.perf_counter() - began, report.requests


def crawl_cost(url: str, world, seeds: list[str], out: Path) -> dict:
    """This client's crawl from ``seeds`` (``--citing --depth 2``): works, calls, USD, and
    its dry-run estimate made first (free calls only)."""
    plan = FetchPlan(seeds=seeds_from_ids(seeds, "bench"), citing=True, depth=2)
    guess = estimate(OpenAlex(url, Polite(backoff=0.1, api_key=OPENALEX_KEY)), plan)
    world.spent.clear()
    began = time.perf_counter()
    report = crawl(OpenAlex(url, Polite(backoff=0.1, api_key=OPENALEX_KEY)), plan, out)
    return {"works": report.works, "requests": report.requests,
            "list_calls": report.billed_calls, "cost_usd": report.cost_usd,
            "seconds": round(time.perf_counter() - began, 2),
            "estimate": {"list_calls": guess.calls["list"],
                         "singleton_calls": guess.calls["singleton"],
                         "cost_usd": guess.cost_usd, "works": guess.works}}


def peer_crawl_cost(url: str, world, seeds: list[str], rev: str, out: Path) -> dict:
    """The client at commit ``rev`` on the same crawl (the server lets it page by 200 and
    call without a key; it bills the same prices)."""
    tree = out.parent / f"peer-{rev}"
    tree.mkdir(exist_ok=True)
    archive = subprocess.run(["git", "archive", rev, "openmsd"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    world.max_per_page, world.keyless_usd = 200, 1_000.0
    world.spent.clear()
    try:
        done = subprocess.run([sys.executable, "-c", PEER_CRAWL, url, str(out),
                               json.dumps(seeds)], env={**os.environ, "PYTHONPATH": str(tree)},
                              cwd=tree,
                              check=True, capture_output=True, text=True)
    finally:
        world.max_per_page, world.keyless_usd = 100, 0.01
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["cost_usd"] = round(world.spent.get("", 0.0), 6)
    result["list_calls"] = round(result["cost_usd"] / 0.0001)
    result["rev"] = rev
    return result


def stage(command: list[str]) -> float:
    began = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "openmsd.cli", *command], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taln", type=Path, required=True)
    parser.add_argument("--per-page", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="e5-small-multilingual")
    parser.add_argument("--backend", default="onnx", help="torch or onnx (int8)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-loop", action="store_true", help="skip the loop of stage 2")
    parser.add_argument("--peer-rev", help="a commit whose client is the cost peer")
    parser.add_argument("--record", help="write benchmarks/results/NAME.json")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    world = taln_world(args.taln)
    out: dict = {"works_in_server": len(world.works), "per_page": args.per_page}
    tmp = Path(tempfile.mkdtemp(prefix="fetch-bench-"))
    for server in serve(world):
        url = server.openalex
        rows = []
        for repeat in range(args.repeats):
            n_peer, s_peer = peer(url, args.per_page, "fr")
            plan = FetchPlan(filters={"language": "fr"}, per_page=args.per_page, depth=0)
            n, s, _ = ours(url, plan, tmp / f"plain{repeat}.jsonl")
            world.fault("cursor=", 429, headers={"Retry-After": "1"})
            world.fault("cursor=", 503)
            n_f, s_f, _ = ours(url, plan, tmp / f"faults{repeat}.jsonl")
            seeds = seeds_from_ids([f"W{1000 + i}" for i in range(0, 1400, 70)], "bench")
            n_c, s_c, r_c = ours(url, FetchPlan(seeds=seeds, citing=True, depth=2),
                                 tmp / f"crawl{repeat}.jsonl")
            rows.append({"peer": n_peer / s_peer, "ours": n / s, "ours_faults": n_f / s_f,
                         "crawl": n_c / s_c, "works": n, "crawl_works": n_c,
                         "crawl_requests": r_c})
        best = {key: max(r[key] for r in rows) for key in ("peer", "ours", "ours_faults",
                                                            "crawl")}
        out["works_per_s"] = {k: round(v, 1) for k, v in best.items()}
        out["ratio_to_peer"] = {k: round(v / best["peer"], 3) for k, v in best.items()}
        out["works"], out["crawl_works"] = rows[0]["works"], rows[0]["crawl_works"]
        out["crawl_requests"] = rows[0]["crawl_requests"]

        seeds = [f"W{1000 + i}" for i in range(0, 1400, 70)]
        out["cost"] = {"ours": crawl_cost(url, world, seeds, tmp / "cost.jsonl")}
        if args.peer_rev:
            peer_cost = peer_crawl_cost(url, world, seeds, args.peer_rev, tmp / "peer.jsonl")
            out["cost"]["peer"] = peer_cost
            ours_cost = out["cost"]["ours"]
            out["cost"]["ratio_to_peer"] = {
                "list_calls": round(ours_cost["list_calls"] / peer_cost["list_calls"], 3),
                "requests": round(ours_cost["requests"] / peer_cost["requests"], 3)}
        if args.no_loop:
            break

        # the loop from a 20-paper BibTeX library
        bib = tmp / "my.bib"
        bib.write_text("".join(f"@article{{s{i}, title = {{{world.works[f'W{n}']['title']}}},"
                               f" doi = {{10.5555/test.{n}}}}}\n"
                               for i, n in enumerate(range(1000, 1400, 20))), encoding="utf-8")
        works, corpus = tmp / "w.jsonl.gz", tmp / "mycorpus"
        loop = {
            "fetch": stage(["fetch", "openalex", "--seeds", str(bib), "--citing", "--depth",
                            "2", "--out", str(works), "--api-key", OPENALEX_KEY,
                            "--api-url", url]),
            "ingest": stage(["ingest", str(works), "--out", str(corpus)]),
            "embed": stage(["embed", str(corpus), "--model", args.model, "--backend",
                            args.backend]),
            "index": stage(["index", "build", str(corpus), "--model", args.model]),
        }
        report = json.loads((tmp / "w.jsonl.gz.fetch.json").read_text())["report"]
        out["loop"] = {"seeds": 20, "works": report["works"], "requests": report["requests"],
                       "model": args.model, "backend": args.backend,
                       "seconds": {k: round(v, 1) for k, v in loop.items()},
                       "total_s": round(sum(loop.values()), 1)}
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    if args.record:
        path = write_record(args.record, out, load_before=load_before,
                            data={"works_in_server": len(world.works), "source": str(args.taln),
                                  "crawl": "20 seeds, --citing --depth 2"},
                            notes="a loopback server billing as OpenAlex documents (2026); "
                                  "the machine is shared, so seconds are noisy, calls and "
                                  "USD are not")
        print(f"record: {path}")


if __name__ == "__main__":
    main()
