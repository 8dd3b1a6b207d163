"""415 for a body that is not JSON, 408 for a stalled body, no NUL bytes in HTML, connections
closed after their N-th request."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from fastapi import FastAPI, Request

from openmsd.server import pages
from openmsd.server.app import LimitsAndHeaders
from openmsd.server.connections import HEADER_TIMEOUT_S, uvicorn_options
from tests.server.conftest import free_port


def test_a_text_plain_body_is_415(client) -> None:
    response = client.post("/api/recommend", content=b"Parsing French [1].",
                           headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert "application/json" in response.json()["detail"]
    assert client.post("/api/recommend", json={"text": "Parsing French [1]."}
                       ).status_code == 200


def test_a_reversed_year_range_is_422(client) -> None:
    for url in ("/api/search?q=parsing&year_from=2020&year_to=2010",
                "/api/papers/fr-parse/related?year_from=2020&year_to=2010"):
        response = client.get(url)
        assert response.status_code == 422, url
        assert "reversed year range" in response.json()["detail"][0]["msg"]
    assert client.get("/?q=parsing&year_from=2020&year_to=2010").status_code == 422


@contextmanager
def running(app, header_timeout_s: float = HEADER_TIMEOUT_S) -> Iterator[int]:
    """``app`` served by uvicorn in a thread, with the options ``openmsd serve`` gives it;
    its port."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning",
                                           **uvicorn_options(header_timeout_s)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def slow_server():
    inner = FastAPI()

    @inner.post("/api/echo")
    async def echo(body: dict) -> dict:
        return body

    with running(LimitsAndHeaders(inner, body_timeout_s=0.5)) as port:
        yield port


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_a_connection_is_closed_after_its_nth_request(limit: int) -> None:
    inner = FastAPI()

    @inner.get("/api/peer")
    async def peer(request: Request) -> int:
        return request.client.port  # the client's end of this connection

    with running(LimitsAndHeaders(inner, keep_alive_requests=limit)) as port, \
            httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        answers = [client.get("/api/peer") for _ in range(7)]
    closing = [a.headers.get("connection") == "close" for a in answers]
    connections = [a.json() for a in answers]
    every = limit or len(answers) + 1
    assert closing == [(n + 1) % every == 0 for n in range(len(answers))]
    # the client opened a new connection after each close, and kept it open otherwise
    assert [connections.index(c) for c in connections] == [
        n - n % every for n in range(len(answers))]


def test_a_stalled_request_body_times_out(slow_server: int) -> None:
    with socket.create_connection(("127.0.0.1", slow_server), timeout=10) as sock:
        sock.sendall(b"POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"a\": ")  # and then nothing
        start = time.monotonic()
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - start < 5


@pytest.fixture
def deadline_server() -> Iterator[int]:
    inner = FastAPI()

    @inner.get("/api/slow")
    async def slow() -> str:
        await asyncio.sleep(1.5)  # answering takes longer than the header deadline
        return "done"

    with running(LimitsAndHeaders(inner), header_timeout_s=0.5) as port:
        yield port


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (it sends nothing more)."""
    sock.settimeout(seconds)
    try:
        while data := sock.recv(4096):
            assert not data.startswith(b"HTTP/1.1 2"), data
        return True
    except TimeoutError:
        return False


def test_half_a_header_is_closed_at_the_deadline(deadline_server: int) -> None:
    with socket.create_connection(("127.0.0.1", deadline_server)) as sock:
        sock.sendall(b"GET /api/slow HTTP/1.1\r\nHost: x\r\nX-Half: ")  # and then nothing
        start = time.monotonic()
        assert _closed_within(sock, 5) and time.monotonic() - start < 3
    with socket.create_connection(("127.0.0.1", deadline_server)) as sock:  # nothing at all
        assert _closed_within(sock, 5)


def test_a_kept_alive_connection_gets_the_deadline_for_each_request(deadline_server: int
                                                                    ) -> None:
    with socket.create_connection(("127.0.0.1", deadline_server)) as sock:
        sock.sendall(b"GET /api/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        answer = b""
        while b"done" not in answer:  # a request slower than the deadline is answered
            answer += sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /api/slow HTTP/1.1\r\nHo")  # the next one stalls mid-header
        start = time.monotonic()
        assert _closed_within(sock, 5) and time.monotonic() - start < 3


def test_no_nul_or_control_bytes_in_html() -> None:
    html = pages.env.from_string("<p>{{ title }}</p>").render(title="a\x00b\x1bc\x08d\n")
    assert html == "<p>abcd\n</p>"
