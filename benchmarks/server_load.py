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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import numpy as np
import psutil

from openmsd.corpus import Corpus
from openmsd.index import build_index, index_kind, load_index
from openmsd.ingest import ingest
from openmsd.io import arrow_reader
from openmsd.models import paper_input
from openmsd.models.embed import CHUNK as EMBED_CHUNK
from openmsd.rank import HYBRID_GRAPH
from openmsd.search import is_current, lists_path
from openmsd.server import BATCH_ENV, THREADS_ENV
from openmsd.vectors import text_hash, vector_key, vectors_dir, write_part

sys.path.insert(0, str(Path(__file__).parent))
from ingest_spark import tree_cpu
from ingest_throughput import generate as generate_works
from search_index import generate as generate_vectors

MODEL = "muse-v3"
DIM = 512
DIMS = {"muse-v3": 512, "e5-small-multilingual": 384}


def build_corpus(root: Path, papers: int, kind: str, key: str) -> Path:
    """The corpus under ``root`` with vectors and a ``kind`` index stored under ``key`` (a
    model's :func:`vector_key` for the backend served), each part reused when already there."""
    corpus_dir = root / "corpus"
    if not (corpus_dir / "manifest.json").exists():
        root.mkdir(parents=True, exist_ok=True)
        works = root / "works.jsonl.gz"
        started = time.time()
        generate_works(works, papers)
        print(f"generated {papers:,} works in {time.time() - started:.0f} s", flush=True)
        started = time.time()
        ingest([works], corpus_dir, None, False)
        print(f"ingested in {time.time() - started:.0f} s", flush=True)
    corpus = Corpus(corpus_dir)
    if (corpus_dir / "index" / key / "papers.parquet").exists():
        if index_kind(load_index(corpus, key).index) != kind:
            started = time.time()
            build_index(corpus, key, kind)
            print(f"built the {kind} index in {time.time() - started:.0f} s", flush=True)
        return corpus_dir
    if not list(vectors_dir(corpus, key).glob("part-*.parquet")):
        store_vectors(corpus, key)
    started = time.time()
    built, _ = build_index(corpus, key, kind)
    print(f"indexed {built.index.ntotal:,} vectors ({kind}) in {time.time() - started:.0f} s",
          flush=True)
    return corpus_dir


def store_vectors(corpus: Corpus, key: str, dim: int | None = None) -> None:
    """Seeded clustered ``dim``-d (default ``DIM``) unit vectors stored as ``key``'s vectors of
    the papers' current texts (as ``openmsd embed`` would store them)."""
    dim = dim or DIM
    ids, hashes = [], []
    for batch in arrow_reader(corpus.connect(), "SELECT paper_id, title, abstract FROM papers"):
        for paper_id, title, abstract in zip(*(batch[c].to_pylist() for c in
                                               ("paper_id", "title", "abstract")), strict=True):
            text = paper_input(title, abstract)
            if text:
                ids.append(paper_id)
                hashes.append(text_hash(text))
    vectors = generate_vectors(len(ids), dim, clusters=2000, groups=50, noise=0.9, seed=0)
    write_parts(vectors_dir(corpus, key), ids, hashes, vectors)


def write_parts(directory: Path, ids: list[str], hashes: list[str], vectors: np.ndarray
                ) -> None:
    """The vectors as ``openmsd embed`` stores them: one part per :data:`EMBED_CHUNK`
    papers."""
    directory.mkdir(parents=True, exist_ok=True)
    for n, start in enumerate(range(0, len(ids), EMBED_CHUNK)):
        end = start + EMBED_CHUNK
        write_part(directory / f"part-{n:05d}.parquet", ids[start:end], hashes[start:end],
                   vectors[start:end])


def related_lists(corpus_dir: Path, wanted: bool, ranker: str = HYBRID_GRAPH
                  ) -> dict[str, Any]:
    """Make the stored related lists of ``ranker`` current (``wanted``) or remove them; what
    was done and how long computing them took."""
    corpus = Corpus(corpus_dir)
    path = lists_path(corpus, ranker)
    if not wanted:
        path.unlink(missing_ok=True)
        return {"used": False}
    if is_current(corpus, ranker):
        return {"used": True, "computed_s": None}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "openmsd.cli", "index", "related", str(corpus_dir),
                    "--ranker", ranker, "--workers", "2"], check=True,
                   env={**os.environ, "OMP_NUM_THREADS": "1"})
    took = round(time.perf_counter() - started, 1)
    print(f"related lists of {ranker} computed in {took} s", flush=True)
    return {"used": True, "computed_s": took}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


