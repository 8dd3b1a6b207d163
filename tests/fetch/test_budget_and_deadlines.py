"""OpenAlex as it is since February 13, 2026 (a key in ``api_key``, a daily budget in USD,
429 when it is spent, 401 for a wrong key) and fetches that always end (a trickling or cut
answer, no seed resolved, an output path that cannot be written), against the loopback
server."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.fetch import (
    BudgetSpent,
    FetchPlan,
    NetworkError,
    OpenAlex,
    Polite,
    crawl,
    fetch_crossref,
    iter_works,
    seeds_from_ids,
)
from tests.fetch.apiserver import OPENALEX_KEY, Server
from tests.fetch.conftest import FAST
from tests.read_only import read_only

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SPENT = {"X-RateLimit-Limit-USD": "1.0000", "X-RateLimit-Remaining-USD": "0.0000",
         "X-RateLimit-Cost-USD": "0.0000"}
SPENT_BODY = b'{"error": "Rate limit exceeded", "message": "Daily budget exhausted."}'


@pytest.fixture(autouse=True)
def _no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)


def _ids(path: Path) -> set[str]:
    return {w["id"].rsplit("/", 1)[-1] for w in iter_works(path)}


def _fetch(api: Server, out: Path, *args: str, key: str | None = OPENALEX_KEY):
    command = ["fetch", "openalex", *args, "--out", str(out), "--api-url", api.openalex,
               "--retries", "2"]
    return runner.invoke(app, command + (["--api-key", key] if key else []))


def _error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    return lines[0]


def test_a_spent_budget_stops_at_once_keeps_progress_and_resumes(api: Server,
                                                                 tmp_path: Path) -> None:
    api.world.fault("filter=cites:", 429, body=SPENT_BODY, headers=SPENT)
    out = tmp_path / "w.jsonl.gz"
    result = _fetch(api, out, "W1001", "W1002", "--citing", "--depth", "2")
    assert result.exit_code == 2 and "Traceback" not in result.output
    line = _error_line(result.output)
    assert "budget of this key is spent" in line and "resets at 00:00 UTC" in line
    assert "progress kept" in line and "run the same command again" in line
    # no retry of a spent budget: the 429 was asked once
    assert sum("filter=cites:" in p for p in api.world.log) == 1
    assert not out.exists() and out.with_name(out.name + ".progress.json").exists()
    result = _fetch(api, out, "W1001", "W1002", "--citing", "--depth", "2")  # the next day
    assert result.exit_code == 0, result.output
    clean = tmp_path / "clean.jsonl"
    crawl(OpenAlex(api.openalex, FAST), FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"],
                                                                       "cli"),
                                                 citing=True, depth=2), clean)
    assert _ids(out) == _ids(clean)


def test_the_budget_left_is_read_from_the_headers_and_never_overdrawn(api: Server,
                                                                      tmp_path: Path) -> None:
    api.world.keys[OPENALEX_KEY] = 0.0001  # one list call a day
    plan = FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"], "cli"), citing=True)
    with pytest.raises(BudgetSpent, match=r"\$0\.0000 left, the next list call costs"):
        crawl(OpenAlex(api.openalex, FAST), plan, tmp_path / "w.jsonl")
    # stopped before the limit: one list call made (paid), none refused with a 429
    assert sum("filter=" in p for p in api.world.log) == 1
    assert api.world.spent[OPENALEX_KEY] == pytest.approx(0.0001)


def test_without_a_key_the_keyless_budget_runs_out_and_says_how_to_add_one(
        api: Server, tmp_path: Path) -> None:
    api.world.keyless_usd = 0.0001
    out = tmp_path / "w.jsonl"
    result = _fetch(api, out, "W1001", "W1002", "--citing", key=None)
    assert result.exit_code == 2
    line = _error_line(result.output)
    assert "keyless OpenAlex budget is spent" in line
    assert "openalex.org/settings/api" in line and "OPENALEX_API_KEY" in line
    assert all("api_key" not in p for p in api.world.log)


def test_a_wrong_key_is_named_as_such(api: Server, tmp_path: Path) -> None:
    result = _fetch(api, tmp_path / "w.jsonl", "W1001", key="not-a-key")
    assert result.exit_code == 2
    line = _error_line(result.output)
    assert "401 refused" in line and "the API key is wrong" in line
    assert "not-a-key" not in result.output  # a key is never printed


def test_max_cost_stops_before_passing_it_and_a_higher_cap_goes_on(api: Server,
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    args = ("W1001", "W1002", "--citing", "--depth", "2")
    result = _fetch(api, out, *args, "--max-cost", "0.0002")
    assert result.exit_code == 2
    assert "stopped before --max-cost $0.0002" in _error_line(result.output)
    assert api.world.spent[OPENALEX_KEY] == pytest.approx(0.0002)
    result = _fetch(api, out, *args, "--max-cost", "0.01", "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout[result.stdout.index("{"):])
    assert report["resumed"] and 0 < report["cost_usd"] <= 0.01
    assert report["budget_remaining_usd"] == pytest.approx(
        1.0 - api.world.spent[OPENALEX_KEY])


def test_references_go_as_free_singletons_when_no_list_call_is_affordable(
        api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    result = _fetch(api, out, "W1001", "--max-cost", "0", "--json")
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout[result.stdout.index("{"):])
    assert _ids(out) == {"W1001", "W1004", "W1005", "W1006"}
    assert report["cost_usd"] == 0 and report["billed_calls"] == 0
    assert not any("filter=" in p for p in api.world.log)


def test_dry_run_estimates_calls_and_cost_with_free_calls_only(api: Server,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    args = ("W1001", "10.5555/test.1002", "--citing")
    result = _fetch(api, out, *args, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    estimate = orjson.loads(result.stdout[result.stdout.index("{"):])
    assert estimate["calls"] == {"singleton": 2, "list": 2, "search": 0}
    assert estimate["cost_usd"] == pytest.approx(0.0002)
    assert estimate["budget_remaining_usd"] == pytest.approx(1.0)
    assert not out.exists() and not api.world.spent.get(OPENALEX_KEY)
    table = _fetch(api, out, *args, "--dry-run")
    assert "dry run" in table.output and "$0.0002 in all" in table.output
    result = _fetch(api, out, *args, "--json")  # the real crawl bills what was estimated
    report = orjson.loads(result.stdout[result.stdout.index("{"):])
    assert report["billed_calls"] == estimate["calls"]["list"]
    assert report["cost_usd"] == pytest.approx(estimate["cost_usd"])


def test_mailto_is_accepted_with_a_note_and_not_sent(api: Server, tmp_path: Path) -> None:
    result = _fetch(api, tmp_path / "w.jsonl", "W1001", "--depth", "0", "--mailto",
                    "me@example.org")
    assert result.exit_code == 0, result.output
    assert "--mailto is ignored" in result.output
    assert not any("mailto" in p for p in api.world.log)


# --- fetches that always end -----------------------------------------------------------------

def test_a_trickling_answer_is_cut_at_the_deadline(api: Server, tmp_path: Path) -> None:
    body = orjson.dumps(api.world.works["W1001"])
    api.world.fault("/works/W1001", 200, body=body, mode="trickle", pause=0.25)
    out = tmp_path / "w.jsonl.gz"
    command = [sys.executable, "-m", "openmsd.cli", "fetch", "openalex", "W1001", "--out",
               str(out), "--api-url", api.openalex, "--api-key", OPENALEX_KEY, "--timeout",
               "2", "--retries", "0"]
    began = time.monotonic()
    done = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    took = time.monotonic() - began
    # one byte every 0.25 s: the whole answer would take len(body) / 4 s (about 5 minutes)
    assert len(body) * 0.25 > 200 and took < 60
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line = _error_line(done.stderr.replace("\n ", " "))
    assert "no complete answer within 2 s" in line
    assert line.count(f"{api.openalex}/works/W1001") == 1
    assert out.with_name(out.name + ".progress.json").exists() and not out.exists()


def test_a_cut_answer_is_tried_again_then_reported_with_its_url(api: Server,
                                                                tmp_path: Path) -> None:
    page = b'{"meta": {"count": 1, "next_cursor": null}, "results": []}' + b" " * 200
    api.world.fault("filter=openalex_id", 200, body=page, mode="truncate")
    out = tmp_path / "w.jsonl"
    plan = FetchPlan(seeds=seeds_from_ids(["W1001"], "cli"))
    report = crawl(OpenAlex(api.openalex, FAST), plan, out)  # one cut answer: tried again
    assert _ids(out) == {"W1001", "W1004", "W1005", "W1006"} and report.works == 4
    for _ in range(2):
        api.world.fault("filter=openalex_id", 200, body=page, mode="truncate")
    out2 = tmp_path / "w2.jsonl"
    with pytest.raises(NetworkError) as caught:
        crawl(OpenAlex(api.openalex, Polite(retries=1, backoff=0.01, api_key=OPENALEX_KEY)),
              plan, out2)
    message = str(caught.value)
    assert "the answer broke off" in message and "progress kept" in message
    assert message.count(api.openalex) == 1 and "api_key" not in message
    assert out2.with_name(out2.name + ".progress.json").exists()


def test_a_page_failing_after_its_retries_names_its_url_once(api: Server,
                                                             tmp_path: Path) -> None:
    for _ in range(3):
        api.world.fault("filter=openalex_id", 503)
    result = _fetch(api, tmp_path / "w.jsonl", "W1001")
    assert result.exit_code == 2
    line = _error_line(result.output)
    assert "still failing after 2 retries" in line
    assert line.count("http://") == 1 and f"{api.openalex}/works?filter=openalex_id" in line


def test_no_seed_resolved_is_an_error_and_writes_nothing(api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl.gz"
    result = _fetch(api, out, "10.5555/unknown.1", "W424242")
    assert result.exit_code == 2
    assert "no seed resolved (of 2)" in _error_line(result.output)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_an_out_path_that_cannot_be_written_is_refused_before_anything_runs(
        api: Server, tmp_path: Path) -> None:
    afile = tmp_path / "afile.txt"
    afile.write_text("not a folder")
    result = _fetch(api, afile / "w.jsonl.gz", "W1001")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{afile} is a file, not a folder" in _error_line(result.output)
    assert api.world.log == []
    # checked first: before the seed file (missing here) is read
    result = _fetch(api, afile / "w.jsonl.gz", "--seeds", str(tmp_path / "missing.bib"))
    assert "is a file, not a folder" in _error_line(result.output)


def _trickling_answer(head: bytes, drip: bytes) -> socket.socket:
    """A listener on loopback answering one request with ``head`` at once, then ``drip`` one
    byte every 0.2 s (60 s for 300 bytes)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def trickle() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        with contextlib.suppress(OSError):
            conn.sendall(head)
            for byte in drip:
                conn.send(bytes([byte]))
                time.sleep(0.2)
        conn.close()

    threading.Thread(target=trickle, daemon=True).start()
    return listener


