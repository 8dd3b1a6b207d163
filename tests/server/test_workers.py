"""``openmsd serve --workers 2``: two processes on one port answer as one process does, each
takes its share of the requests (a connection is closed after each), and a corpus or a port
they could not serve is refused in the parent with the CLI's error, not a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from tests.server.conftest import MODEL, free_port


def test_two_workers_answer_like_one(served_corpus: Path, client) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "openmsd.cli", "serve", str(served_corpus), "--model", MODEL,
         "--port", str(port), "--workers", "2"],
        env={**os.environ, "OMP_NUM_THREADS": "1"}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 240
        while True:
            assert server.poll() is None, server.stderr.read().decode()
            try:
                if httpx.get(base + "/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.time() < deadline, "the workers did not answer within 240 s"
            time.sleep(0.5)
        workers = [p for p in psutil.Process(server.pid).children(recursive=True)
                   if "python" in p.name().lower()]
        assert len(workers) >= 2
        for query in ["dependency parsing", "traduction automatique", "selva atlántica"]:
            served = httpx.get(base + "/api/search", params={"q": query, "k": 5,
                                                              "model": MODEL}, timeout=60)
            in_process = client.get("/api/search", params={"q": query, "k": 5, "model": MODEL})
            assert served.status_code == 200
            ids = [r["paper_id"] for r in served.json()["results"]]
            assert ids == [r["paper_id"] for r in in_process.json()["results"]]
            assert ids
        # uvicorn's workers accept from one shared socket, and with several workers each
        # answer closes its connection: one keep-alive client's requests reach both workers
        answered: set[int] = set()
        with httpx.Client(base_url=base, timeout=60) as one:
            while len(answered) < 2 and time.time() < deadline:
                replies = [one.get("/healthz") for _ in range(8)]
                assert all(r.headers.get("connection") == "close" for r in replies)
                answered |= {r.json()["pid"] for r in replies}
        assert len(answered) == 2 and answered <= {p.pid for p in workers}
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_workers_refuse_a_corpus_in_the_parent(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openmsd.cli", "serve", str(tmp_path / "nothing"), "--model",
         MODEL, "--port", str(free_port()), "--workers", "2"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "nothing" in done.stderr + done.stdout


def test_workers_refuse_a_port_in_use(served_corpus: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "openmsd.cli", "serve", str(served_corpus), "--model", MODEL,
             "--port", str(port), "--workers", "2"],
            capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr + done.stdout