RECOMMEND = ("Dependency parsing of morphologically rich languages remains hard [1]. "
             "Transition-based parsers with neural classifiers are fast and accurate [2]. "
             "We build on both lines of work for {title}.")


Fetch = Callable[[str, str, dict[str, Any] | None, dict[str, Any] | None], Awaitable[int]]
"""``fetch(method, path, params, json body)`` -> the status, the body read whole."""


def request_for(endpoint: str, paper: tuple[str, str], fetch: Fetch,
                ranker_name: str | None = None) -> Awaitable[int]:
    """One request; related and search ask for ``ranker_name`` (None: the server's default)."""
    paper_id, title = paper
    ranker = {"model": ranker_name} if ranker_name else {}
    if endpoint == "related":
        return fetch("GET", f"/api/papers/{paper_id}/related", {"k": 10, **ranker}, None)
    if endpoint == "search":
        return fetch("GET", "/api/search", {"q": title, "k": 10, **ranker}, None)
    return fetch("POST", "/api/recommend", None,
                 {"text": RECOMMEND.format(title=title), "k": 5})


async def client_loop(fetch: Fetch, papers: list[tuple[str, str]],
                      endpoints: list[str], deadline: float, limit: int, seed: int,
                      latencies: dict[str, list[float]], errors: list[str],
                      ranker: str | None, answered: list[float],
                      mine: list[float] | None = None) -> None:
    rng = random.Random(seed)
    turn = seed
    while time.perf_counter() < deadline and sum(map(len, latencies.values())) < limit:
        endpoint = endpoints[turn % len(endpoints)]
        turn += 1
        paper = rng.choice(papers)
        start = time.perf_counter()
        try:
            status = await request_for(endpoint, paper, fetch, ranker)
            if status == 200:
                answered.append(time.perf_counter())
                latencies[endpoint].append(answered[-1] - start)
                if mine is not None:
                    mine.append(answered[-1] - start)
            else:
                errors.append(f"{status} {endpoint} {paper[0]}")
        except (httpx.HTTPError, aiohttp.ClientError, TimeoutError) as error:
            errors.append(f"{type(error).__name__} {endpoint} {paper[0]}")


@asynccontextmanager
async def http_client(base: str, clients: int, kind: str) -> AsyncIterator[Fetch]:
    """A pooled HTTP/1.1 keep-alive client of ``kind`` (``aiohttp``, the lighter one on the
    shared cores, or ``httpx``) with ``clients`` connections and a 60 s timeout."""
    if kind == "httpx":
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
            async def fetch_httpx(method: str, path: str, params: dict[str, Any] | None,
                                  body: dict[str, Any] | None) -> int:
                response = await http.request(method, path, params=params, json=body)
                return response.status_code
            yield fetch_httpx
        return
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(base, connector=connector,
                                     timeout=aiohttp.ClientTimeout(total=60)) as session:
        async def fetch_aiohttp(method: str, path: str, params: dict[str, Any] | None,
                                body: dict[str, Any] | None) -> int:
            async with session.request(method, path, params=params, json=body) as response:
                await response.read()
                return response.status
        yield fetch_aiohttp


async def load(base: str, papers: list[tuple[str, str]], endpoints: list[str], clients: int,
               seconds: float, limit: int, ranker: str | None = None,
               answered: list[float] | None = None, client: str = "aiohttp",
               by_client: list[list[float]] | None = None
               ) -> tuple[dict[str, list[float]], list[str], float]:
    """``clients`` closed-loop clients for ``seconds``: each endpoint's latencies (seconds),
    the errors, the elapsed time; ``answered`` gets each answer's ``perf_counter`` time,
    ``by_client`` each client's latencies (one list per client)."""
    answered = [] if answered is None else answered
    if by_client is not None:
        by_client[:] = [[] for _ in range(clients)]
    latencies: dict[str, list[float]] = {e: [] for e in endpoints}
    errors: list[str] = []
    async with http_client(base, clients, client) as fetch:
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(client_loop(fetch, papers, endpoints, deadline, limit, i,
                                           latencies, errors, ranker, answered,
                                           by_client[i] if by_client is not None else None)
                               for i in range(clients)))
        return latencies, errors, time.perf_counter() - started