def _cut_at_the_deadline(listener: socket.socket, retries: int) -> None:
    """An OpenAlex call to ``listener`` fails within the 2 s deadline (and 10 s in all)."""
    began = time.monotonic()
    with pytest.raises(NetworkError, match="no complete answer within 2 s"):
        OpenAlex(f"http://127.0.0.1:{listener.getsockname()[1]}",
                 Polite(retries=retries, timeout=2)).work("W1")
    assert time.monotonic() - began < 10
    listener.close()


def test_trickling_headers_are_cut_at_the_deadline_too() -> None:
    _cut_at_the_deadline(_trickling_answer(b"", b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 300),
                         retries=2)


def test_a_trickling_crossref_answer_is_cut_at_the_deadline_too(api: Server,
                                                               tmp_path: Path) -> None:
    api.world.fault("/crossref/works/", 200, body=b"{" + b" " * 400 + b"}", mode="trickle",
                    pause=0.25)
    began = time.monotonic()
    with pytest.raises(NetworkError, match=r"no complete answer within 2 s") as caught:
        fetch_crossref(["10.5555/test.1005"], tmp_path / "c.json", api.crossref,
                       Polite(retries=0, timeout=2))
    assert time.monotonic() - began < 10 and str(caught.value).count("http://") == 1
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("status_line", [b"HTTP/1.0 200 OK", b"HTTP/1.1 200 OK"])
def test_a_body_trickling_after_connection_close_is_cut_at_the_deadline(
        status_line: bytes) -> None:
    """An HTTP/1.0 answer, or one saying ``Connection: close``, has its connection let go of
    its socket once the headers are read; the deadline still cuts the body."""
    listener = _trickling_answer(status_line + b"\r\nConnection: close\r\nContent-Type: "
                                 b"application/json\r\nContent-Length: 300\r\n\r\n",
                                 b" " * 300)
    _cut_at_the_deadline(listener, retries=0)


