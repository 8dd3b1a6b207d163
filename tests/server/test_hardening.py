"""415 for a body that is not JSON, 408 for a stalled body, no NUL bytes in HTML."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from fastapi import FastAPI

from openmsd.server import pages
from openmsd.server.app import LimitsAndHeaders
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


@pytest.fixture
def slow_server():
    import uvicorn

    inner = FastAPI()

    @inner.post("/api/echo")
    async def echo(body: dict) -> dict:
        return body

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(LimitsAndHeaders(inner, body_timeout_s=0.5),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def test_a_stalled_request_body_times_out(slow_server: int) -> None:
    with socket.create_connection(("127.0.0.1", slow_server), timeout=10) as sock:
        sock.sendall(b"POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"a\": ")  # and then nothing
        start = time.monotonic()
        answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - start < 5


def test_no_nul_or_control_bytes_in_html() -> None:
    html = pages.env.from_string("<p>{{ title }}</p>").render(title="a\x00b\x1bc\x08d\n")
    assert html == "<p>abcd\n</p>"