def rebuild_loop(corpus_dir: Path, kind: str, backend: str, times: int, seconds: float,
                 at: float | None = None) -> list[float]:
    """Rebuild the index ``times`` times, the first after ``at`` seconds (default: evenly over
    ``seconds``), the others one after another; each rebuild's seconds."""
    took = []
    for i in range(times):
        if i == 0:
            time.sleep(seconds / (times + 1) if at is None else at)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "openmsd.cli", "index", "build", str(corpus_dir),
                        "--model", MODEL, "--backend", backend, "--kind", kind, "--full"],
                       check=True, capture_output=True,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
        took.append(time.perf_counter() - started)
    return took


def watch_swaps(base: str, stop: threading.Event, swaps: list[float],
                every_s: float = 0.5) -> None:
    """Poll ``/healthz`` until ``stop``; the ``perf_counter`` time of each index swap seen
    (its ``reloads`` count going up)."""
    seen = None
    while not stop.wait(every_s):
        try:
            reloads = sum(httpx.get(base + "/healthz", timeout=30).json()["reloads"].values())
        except httpx.HTTPError:
            continue
        if seen is not None and reloads > seen:
            swaps.extend([time.perf_counter()] * (reloads - seen))
        seen = reloads


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
    parser.add_argument("--rebuild-at", type=float, default=None,
                        help="Seconds into the measurement at which the first rebuild starts "
                             "(default: the window over rebuilds + 1). A 100,000-paper HNSW "
                             "rebuild takes minutes: start it early to see the swap.")
    parser.add_argument("--model", choices=sorted(DIMS), default=MODEL,
                        help="The served model (its vectors are generated, its queries "
                             "encoded for real).")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch",
                        help="How the server encodes queries (openmsd serve --backend).")
    parser.add_argument("--workers", type=int, default=1,
                        help="Server processes (openmsd serve --workers); the /healthz batching "
                             "figures are then one worker's.")
    parser.add_argument("--keep-alive-requests", type=int, default=None,
                        help="openmsd serve --keep-alive-requests N: a connection closed after "
                             "N requests (0: never; default serve's: never with one worker, "
                             "after each request with several).")
    parser.add_argument("--encoder-threads", type=int, default=None,
                        help="The server's query encoder threads ($OPENMSD_THREADS; openmsd "
                             "serve's default is 1).")
    parser.add_argument("--peer", action="store_true",
                        help="Run again with no micro-batching of queries (the peer: one "
                             "encoder call at a time) and print the p95 ratios.")
    parser.add_argument("--client", choices=["aiohttp", "httpx"], default="aiohttp",
                        help="The HTTP client of the 20 clients (they share the server's "
                             "cores: aiohttp costs less CPU per request than httpx).")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/NAME.json (--name): each phase's p95 "
                             "and errors, the machine's load during it")
    parser.add_argument("--name", default="server_load",
                        help="the record's name (server_load_1m for the 1,000,000-paper run)")
    parser.add_argument("--ranker", default=None,
                        help="what related and search rank with: the served model (dense only, "
                             "its FAISS index), or a ranker such as hybrid-graph (text, words "
                             "and citations fused); default: the server's default. Several, "
                             "comma-separated (default,muse-v3: the server's default rankers, "
                             "then dense only): each measured in turn on the same server, with "
                             "the p95 and CPU ratios to the last")
    parser.add_argument("--phases", default=None,
                        help="Phases measured in turn on one server, comma-separated, each "
                             "ENDPOINTS@RANKER (ENDPOINTS joined by +; RANKER 'default' for "
                             "the server's), e.g. search@muse-v3,search@default,"
                             "related@default,related@muse-v3; p95 and CPU ratios are to the "
                             "last phase with the same endpoints. Overrides --ranker.")
    parser.add_argument("--related-lists", action=argparse.BooleanOptionalAction,
                        default=True,
                        help="Compute the server's fused related lists once for the corpus "
                             "build before the server starts (openmsd index related; reused "
                             "while current), so that related papers are a lookup; "
                             "--no-related-lists removes them: related is fused per request.")
    parser.add_argument("--start-timeout", type=float, default=1800,
                        help="Seconds to wait for the server to load (its rankers read the "
                             "whole corpus at start).")
    args = parser.parse_args()
    if args.peer and (args.phases or (args.ranker and "," in args.ranker)):
        parser.error("--peer compares one ranker with and without batching: name one --ranker")
    endpoints = args.endpoints.split(",")
    if not set(endpoints) <= {"related", "search", "recommend"}:
        parser.error(f"--endpoints {args.endpoints!r}: expected related, search, recommend")
    for asked, _ in phase_plan(args, endpoints).values():
        if not set(asked) <= {"related", "search", "recommend"}:
            parser.error(f"--phases {args.phases!r}: expected ENDPOINTS@RANKER with endpoints "
                         "related, search, recommend joined by +")

    MODEL, DIM = args.model, DIMS[args.model]
    load_before = os.getloadavg()[0]
    key = vector_key(MODEL, args.backend)
    cache = args.cache / (f"n{args.papers}" if key == "muse-v3" else f"n{args.papers}-{key}")
    corpus_dir = build_corpus(cache, args.papers, args.kind, key)
    papers = [tuple(row) for row in Corpus(corpus_dir).connect().execute(
        f"SELECT i.paper_id, coalesce(p.title, 'parsing') FROM read_parquet("
        f"'{corpus_dir}/index/{key}/papers.parquet') i JOIN papers p USING (paper_id)"
    ).fetchall()]
    lists = related_lists(corpus_dir, args.related_lists)
    result = measure(args, corpus_dir, papers, endpoints, {})
    result["related_lists"] = lists
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
    if args.record:
        write(args, result, load_before)


