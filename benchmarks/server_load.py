"""Load test of ``openmsd serve`` on loopback: C concurrent clients for T seconds against a
corpus of N papers, each request one of the endpoints named by ``--endpoints`` in turn:

* ``related``: ``GET /api/papers/{id}/related?k=10`` (with the explanations from the citation
  graph);
* ``search``: ``GET /api/search?q=TITLE&k=10``, a paper's title as free text, encoded by the
  served model (concurrent queries micro-batched through one encoder thread);
* ``recommend``: ``POST /api/recommend`` with a three-sentence manuscript (two citation
  markers), ``k=5``: every sentence encoded, searched and explained.

With ``--rebuilds R`` the index is rebuilt from the vectors R times during the measurement
(``openmsd index build --full`` in another process); the server swaps each rebuilt index in
while answering, and any error counts. Latencies are reported per endpoint.

The corpus is generated as in ``ingest_throughput.py`` (OpenAlex works with real S2ORC abstract
text and ~30 references each, so ~3M citations at 100,000 papers) and ingested with
``openmsd ingest``. Its vectors are seeded clustered 512-d unit vectors (``search_index.py``'s
generator) stored as the ``muse-v3`` vectors of the papers' current texts, then indexed with
``openmsd index build --kind K`` (``--kind hnsw`` by default, as a served corpus of this size
should be; ``--kind flat`` for exact search, rebuilt when the cached corpus has another kind):
embedding 100,000 papers with a real encoder takes about an hour on these 2 cores, and the load
test measures serving, not embedding.

The server is ``openmsd serve`` in its own process; the clients are asyncio tasks (httpx) in
this one, on the same cores. Each request's latency is timed from send to the full response.
Prints and optionally writes requests/s, p50/p95/p99 latency, errors, and the CPU time per
request of the server process and of the clients (steadier than latency on a shared machine):

    python benchmarks/server_load.py --papers 100000 --clients 20 --seconds 60 \
        --endpoints related,search,recommend --rebuilds 2 \
        --cache /tmp/server-load --json /tmp/server-load.json
    python benchmarks/server_load.py --papers 5000 --clients 20 --seconds 10 \
        --endpoints related,search,recommend --rebuilds 1     # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable
from pathlib import Path

import httpx
import numpy as np
import psutil
import pyarrow as pa

from openmsd.corpus.ingest_run import ingest
from openmsd.corpus.store import Corpus
from openmsd.index.vector_index import build_index, index_kind, load_index
from openmsd.io import ParquetSink, arrow_reader
from openmsd.models.formatting import paper_input
from openmsd.models.vectors import text_hash, vector_schema, vectors_dir
from openmsd.server.resources import BATCH_ENV

sys.path.insert(0, str(Path(__file__).parent))
from ingest_throughput import generate as generate_works
from search_index import generate as generate_vectors

MODEL = "muse-v3"
DIM = 512
DIMS = {"muse-v3": 512, "e5-small-multilingual": 384}


def build_corpus(root: Path, papers: int, kind: str) -> Path:
    """The corpus with vectors and a ``kind`` index under ``root`` (reused when already
    complete)."""
    corpus_dir = root / "corpus"
    if (corpus_dir / "index" / MODEL / "papers.parquet").exists():
        if index_kind(load_index(Corpus(corpus_dir), MODEL).index) != kind:
            started = time.time()
            build_index(Corpus(corpus_dir), MODEL, kind)
            print(f"built the {kind} index in {time.time() - started:.0f} s", flush=True)
        return corpus_dir
    root.mkdir(parents=True, exist_ok=True)
    works = root / "works.jsonl.gz"
    started = time.time()
    generate_works(works, papers)
    print(f"generated {papers:,} works in {time.time() - started:.0f} s", flush=True)
    started = time.time()
    ingest([works], corpus_dir, None, False)
    print(f"ingested in {time.time() - started:.0f} s", flush=True)
    corpus = Corpus(corpus_dir)
    con = corpus.connect()
    ids, hashes = [], []
    for batch in arrow_reader(con, "SELECT paper_id, title, abstract FROM papers"):
        for paper_id, title, abstract in zip(*(batch[c].to_pylist() for c in
                                               ("paper_id", "title", "abstract")), strict=True):
            text = paper_input(title, abstract)
            if text:
                ids.append(paper_id)
                hashes.append(text_hash(text))
    vectors = generate_vectors(len(ids), DIM, clusters=2000, groups=50, noise=0.9, seed=0)
    schema = vector_schema(DIM)
    table = pa.table({"paper_id": ids, "text_hash": hashes,
                      "vector": pa.FixedSizeListArray.from_arrays(vectors.reshape(-1), DIM)},
                     schema=schema)
    directory = vectors_dir(corpus, MODEL)
    directory.mkdir(parents=True, exist_ok=True)
    with ParquetSink(directory / "part-00000.parquet", schema) as sink:
        sink.write(table)
    started = time.time()
    built, _ = build_index(corpus, MODEL, kind)
    print(f"indexed {built.index.ntotal:,} vectors ({kind}) in {time.time() - started:.0f} s",
          flush=True)
    return corpus_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RECOMMEND = ("Dependency parsing of morphologically rich languages remains hard [1]. "
             "Transition-based parsers with neural classifiers are fast and accurate [2]. "
             "We build on both lines of work for {title}.")


def request_for(endpoint: str, paper: tuple[str, str], http: httpx.AsyncClient,
                ranker_name: str | None = None) -> Awaitable[httpx.Response]:
    """One request; related and search ask for ``ranker_name`` (None: the server's default)."""
    paper_id, title = paper
    ranker = {"model": ranker_name} if ranker_name else {}
    if endpoint == "related":
        return http.get(f"/api/papers/{paper_id}/related", params={"k": 10, **ranker})
    if endpoint == "search":
        return http.get("/api/search", params={"q": title, "k": 10, **ranker})
    return http.post("/api/recommend", json={"text": RECOMMEND.format(title=title), "k": 5})


async def client_loop(http: httpx.AsyncClient, papers: list[tuple[str, str]],
                      endpoints: list[str], deadline: float, limit: int, seed: int,
                      latencies: dict[str, list[float]], errors: list[str],
                      ranker: str | None) -> None:
    rng = random.Random(seed)
    turn = seed
    while time.perf_counter() < deadline and sum(map(len, latencies.values())) < limit:
        endpoint = endpoints[turn % len(endpoints)]
        turn += 1
        paper = rng.choice(papers)
        start = time.perf_counter()
        try:
            response = await request_for(endpoint, paper, http, ranker)
            if response.status_code == 200:
                latencies[endpoint].append(time.perf_counter() - start)
            else:
                errors.append(f"{response.status_code} {endpoint} {paper[0]}")
        except httpx.HTTPError as error:
            errors.append(f"{type(error).__name__} {endpoint} {paper[0]}")


async def load(base: str, papers: list[tuple[str, str]], endpoints: list[str], clients: int,
               seconds: float, limit: int, ranker: str | None = None
               ) -> tuple[dict[str, list[float]], list[str], float]:
    latencies: dict[str, list[float]] = {e: [] for e in endpoints}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(client_loop(http, papers, endpoints, deadline, limit, i,
                                           latencies, errors, ranker)
                               for i in range(clients)))
        return latencies, errors, time.perf_counter() - started


