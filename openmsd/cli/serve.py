"""``openmsd serve``: the web page and the JSON API over a corpus; ``openmsd mcp``: the MCP
server for AI assistants over a corpus."""

from __future__ import annotations

import errno
import importlib.util
import socket
from typing import Annotated

import typer

from openmsd.cli.options import BackendOpt, CorpusArg
from openmsd.cli.output import fail

__all__ = ["app"]

app = typer.Typer()


@app.command()
def serve(
    corpus: CorpusArg,
    host: Annotated[str, typer.Option(help="The address to listen on (loopback by default; "
                                      "0.0.0.0 exposes the server to the network).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port (1-65535).")] = 8000,
    model: Annotated[list[str] | None, typer.Option(
        help="A model with an index to serve (repeat for several; the first is the default); by "
             "default every registered model with an index, e5-small-multilingual first.")]
    = None,
    backend: BackendOpt = None,
    workers: Annotated[int, typer.Option(
        min=1, help="Server processes on the port, each with its own index and encoders (one "
                    "Python process answers about one core's worth of requests: use one per "
                    "core on a busy server).")] = 1,
    keep_alive_requests: Annotated[int | None, typer.Option(
        min=0, help="Close a connection after this many requests (0: never). Default: never "
                    "with one worker; with several, after each request, so that the next is "
                    "taken by a free worker (a kept-alive connection stays on the worker that "
                    "accepted it).")] = None,
    base_url: Annotated[str | None, typer.Option(
        help="Where clients reach the server (https://papers.example.org): the feed's links "
             "start with it, never with the Host header a client sends. Default: "
             "http://HOST:PORT (with --host 0.0.0.0: relative links and DOIs).")] = None,
) -> None:
    """The web page and the JSON API over a corpus: http://HOST:PORT/ and /openapi.json."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import CorpusError
    from openmsd.models import DEFAULT_MODEL, UnknownModelError
    from openmsd.server import indexed_models
    from openmsd.server import serve as run_server

    if not 1 <= port <= 65535:
        fail(f"--port {port}: not a TCP port; expected 1 to 65535")
    _check_listen(host, port)
    try:
        run_server(corpus, model or indexed_models(corpus) or [DEFAULT_MODEL], host, port,
                   backend=backend, workers=workers,
                   keep_alive_requests=keep_alive_requests, base_url=base_url)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        fail(str(error))


@app.command()
def mcp(
    corpus: CorpusArg,
    http: Annotated[bool, typer.Option(
        "--http", help="Serve streamable HTTP at http://127.0.0.1:PORT/mcp (loopback only) "
                       "instead of stdio.")] = False,
    port: Annotated[int, typer.Option(help="The port with --http (1-65535).")] = 8765,
    model: Annotated[list[str] | None, typer.Option(
        help="A model with an index to serve (the first ranks libraries and citations); by "
             "default every registered model with an index, e5-small-multilingual first.")]
    = None,
    backend: BackendOpt = None,
) -> None:
    """The MCP server for AI assistants over a corpus (stdio by default): tools related,
    search, recommend_citations, explain, paper and whats_new, read only; one process keeps
    the models and index loaded."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.models import DEFAULT_MODEL, UnknownModelError

    if importlib.util.find_spec("mcp") is None:
        fail("openmsd mcp needs the MCP SDK: pip install 'openmsd[mcp]'")
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.server import indexed_models, run_mcp

    if not 1 <= port <= 65535:
        fail(f"--port {port}: not a TCP port; expected 1 to 65535")
    if http:
        _check_listen("127.0.0.1", port)
    try:
        Corpus(corpus).check()
        run_mcp(str(corpus), model or indexed_models(corpus) or [DEFAULT_MODEL], http, port,
                backend)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        fail(str(error))


def _check_listen(host: str, port: int) -> None:
    """Fail with one line, before the index loads, when ``host:port`` cannot be listened on
    (an address that is not this machine's, a port in use or reserved)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as error:
        fail(f"--host {host}: not an address of this machine ({error})")
    try:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
            probe.bind(address)
    except OSError as error:
        if error.errno == errno.EADDRNOTAVAIL:
            fail(f"--host {host}: not an address of this machine ({error.strerror})")
        fail(f"--port {port}: cannot listen on {host}:{port} ({error.strerror or error})")