def write(args: argparse.Namespace, result: dict[str, Any], load_before: float) -> None:
    """``benchmarks/results/server_load.json``: the headline is each phase's p95 (ms) and its
    errors; the machine is shared, so its load before and during each phase is kept."""
    from record import write_record

    phases = result.get("by_phase") or {result["ranker"]: result}
    summary = {name: {"p95_ms": p["latency_ms"]["p95"], "errors": p["errors"],
                      "requests": p["requests"], "load_average_1m": p["load_average_1m"],
                      "by_endpoint": {e: {**v["latency_ms"], "requests": v["requests"]}
                                      for e, v in p["by_endpoint"].items()},
                      "requests_per_s": p["requests_per_s"],
                      "server_start_s": p["server_start_s"],
                      "server_rss_gib_at_start": p["server_rss_gib_at_start"],
                      "server_peak_rss_gib": p["server_peak_rss_gib"]}
               for name, p in phases.items()}
    headline = "; ".join(
        f"{name}: " + ", ".join(f"{e} p95 {v['p95']:,.0f} ms"
                                for e, v in s["by_endpoint"].items())
        + f", {s['errors']} errors; server resident {s['server_rss_gib_at_start']:.1f} GiB "
          f"after a {s['server_start_s'] / 60:.0f} min start, "
          f"peak {s['server_peak_rss_gib']:.1f} GiB"
        for name, s in summary.items())
    print(write_record(
        args.name,
        {"headline": headline,
         "headline_means": f"{args.clients} clients for {args.seconds:g} s on loopback against "
                           f"openmsd serve over {args.papers:,} papers with generated vectors "
                           f"({args.kind} index), each phase one endpoint and ranker; "
                           "latency from send to the full response",
         "peer": "none: the figures are absolute (fused search's p95 is measured against "
                 "150 ms)",
         "phases": summary, "result": result},
        data={"papers": args.papers, "vectors": "generated clustered unit vectors "
              f"({DIM}-d), stored as {MODEL}'s", "works": "generated OpenAlex works (real "
              "S2ORC abstracts), as ingest_throughput.py"},
        load_before=load_before, synthetic=True,
        notes="2 shared cores: the server, its 20 clients and other work on the machine share "
              "them; load_average_1m of each phase is [before, after]"), file=sys.stderr)


