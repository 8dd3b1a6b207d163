"""Load test of ``openmsd serve`` on loopback: C concurrent clients for T seconds against a
corpus of N papers, asking for related papers (``GET /api/papers/{id}/related?k=10``, with
the explanations from the citation graph).

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
        --cache /tmp/server-load --json /tmp/server-load.json
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
import time
from pathlib import Path

import httpx
import numpy as np
import psutil
import pyarrow as pa

from openmsd.corpus.store import Corpus, ParquetSink, arrow_reader
from openmsd.index.vector_index import build_index, index_kind, load_index
from openmsd.ingest.pipeline import ingest
from openmsd.models.embed import text_hash, vector_schema, vectors_dir
from openmsd.models.formatting import paper_input

sys.path.insert(0, str(Path(__file__).parent))
from ingest_throughput import generate as generate_works
from search_index import generate as generate_vectors

MODEL = "muse-v3"
DIM = 512


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


async def client_loop(http: httpx.AsyncClient, ids: list[str], deadline: float, limit: int,
                      seed: int, latencies: list[float], errors: list[str],
                      ranker: str = MODEL) -> None:
    rng = random.Random(seed)
    while time.perf_counter() < deadline and len(latencies) + len(errors) < limit:
        url = f"/api/papers/{rng.choice(ids)}/related?k=10&model={ranker}"
        start = time.perf_counter()
        try:
            response = await http.get(url)
            if response.status_code == 200:
                latencies.append(time.perf_counter() - start)
            else:
                errors.append(f"{response.status_code} {url}")
        except httpx.HTTPError as error:
            errors.append(f"{type(error).__name__} {url}")


async def load(base: str, ids: list[str], clients: int, seconds: float, limit: int,
               ranker: str = MODEL) -> tuple[list[float], list[str], float]:
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as http:
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(client_loop(http, ids, deadline, limit, i, latencies, errors,
                                           ranker) for i in range(clients)))
        return latencies, errors, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--max-requests", type=int, default=200_000)
    parser.add_argument("--warmup", type=float, default=5)
    parser.add_argument("--kind", choices=["hnsw", "flat"], default="hnsw",
                        help="The index: HNSW (efSearch 128) or exact.")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/server-load"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ranker", default=MODEL,
                        help=f"what related papers are ranked with: {MODEL} (dense only, the "
                             "FAISS index), or a ranker such as hybrid-graph (text, words and "
                             "citations fused)")
    args = parser.parse_args()

    corpus_dir = build_corpus(args.cache / f"n{args.papers}", args.papers, args.kind)
    ids = Corpus(corpus_dir).connect().execute(
        f"SELECT paper_id FROM read_parquet('{corpus_dir}/index/{MODEL}/papers.parquet')"
    ).fetchnumpy()["paper_id"].tolist()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "openmsd.cli", "serve", str(corpus_dir),
                               "--model", MODEL, "--port", str(port)],
                              env={**os.environ, "OMP_NUM_THREADS": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        asyncio.run(load(base, ids, args.clients, args.warmup, args.max_requests, args.ranker))
        served, own = psutil.Process(server.pid), psutil.Process()
        server_cpu, client_cpu = sum(served.cpu_times()[:2]), sum(own.cpu_times()[:2])
        latencies, errors, elapsed = asyncio.run(
            load(base, ids, args.clients, args.seconds, args.max_requests, args.ranker))
        server_cpu = sum(served.cpu_times()[:2]) - server_cpu
        client_cpu = sum(own.cpu_times()[:2]) - client_cpu
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # requests still queued in its thread pool
            server.kill()
            server.wait()
    ms = np.array(latencies) * 1000
    requests = max(len(latencies) + len(errors), 1)
    result = {
        "papers": len(ids), "index": args.kind, "ranker": args.ranker, "clients": args.clients,
        "seconds": round(elapsed, 1),
        "requests": len(latencies) + len(errors), "errors": len(errors),
        "requests_per_s": round((len(latencies) + len(errors)) / elapsed, 1),
        "latency_ms": {p: round(float(np.percentile(ms, q)), 1) if len(ms) else None
                       for p, q in (("p50", 50), ("p95", 95), ("p99", 99))},
        "server_cpu_ms_per_request": round(server_cpu * 1000 / requests, 2),
        "client_cpu_ms_per_request": round(client_cpu * 1000 / requests, 2),
        "load_average_1m": os.getloadavg()[0], "cores": os.cpu_count(),
        "error_examples": errors[:5],
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
