"""Per-call latency of the MCP server's tools on the demo corpus, once the server is up.

Builds the demo corpus (``openmsd demo --out DIR``, the default model, as a newcomer runs it)
unless ``--corpus`` names one, then starts ``openmsd mcp CORPUS`` as an assistant does: over
stdio, the ``mcp`` package's client starting the command, and over streamable HTTP on
loopback (``--http``). Each round calls every tool once (``search`` in four languages, in turn,
``related`` and ``paper`` for the next corpus paper, ``explain`` of a paper and its first related
paper, ``recommend_citations`` for the demo paragraph, ``whats_new`` for a one-paper library);
the figures are each tool's median, 95th percentile and slowest call in milliseconds, round
trip through the client. The peer is the same
question answered in this process by the tools' own code (:class:`openmsd.server.McpTools`, no
transport): the difference is what the protocol costs. Start-up (command to tools listed) is
reported beside.

    python benchmarks/mcp_latency.py [--rounds 20] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from demo_corpus import demo_corpus
from record import write_record

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openmsd.demo import PARAGRAPH, QUERIES, RELATED  # noqa: E402

SEARCHES = [q for _, q in QUERIES] + ["orchidées et mousses des forêts du Brésil"]


def questions(papers: list[str], explained: list[tuple[str, str]], rounds: int
              ) -> list[list[tuple[str, dict[str, Any]]]]:
    """Each round's (tool, arguments), every tool once per round."""
    paragraph = PARAGRAPH.read_text(encoding="utf-8")
    out = []
    for i in range(rounds):
        paper = papers[i % len(papers)]
        out.append([
            ("search", {"text": SEARCHES[i % len(SEARCHES)], "k": 10}),
            ("related", {"query": paper, "k": 10}),
            ("paper", {"id": paper}),
            ("explain", dict(zip(("paper", "related"), explained[i % len(explained)],
                                 strict=True))),
            ("recommend_citations", {"text": paragraph, "k": 5}),
            ("whats_new", {"seeds": [RELATED[0][0]], "k": 10}),
        ])
    return out


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Median, 95th percentile and slowest, in ms, per tool."""
    out = {}
    for tool, values in times.items():
        ordered = sorted(values)
        out[tool] = {"median_ms": round(statistics.median(ordered) * 1000, 1),
                     "p95_ms": round(ordered[min(len(ordered) - 1,
                                                 round(0.95 * (len(ordered) - 1)))] * 1000, 1),
                     "max_ms": round(ordered[-1] * 1000, 1), "calls": len(ordered)}
    return out


async def timed_calls(call: Callable[[str, dict[str, Any]], Awaitable[Any]],
                      rounds: list[list[tuple[str, dict[str, Any]]]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for round_ in rounds:
        for tool, arguments in round_:
            start = time.perf_counter()
            await call(tool, arguments)
            times.setdefault(tool, []).append(time.perf_counter() - start)
    return times


async def over_mcp(server: Any, rounds: list[list[tuple[str, dict[str, Any]]]],
                   started: float) -> tuple[dict[str, list[float]], float]:
    """The tools' call times through the ``mcp`` client connected to ``server``, and the
    seconds from ``started`` to the tools listed."""
    from mcp import Client

    async with Client(server, read_timeout_seconds=300) as client:
        await client.list_tools()
        up = time.perf_counter() - started

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise RuntimeError(f"{tool}: {result.content[0].text}")
            return result

        return await timed_calls(call, rounds), up


def wait_for(url: str, process: subprocess.Popen, seconds: float = 600) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            raise RuntimeError("openmsd mcp --http ended before answering")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: no answer in {seconds:.0f} s") from None
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        numbers, papers_n, model = run(demo_corpus(args.corpus, Path(tmp)), args.rounds,
                                       args.port)
    write_record("mcp_latency", numbers, load_before=load_before,
                 data={"corpus": "the demo corpus (openmsd demo: the shipped sample)",
                       "papers": papers_n, "model": model, "rounds": args.rounds},
                 notes="Round trip through the mcp package's client, server started once; "
                       "in_process: the tools' code without transport (the peer).")
    print(numbers)


def run(corpus: Path, rounds_n: int, port: int) -> tuple[dict[str, Any], int, str]:
    from mcp.client.stdio import StdioServerParameters

    from openmsd.corpus import Corpus
    from openmsd.server import McpTools, Resources, indexed_models

    models = indexed_models(corpus)
    resources = Resources(corpus, models)
    resources.encoder(models[0])
    resources.warm()
    tools = McpTools(resources)
    ids = [r[0] for r in Corpus(corpus).connect().execute(
        "SELECT paper_id FROM papers WHERE title IS NOT NULL ORDER BY paper_id").fetchall()]
    papers = ids[:: max(1, len(ids) // 20)][:20]
    explained = [(p, tools.related(p, 1).results[0].id) for p in papers[:5]]
    rounds = questions(papers, explained, rounds_n)
    warm = questions(papers, explained, 1)

    async def in_process(tool: str, arguments: dict[str, Any]) -> Any:
        return getattr(tools, tool)(**arguments)

    asyncio.run(timed_calls(in_process, warm))
    peer = asyncio.run(timed_calls(in_process, rounds))
    resources.close()

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "openmsd", "mcp", str(corpus)],
                                   cwd=str(ROOT), env=dict(os.environ))
    stdio_times, stdio_up = asyncio.run(over_mcp(params, rounds, time.perf_counter()))

    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "openmsd", "mcp", str(corpus), "--http",
                               "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_for(url, server)
        http_times, http_up = asyncio.run(over_mcp(url, rounds, started))
    finally:
        server.terminate()
        server.wait(timeout=30)

    stdio_s, http_s, peer_s = summary(stdio_times), summary(http_times), summary(peer)
    slowest = max(v["p95_ms"] for v in [*stdio_s.values(), *http_s.values()])
    worst = max(stdio_s, key=lambda t: max(stdio_s[t]["p95_ms"], http_s[t]["p95_ms"]))
    numbers = {
        "headline": (f"MCP tool calls: search {stdio_s['search']['median_ms']:.0f} ms, related "
                     f"{stdio_s['related']['median_ms']:.0f} ms median over stdio; slowest "
                     f"p95 {slowest:.0f} ms ({worst})"),
        "headline_means": "each tool's round trip through the mcp client, once the server is "
                          "up, on the demo corpus",
        "peer": "the same questions answered in process by the tools' code (in_process)",
        "slowest_tool_p95_ms": slowest,
        "stdio": stdio_s, "http": http_s, "in_process": peer_s,
        "stdio_overhead_median_ms": {t: round(stdio_s[t]["median_ms"] - peer_s[t]["median_ms"], 1)
                                     for t in stdio_s},
        "start_to_tools_listed_s": {"stdio": round(stdio_up, 1), "http": round(http_up, 1)},
    }
    return numbers, len(ids), models[0]


if __name__ == "__main__":
    main()
