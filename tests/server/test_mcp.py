"""``openmsd mcp`` on the demo corpus, driven by the ``mcp`` package's own client: over stdio
(the client starts the command) and over streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from openmsd.demo import PARAGRAPH, RELATED  # noqa: E402
from tests.server.conftest import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"related", "search", "recommend_citations", "explain", "paper", "whats_new"}
ORCHIDS = RELATED[0][0]
FRENCH = "orchidées et mousses des forêts du Brésil"


def stdio(corpus: Path) -> StdioServerParameters:
    """``openmsd mcp CORPUS`` as an assistant starts it (this tree's code: run from its root)."""
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "openmsd", "mcp", str(corpus)],
                                 cwd=str(ROOT), env=dict(os.environ))


async def call(client: Client, tool: str, arguments: dict[str, Any],
               schemas: dict[str, dict]) -> dict[str, Any]:
    """The structured answer of ``tool``, checked against the tool's output schema."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    jsonschema.validate(result.structured_content, schemas[tool])
    return result.structured_content


async def refused(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """The text of the tool error ``tool`` answers ``arguments`` with."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    text = result.content[0].text
    assert "\n" not in text and len(text) < 500, text  # one line, the input not echoed
    return text


async def every_tool(client: Client) -> None:
    listed = (await client.list_tools()).tools
    assert {tool.name for tool in listed} == TOOLS
    schemas = {}
    for tool in listed:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.description and tool.annotations.read_only_hint
        assert not tool.annotations.destructive_hint
        schemas[tool.name] = tool.output_schema
    assert schemas["search"]["properties"]["results"]

    found = await call(client, "search", {"text": FRENCH, "k": 10}, schemas)
    languages = {paper["language"] for paper in found["results"]}
    assert {"en", "pt"} <= languages, languages  # a French query, no French paper
    first = found["results"][0]
    # the demo corpus has no trained ranker: no probability of a link is claimed
    assert first["rank"] == 1 and first["relevance"] is None and first["evidence"]
    assert {"id", "doi", "title", "language", "year", "relevance", "evidence"} <= set(first)

    related = await call(client, "related", {"query": ORCHIDS, "k": 5}, schemas)
    assert related["query_paper"] == ORCHIDS and len(related["results"]) == 5
    assert ORCHIDS not in {p["id"] for p in related["results"]}
    assert {p["language"] for p in related["results"]} - {"pt"}
    pasted = await call(client, "related", {"query": FRENCH, "k": 3, "languages": ["en"]},
                        schemas)
    assert pasted["query_paper"] is None
    assert {p["language"] for p in pasted["results"]} == {"en"}

    other = related["results"][0]["id"]
    why = await call(client, "explain", {"paper": ORCHIDS, "related": other}, schemas)
    assert why["rank"] == 1 and why["evidence"] == related["results"][0]["evidence"]

    record = await call(client, "paper", {"id": ORCHIDS}, schemas)
    assert record["id"] == ORCHIDS and record["language"] == "pt" and record["abstract"]
    assert record["english_abstract"].startswith("Campylocentrum Benth. has")

    text = PARAGRAPH.read_text(encoding="utf-8")
    cited = await call(client, "recommend_citations", {"text": text, "k": 3}, schemas)
    assert cited["locations"] and all(len(loc["results"]) == 3 for loc in cited["locations"])
    assert any(loc["markers"] for loc in cited["locations"])

    new = await call(client, "whats_new", {"seeds": [ORCHIDS], "k": 5}, schemas)
    assert new["seeds"] == [ORCHIDS] and new["new"] > 5 and len(new["results"]) == 5
    assert ORCHIDS not in {p["id"] for p in new["results"]}

    assert await refused(client, "search", {"text": "forests", "k": 10_000}) == (
        "Error executing tool search: k: Input should be less than or equal to 100 "
        "(got 10000)")
    assert "valid integer" in await refused(client, "related", {"query": ORCHIDS, "k": "ten"})
    assert "at most 10000 characters" in await refused(client, "search",
                                                       {"text": "forêt " * 20_000})
    assert "at most 50000 characters" in await refused(client, "recommend_citations",
                                                       {"text": "x" * 100_000})
    assert "no paper with id or DOI 'W0'" in await refused(client, "paper", {"id": "W0"})
    assert "no paper with id or DOI" in await refused(client, "related", {"query": "10.1/nope"})
    assert "no paper" in await refused(client, "explain", {"paper": ORCHIDS, "related": "x"})
    assert "languages" in await refused(client, "search", {"text": "forests",
                                                           "languages": ["fr"]})
    assert "after year_to" in await refused(client, "search", {"text": "forests",
                                                               "year_from": 2020,
                                                               "year_to": 2010})
    assert "no library watched" in await refused(client, "whats_new", {})
    # still answering after the errors
    assert (await call(client, "paper", {"id": other}, schemas))["id"] == other


def test_an_assistant_calls_every_tool_over_stdio(demo_run) -> None:
    corpus, _, _ = demo_run

    async def session() -> None:
        async with Client(stdio(corpus), read_timeout_seconds=300) as client:
            await every_tool(client)

    asyncio.run(session())
    watch = corpus / "watch"
    assert not watch.exists() or not any(watch.glob("*.json")), "a tool wrote a watch"


def test_the_same_over_streamable_http(demo_run) -> None:
    corpus, _, _ = demo_run
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "openmsd", "mcp", str(corpus), "--http",
                               "--port", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        import httpx

        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, server.stderr.read().decode()
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the MCP server did not start"
                time.sleep(0.5)

        async def session() -> None:
            async with Client(url, read_timeout_seconds=120) as client:
                await every_tool(client)

        asyncio.run(session())
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_corpus_that_is_not_one_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "openmsd", "mcp", str(tmp_path / "none")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "none" in done.stderr


def test_a_record_without_an_english_abstract_carries_its_english_summary(
        demo_run, tmp_path: Path) -> None:
    import shutil

    from openmsd.corpus import Corpus, read_papers, write_summaries
    from openmsd.server import McpTools, Resources

    corpus = tmp_path / "corpus"
    shutil.copytree(demo_run[0], corpus)
    papers = read_papers(Corpus(corpus)).to_pylist()
    bare = next(p for p in papers if p["language"] != "en" and not p["en_abstract"])
    write_summaries(Corpus(corpus), "llm", 64, [
        {"paper_id": bare["paper_id"], "source_hash": bare["source_hash"],
         "summary": "An English summary.", "source": "gemma3-270m", "tokens": 4,
         "generated_tokens": 4}])
    tools = McpTools(Resources(corpus, ["muse-v3"]))
    record = tools.paper(bare["paper_id"])
    assert record.english_abstract is None and record.english_summary == "An English summary."
    assert tools.paper(ORCHIDS).english_summary is None  # it has an English abstract
    with pytest.raises(ValueError, match="no paper with id or DOI 'nope'"):
        tools.paper("nope")