def measure(args: argparse.Namespace, corpus_dir: Path, papers: list[tuple[str, str]],
            endpoints: list[str], env: dict[str, str]) -> dict:
    """One server (with ``env``), started, then for each ``--ranker`` warmed up and measured;
    the figures as a dict (with several rankers: ``by_ranker`` and the ratios to the last)."""
    port = free_port()
    threads = {THREADS_ENV: str(args.encoder_threads)} if args.encoder_threads else {}
    started = time.perf_counter()
    keep_alive = ([] if args.keep_alive_requests is None
                  else ["--keep-alive-requests", str(args.keep_alive_requests)])
    server = subprocess.Popen([sys.executable, "-m", "openmsd.cli", "serve", str(corpus_dir),
                               "--model", MODEL, "--port", str(port),
                               "--backend", args.backend, "--workers", str(args.workers),
                               *keep_alive],
                              env={**os.environ, "OMP_NUM_THREADS": "1", **threads, **env})
    base = f"http://127.0.0.1:{port}"
    plan = phase_plan(args, endpoints)
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
        ready_workers(base, args.workers, started + args.start_timeout)
        start_s = round(time.perf_counter() - started, 1)
        resident = server_memory(server.pid)
        print(f"server answering after {start_s} s, resident {resident[0]:.2f} GiB", flush=True)
        for name, (asked, ranker) in plan.items():
            phases[name] = {**phase(args, base, server, corpus_dir, papers, asked, ranker),
                            "server_start_s": start_s, "server_env": env,
                            "server_rss_gib_at_start": round(resident[0], 2),
                            "server_peak_rss_gib": round(server_memory(server.pid)[1], 2)}
            print(name, json.dumps(phases[name]), flush=True)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # requests still queued in its thread pool
            server.kill()
            server.wait()
    if len(phases) == 1:
        return next(iter(phases.values()))
    # each phase against the last phase that asked for the same endpoints (its peer)
    peers = {name: [n for n, (e, _) in plan.items() if e == plan[name][0]][-1] for name in plan}
    ratio = {name: {e: _ratio(p["by_endpoint"][e]["latency_ms"]["p95"],
                              phases[peers[name]]["by_endpoint"][e]["latency_ms"]["p95"])
                    for e in plan[name][0]} for name, p in phases.items() if peers[name] != name}
    cpu = {name: _ratio(p["server_cpu_ms_per_request"],
                        phases[peers[name]]["server_cpu_ms_per_request"])
           for name, p in phases.items() if peers[name] != name}
    return {"by_phase": phases, "peers": peers, "p95_ratio_to_peer": ratio,
            "server_cpu_ratio_to_peer": cpu}


def server_memory(pid: int) -> tuple[float, float]:
    """The resident memory of a server's process tree now and the largest of its processes'
    peaks (``VmHWM``), in GiB."""
    root = psutil.Process(pid)
    tree = [root, *root.children(recursive=True)]
    now = sum(p.memory_info().rss for p in tree)
    peak = 0
    for process in tree:
        for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak = max(peak, int(line.split()[1]) * 1024)
    return now / 2**30, peak / 2**30


def ready_workers(base: str, workers: int, deadline: float, patience: float = 60) -> None:
    """Wait until ``workers`` processes have answered ``/healthz`` (each names its pid), for
    at most ``patience`` seconds, so that no phase starts while a worker is still loading; a
    server whose ``/healthz`` names no pid is taken as it is."""
    seen: set[int] = set()
    deadline = min(deadline, time.perf_counter() + patience)
    while len(seen) < workers and time.perf_counter() < deadline:
        pids = {httpx.get(base + "/healthz", timeout=60).json().get("pid") for _ in range(8)}
        if None in pids:
            return
        seen |= pids
        time.sleep(0.2)