def test_a_file_size_limit_mid_crawl_names_the_file_keeps_progress_and_resumes(
        api: Server, tmp_path: Path) -> None:
    def limit_files() -> None:  # ``ulimit -f 3``, SIGXFSZ ignored as a shell would
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (3072, 3072))

    whole = tmp_path / "whole.jsonl"
    assert _fetch(api, whole, "W1001", "W1002", "--citing").exit_code == 0
    out = tmp_path / "w.jsonl"
    command = [sys.executable, "-m", "openmsd.cli", "fetch", "openalex", "W1001", "W1002",
               "--citing", "--out", str(out), "--api-url", api.openalex, "--api-key",
               OPENALEX_KEY]
    done = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300, preexec_fn=limit_files)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    line = _error_line(done.stderr.replace("\n", " "))
    assert f"{out}.partial: cannot write: file too large" in line and "progress kept" in line
    assert not out.exists() and not list(tmp_path.glob("*.tmp"))
    assert _fetch(api, out, "W1001", "W1002", "--citing").exit_code == 0  # resumed
    assert _ids(out) == _ids(whole)


def test_an_out_folder_that_cannot_be_made_or_written_is_refused_before_anything_runs(
        api: Server, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder):
        result = _fetch(api, folder / "w.jsonl.gz", "W1001")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--out {folder / 'w.jsonl.gz'}: cannot write in {folder}" in _error_line(
        result.output)
    if Path("/proc/self").is_dir():  # a folder no one may create, root included
        result = _fetch(api, Path("/proc/openmsd/w.jsonl.gz"), "W1001")
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "--out /proc/openmsd/w.jsonl.gz: cannot write in /proc/openmsd" in \
            _error_line(result.output)
    assert api.world.log == []


def test_a_doi_singleton_is_free_and_unreadable_budget_headers_are_no_amounts() -> None:
    from openmsd.fetch.budget import Budget, call_kind

    for url in ("http://h/works/W1", "http://h/works/doi:10.5555/test.1",
                "http://h/openalex/works/doi:10.5555/a/b"):
        assert call_kind(url) == "singleton", url
    assert call_kind("http://h/works?filter=doi:10.5555/test.1") == "list"
    budget = Budget()
    budget.record({}, "http://h/works/doi:10.5555/test.1")  # no headers: the published price
    assert budget.spent_usd == 0 and budget.billed_calls == 0
    budget.record({"X-RateLimit-Limit-USD": "1e400", "X-RateLimit-Remaining-USD": "nan",
                   "X-RateLimit-Cost-USD": "-5"}, "http://h/works?filter=a:b")
    assert budget.limit_usd is None and budget.remaining_usd is None
    assert budget.spent_usd == pytest.approx(0.0001)  # the price, not -5