def rebuild_loop(corpus_dir: Path, kind: str, times: int, seconds: float) -> list[float]:
    """Rebuild the index ``times`` times, evenly over ``seconds``; each rebuild's seconds."""
    took = []
    for i in range(times):
        time.sleep(seconds / (times + 1) if i == 0 else 0)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "openmsd.cli", "index", "build", str(corpus_dir),
                        "--model", MODEL, "--kind", kind, "--full"], check=True,
                       capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        took.append(time.perf_counter() - started)
    return took


def _percentiles(seconds: list[float]) -> dict[str, float | None]:
    ms = np.array(seconds) * 1000
    return {p: round(float(np.percentile(ms, q)), 1) if len(ms) else None
            for p, q in (("p50", 50), ("p95", 95), ("p99", 99))}


def main() -> None:
    global MODEL, DIM  # the model chosen on the command line, used by the functions above
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--kind", choices=["hnsw", "flat"], default="hnsw",
                        help="The index: HNSW (efSearch 128) or exact.")
    parser.add_argument("--endpoints", default="related",
                        help="Comma-separated: related, search, recommend (taken in turn).")
    parser.add_argument("--rebuilds", type=int, default=0,
                        help="Full index rebuilds during the measurement.")
    parser.add_argument("--model", choices=sorted(DIMS), default=MODEL,
                        help="The served model (its vectors are generated, its queries "
                             "encoded for real).")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch",
                        help="How the server encodes queries (openmsd serve --backend).")
    parser.add_argument("--peer", action="store_true",
                        help="Run again with no micro-batching of queries (the peer: one "
                             "encoder call at a time) and print the p95 ratios.")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ranker", default=None,
                        help="what related and search rank with: the served model (dense only, "
                             "its FAISS index), or a ranker such as hybrid-graph (text, words "
                             "and citations fused); default: the server's default. Several, "
                             "comma-separated (default,muse-v3: the server's default rankers, "
                             "then dense only): each measured in turn on the same server, with "
                             "the p95 and CPU ratios to the last")
    parser.add_argument("--start-timeout", type=float, default=1800,
                        help="Seconds to wait for the server to load (its rankers read the "
                             "whole corpus at start).")
    args = parser.parse_args()
    if args.peer and args.ranker and "," in args.ranker:
        parser.error("--peer compares one ranker with and without batching: name one --ranker")
    endpoints = args.endpoints.split(",")
    if not set(endpoints) <= {"related", "search", "recommend"}:
        parser.error(f"--endpoints {args.endpoints!r}: expected related, search, recommend")

    MODEL, DIM = args.model, DIMS[args.model]
    cache = args.cache / (f"n{args.papers}" if MODEL == "muse-v3" else f"n{args.papers}-{MODEL}")
    corpus_dir = build_corpus(cache, args.papers, args.kind)
    papers = [tuple(row) for row in Corpus(corpus_dir).connect().execute(
        f"SELECT i.paper_id, coalesce(p.title, 'parsing') FROM read_parquet("
        f"'{corpus_dir}/index/{MODEL}/papers.parquet') i JOIN papers p USING (paper_id)"
    ).fetchall()]
    result = measure(args, corpus_dir, papers, endpoints, {})
    if args.peer:
        peer = measure(args, corpus_dir, papers, endpoints, {BATCH_ENV: "1"})
        result["peer_no_batching"] = peer
        result["p95_ratio_to_peer"] = {
            e: round(result["by_endpoint"][e]["latency_ms"]["p95"]
                     / peer["by_endpoint"][e]["latency_ms"]["p95"], 3)
            for e in endpoints if peer["by_endpoint"][e]["latency_ms"]["p95"]
            and result["by_endpoint"][e]["latency_ms"]["p95"]}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def measure(args: argparse.Namespace, corpus_dir: Path, papers: list[tuple[str, str]],
            endpoints: list[str], env: dict[str, str]) -> dict:
    """One server (with ``env``), started, then for each ``--ranker`` warmed up and measured;
    the figures as a dict (with several rankers: ``by_ranker`` and the ratios to the last)."""
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "openmsd.cli", "serve", str(corpus_dir),
                               "--model", MODEL, "--port", str(port),
                               "--backend", args.backend],
                              env={**os.environ, "OMP_NUM_THREADS": "1", **env})
    base = f"http://127.0.0.1:{port}"
    rankers: list[str | None] = ([None if r == "default" else r for r in args.ranker.split(",")]
                                 if args.ranker else [None])
    phases = {}
    try:
        while time.perf_counter() - started < args.start_timeout:
            if server.poll() is not None:
                raise SystemExit(f"the server exited with status {server.returncode}")
            try:
                if httpx.get(base + "/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"the server did not answer within {args.start_timeout:.0f} s")
        start_s = round(time.perf_counter() - started, 1)
        print(f"server answering after {start_s} s", flush=True)
        for ranker in rankers:
            phases[ranker or "default"] = {**phase(args, base, server, corpus_dir, papers,
                                                   endpoints, ranker), "server_start_s": start_s,
                                           "server_env": env}
            print(ranker or "default", json.dumps(phases[ranker or "default"]), flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # requests still queued in its thread pool
            server.kill()
            server.wait()
    if len(phases) == 1:
        return next(iter(phases.values()))
    last = list(phases)[-1]
    ratio = {name: {e: _ratio(p["by_endpoint"][e]["latency_ms"]["p95"],
                              phases[last]["by_endpoint"][e]["latency_ms"]["p95"])
                    for e in endpoints} for name, p in phases.items() if name != last}
    cpu = {name: _ratio(p["server_cpu_ms_per_request"], phases[last]["server_cpu_ms_per_request"])
           for name, p in phases.items() if name != last}
    return {"by_ranker": phases, "peer": last, "p95_ratio_to_peer": ratio,
            "server_cpu_ratio_to_peer": cpu}


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def phase(args: argparse.Namespace, base: str, server: subprocess.Popen, corpus_dir: Path,
          papers: list[tuple[str, str]], endpoints: list[str], ranker: str | None) -> dict:
    """A warm-up, then the load for ``args.seconds`` (with the rebuilds asked for)."""
    rebuilds: list[float] = []
    asyncio.run(load(base, papers, endpoints, args.clients, args.warmup, args.max_requests,
                     ranker))
    served, own = psutil.Process(server.pid), psutil.Process()
    server_cpu, client_cpu = sum(served.cpu_times()[:2]), sum(own.cpu_times()[:2])
    load_before = os.getloadavg()[0]
    encoded_before = httpx.get(base + "/healthz").json().get("encoded", {})
    rebuilder = threading.Thread(target=lambda: rebuilds.extend(rebuild_loop(
        corpus_dir, args.kind, args.rebuilds, args.seconds)), daemon=True)
    rebuilder.start()
    latencies, errors, elapsed = asyncio.run(
        load(base, papers, endpoints, args.clients, args.seconds, args.max_requests, ranker))
    rebuilder.join()
    server_cpu = sum(served.cpu_times()[:2]) - server_cpu
    client_cpu = sum(own.cpu_times()[:2]) - client_cpu
    health = httpx.get(base + "/healthz").json()
    reloads = health.get("reloads")
    batches = {m: {"texts": e["texts"] - encoded_before.get(m, {}).get("texts", 0),
                   "batches": e["batches"] - encoded_before.get(m, {}).get("batches", 0)}
               for m, e in health.get("encoded", {}).items()}
    done = sum(map(len, latencies.values()))
    requests = max(done + len(errors), 1)
    return {
        "papers": len(papers), "index": args.kind, "clients": args.clients,
        "model": MODEL, "backend": args.backend, "ranker": ranker or "server default",
        "endpoints": endpoints, "seconds": round(elapsed, 1),
        "requests": done + len(errors), "errors": len(errors),
        "requests_per_s": round((done + len(errors)) / elapsed, 1),
        "latency_ms": _percentiles([s for e in endpoints for s in latencies[e]]),
        "by_endpoint": {e: {"requests": len(latencies[e]),
                            "latency_ms": _percentiles(latencies[e])} for e in endpoints},
        "rebuilds": len(rebuilds), "rebuild_s": [round(s, 1) for s in rebuilds],
        "server_reloads": reloads,
        "encoder_texts_per_batch": {m: round(b["texts"] / b["batches"], 1)
                                    for m, b in batches.items() if b["batches"]},
        "server_cpu_ms_per_request": round(server_cpu * 1000 / requests, 2),
        "client_cpu_ms_per_request": round(client_cpu * 1000 / requests, 2),
        "load_average_1m": [load_before, os.getloadavg()[0]], "cores": os.cpu_count(),
        "error_examples": errors[:5],
    }


if __name__ == "__main__":
    main()