def phase_plan(args: argparse.Namespace, endpoints: list[str]
               ) -> dict[str, tuple[list[str], str | None]]:
    """The phases measured in turn on one server, by name (``search@muse-v3``): what each
    asks for and with which ranker (None: the server's default)."""
    if args.phases:
        asked = [(part.partition("@")[0].split("+"), part.partition("@")[2] or "default")
                 for part in args.phases.split(",")]
    else:
        asked = [(endpoints, r) for r in (args.ranker or "default").split(",")]
    return {f"{'+'.join(e)}@{r}": (e, None if r == "default" else r) for e, r in asked}


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def phase(args: argparse.Namespace, base: str, server: subprocess.Popen, corpus_dir: Path,
          papers: list[tuple[str, str]], endpoints: list[str], ranker: str | None) -> dict:
    """A warm-up, then the load for ``args.seconds`` (with the rebuilds asked for)."""
    rebuilds: list[float] = []
    asyncio.run(load(base, papers, endpoints, args.clients, args.warmup, args.max_requests,
                     ranker, client=args.client))
    served, own = psutil.Process(server.pid), psutil.Process()
    seen: dict[int, float] = {}  # CPU seconds per process of the server's tree (its workers)
    tree_cpu(served, seen)
    server_cpu, client_cpu = sum(seen.values()), sum(own.cpu_times()[:2])
    before = dict(seen)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    encoded_before = httpx.get(base + "/healthz").json().get("encoded", {})
    rebuilder = threading.Thread(target=lambda: rebuilds.extend(rebuild_loop(
        corpus_dir, args.kind, args.backend, args.rebuilds, args.seconds, args.rebuild_at)),
        daemon=True)
    swaps: list[float] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch_swaps, args=(base, stop, swaps), daemon=True)
    answered: list[float] = []
    by_client: list[list[float]] = []
    if args.rebuilds:
        watcher.start()
    rebuilder.start()
    latencies, errors, elapsed = asyncio.run(
        load(base, papers, endpoints, args.clients, args.seconds, args.max_requests, ranker,
             answered, args.client, by_client))
    rebuilder.join()
    stop.set()
    if args.rebuilds:
        watcher.join()
    tree_cpu(served, seen)
    server_cpu = sum(seen.values()) - server_cpu
    # each server process's share of the server CPU (the balance between --workers)
    spent = sorted((seen[pid] - before.get(pid, 0.0) for pid in seen), reverse=True)
    client_cpu = sum(own.cpu_times()[:2]) - client_cpu
    health = httpx.get(base + "/healthz").json()
    reloads = health.get("reloads")
    batches = {m: {what: e.get(what, 0) - encoded_before.get(m, {}).get(what, 0)
                   for what in ("texts", "batches", "calls", "waited_s")}
               for m, e in health.get("encoded", {}).items()}
    done = sum(map(len, latencies.values()))
    requests = max(done + len(errors), 1)
    return {
        "papers": len(papers), "index": args.kind, "clients": args.clients,
        "model": MODEL, "backend": args.backend, "workers": args.workers, "client": args.client,
        "keep_alive_requests": args.keep_alive_requests,
        "ranker": ranker or "server default",
        "endpoints": endpoints, "seconds": round(elapsed, 1),
        "requests": done + len(errors), "errors": len(errors),
        "requests_per_s": round((done + len(errors)) / elapsed, 1),
        "latency_ms": _percentiles([s for e in endpoints for s in latencies[e]]),
        "by_endpoint": {e: {"requests": len(latencies[e]),
                            "latency_ms": _percentiles(latencies[e])} for e in endpoints},
        "rebuilds": len(rebuilds), "rebuild_s": [round(s, 1) for s in rebuilds],
        "server_reloads": reloads,
        # each swap seen (seconds into the window) and the requests answered before and after
        "swaps": [{"at_s": round(t - started, 1), "answered_before": sum(a < t for a in answered),
                   "answered_after": sum(a >= t for a in answered)} for t in swaps],
        "encoder_texts_per_batch": {m: round(b["texts"] / b["batches"], 1)
                                    for m, b in batches.items() if b["batches"]},
        # how long a query waited, on average, for its batch to start (the encoder busy with
        # the batch before, or gathering for up to 2 ms)
        "encoder_wait_ms": {m: round(b["waited_s"] * 1000 / b["calls"], 1)
                            for m, b in batches.items() if b["calls"]},
        # each client's median latency, fastest first: clients on a worker holding more of
        # the connections wait longer (keep-alive connections stay on the worker they reached)
        "client_median_ms": sorted(round(float(np.median(c)) * 1000, 1) for c in by_client
                                   if c),
        "server_cpu_ms_per_request": round(server_cpu * 1000 / requests, 2),
        "server_cpu_share_by_process": [round(c / server_cpu, 3) for c in spent
                                        if server_cpu > 0 and c > 0.01 * server_cpu],
        "client_cpu_ms_per_request": round(client_cpu * 1000 / requests, 2),
        "load_average_1m": [load_before, os.getloadavg()[0]], "cores": os.cpu_count(),
        "error_examples": errors[:5],
    }


if __name__ == "__main__":
    main()
