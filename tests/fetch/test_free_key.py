"""OpenAlex on a free key as it answers since 2026, against the loopback server: the date
filters are for paid plans ("Plan upgrade required"), a search over 1,500 characters is refused,
a 429 is a busy second or a spent budget (told apart by the USD headers), and ``update --watch``
still finds the works published since the last run."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import feedparser
import orjson
import pytest
import requests
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.fetch import FetchPlan, OpenAlex, PlanRequired, crawl, iter_works, seeds_from_ids
from tests.fetch.apiserver import (
    OPENALEX_KEY,
    OPENALEX_PAID_KEY,
    SEARCH_CAP,
    Server,
    openalex_work,
    serve,
)
from tests.fetch.conftest import FAST, small_world

runner = CliRunner()
MODEL = "muse-v3"
LIBRARY = """@article{a, title = {Analyse syntaxique robuste du français},
  doi = {10.5555/test.1001}}
"""


@pytest.fixture(autouse=True)
def _no_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)


def _invoke(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _run(*args: object) -> str:
    code, output = _invoke(*args)
    assert code == 0, output
    return " ".join(output.split())


def _error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    return " ".join(output[output.index("error:"):].split())


def _ids(path: Path) -> set[str]:
    return {w["id"].rsplit("/", 1)[-1] for w in iter_works(path)}


def _queries(api: Server) -> list[dict[str, list[str]]]:
    return [parse_qs(urlsplit(p).query) for p in api.world.log if "/openalex/works?" in p]


def test_a_paid_only_filter_is_one_line_asked_once_and_leaves_no_progress_files(
        api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    plan = FetchPlan(filters={"from_created_date": "2026-01-01"}, depth=0)
    with pytest.raises(PlanRequired) as caught:
        crawl(OpenAlex(api.openalex, FAST), plan, out)
    message = str(caught.value)
    assert "Premium, Institutional, or Partner plan" in message
    assert "cannot help" in message and "run the same command again" not in message
    assert "api_key" not in message and OPENALEX_KEY not in message
    assert sum("from_created_date" in p for p in api.world.log) == 1  # no retry of a refusal
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_since_on_a_free_key_is_refused_before_anything_is_written(api: Server,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl.gz"
    code, output = _invoke("fetch", "openalex", "W1001", "--since", "2026-10-01", "--out", out,
                           "--api-url", api.openalex, "--api-key", OPENALEX_KEY)
    line = _error_line(output)
    assert code == 2 and "Traceback" not in output
    assert "--since 2026-10-01" in line and "from_publication_date:2026-10-01" in line
    assert "run the same command again" not in line and "nothing written" in line
    assert list(tmp_path.iterdir()) == []
    # the free filter it suggests works on the same key
    _run("fetch", "openalex", "--filter", "from_publication_date:2010-01-01", "--depth", "0",
         "--out", out, "--api-url", api.openalex, "--api-key", OPENALEX_KEY)
    assert _ids(out) == {"W1010", "W1011", "W1012"}  # published 2010-2012 (2000 + n % 20)


def test_a_long_search_is_cut_at_a_word_boundary_and_said_so(api: Server,
                                                              tmp_path: Path) -> None:
    pasted = ("Neural machine translation for low resource languages " * 60).strip()
    assert len(pasted) > SEARCH_CAP
    out = tmp_path / "w.jsonl.gz"
    output = _run("fetch", "openalex", "--search", pasted, "--depth", "0", "--out", out,
                  "--api-url", api.openalex, "--api-key", OPENALEX_KEY)
    assert f"--search is {len(pasted):,} characters, over the 1,500" in output
    sent = [q["search"][0] for q in _queries(api) if "search" in q]
    assert sent and all(len(s) <= SEARCH_CAP for s in sent)
    assert pasted.startswith(sent[0]) and pasted[len(sent[0])] == " "  # a word boundary
    assert "W1002" in _ids(out)
    # the server refuses the uncut text: what openmsd would have met
    answer = requests.get(f"{api.openalex}/works", params={"search": pasted,
                                                            "api_key": OPENALEX_KEY},
                          timeout=10)
    assert answer.status_code == 400 and answer.json()["error"] == "Search query too long"


def test_a_busy_second_waits_briefly_and_a_spent_budget_stops_at_once(api: Server,
                                                                       tmp_path: Path) -> None:
    busy = {"X-RateLimit-Limit-USD": "1", "X-RateLimit-Remaining-USD": "0.9",
            "X-RateLimit-Cost-Required-USD": "0.0001", "Retry-After": "1"}
    api.world.fault("filter=cites:", 429, headers=busy)
    out = tmp_path / "busy.jsonl"
    began = time.perf_counter()
    crawl(OpenAlex(api.openalex, FAST), FetchPlan(seeds=seeds_from_ids(["W1001"], "cli"),
                                                  citing=True), out)
    assert 1.0 <= time.perf_counter() - began < 10 and {"W1009", "W1010"} <= _ids(out)

    # a spent budget: less left than the call costs, Retry-After to midnight (15 h)
    spent = {"X-RateLimit-Limit-USD": "1", "X-RateLimit-Remaining-USD": "0.00005",
             "X-RateLimit-Prepaid-Remaining-USD": "0",
             "X-RateLimit-Cost-Required-USD": "0.0001", "Retry-After": "54000",
             "X-RateLimit-Reset": "54000"}
    api.world.fault("filter=cites:", 429, headers=spent)
    began = time.perf_counter()
    code, output = _invoke("fetch", "openalex", "W1002", "--citing", "--out",
                           tmp_path / "spent.jsonl.gz", "--api-url", api.openalex,
                           "--api-key", OPENALEX_KEY, "--retries", "5")
    line = _error_line(output)
    assert code == 2 and time.perf_counter() - began < 5  # never slept on the 15 hours
    assert "budget of this key is spent" in line and "(in 15 h 0 min)" in line
    assert "$0.0001" in line and "progress kept" in line
    assert sum("filter=cites:W1002" in p for p in api.world.log) == 1


def test_the_dry_run_without_a_key_counts_on_ten_cents_a_day(api: Server,
                                                              tmp_path: Path) -> None:
    output = _run("fetch", "openalex", "W1001", "--citing", "--dry-run", "--json", "--out",
                  tmp_path / "w.jsonl.gz", "--api-url", api.openalex)
    estimate = orjson.loads(output)
    assert estimate["budget_limit_usd"] == 0.1 and estimate["budget_remaining_usd"] == 0.1
    # an API that sends no budget headers (a mirror): the published keyless budget
    work = orjson.dumps(api.world.counted(api.world.works["W1001"]))
    api.world.fault("/works/W1001", 200, body=work)
    output = _run("fetch", "openalex", "W1001", "--citing", "--dry-run", "--out",
                  tmp_path / "w.jsonl.gz", "--api-url", api.openalex)
    assert "$0.1000 left today of $0.1 a day" in output and "no budget headers" in output


def test_update_watch_on_a_free_key_finds_the_works_published_since(tmp_path: Path) -> None:
    world = small_world()
    library = tmp_path / "library.bib"
    library.write_text(LIBRARY, encoding="utf-8")
    works, corpus = tmp_path / "w.jsonl.gz", tmp_path / "corpus"
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    for server in serve(world):
        _run("fetch", "openalex", "W1001", "W1002", "--citing", "--out", works,
             "--api-url", server.openalex, "--api-key", OPENALEX_KEY)
        _run("ingest", works, "--out", corpus)
        _run("embed", corpus, "--model", MODEL)
        _run("index", "build", corpus, "--model", MODEL)
        _run("update", corpus, "--api-key", OPENALEX_KEY, "--watch", library, "--atom",
             tmp_path / "first.xml")

        # between the runs: a thesis citing a corpus work that is no seed (W1006), published
        # today, from a repository (xpac); one citing a seed; an old work citing nothing new
        world.add(openalex_work(3001, "Tese sobre tradução automática", "Uma tese.", 2026, "pt",
                                ["Ana Silva"], [1006], published=today,
                                work_type="dissertation", xpac=True))
        world.add(openalex_work(3002, "Parsing French again", "A new parser.", 2026, "en",
                                ["Bo Li"], [1001], published=today))
        world.add(openalex_work(3003, "An old work indexed late", "Old.", 2001, "en",
                                ["Cy Ng"], [1001]))
        world.log.clear()
        output = _run("update", corpus, "--api-key", OPENALEX_KEY, "--watch", library,
                      "--atom", tmp_path / "second.xml")
        assert "2 new papers since" in output and "cannot filter by updated date" in output
        feed = feedparser.parse((tmp_path / "second.xml").read_bytes())
        assert {e.id for e in feed.entries} == {"https://doi.org/10.5555/test.3001",
                                                "https://doi.org/10.5555/test.3002"}
        logged = " ".join(world.log)
        assert "from_updated_date" in logged  # asked once, refused: the key's plan has not it
        lists = [q for q in _queries(server) if "from_updated_date" not in q["filter"][0]]
        assert all("from_publication_date:" in q["filter"][0] for q in lists)
        assert any("cites:" in q["filter"][0] and "W1006" in q["filter"][0] for q in lists)
        assert all(q.get("include_xpac") == ["true"] for q in lists)

        sidecars = [orjson.loads(p.read_bytes())
                    for p in tmp_path.glob("w.update-*.jsonl.gz.fetch.json")]
        sidecar = next(s for s in sidecars if s["report"]["works"])
        assert sidecar["found_by"] == "published"
        found = set()
        for path in tmp_path.glob("w.update-*.jsonl.gz"):
            found |= _ids(path)
        assert found == {"W3001", "W3002"}
        assert sidecar["report"]["xpac_works"] == 1

        # again: the window overlaps the last run, the same works are found and left out
        output = _run("update", corpus, "--api-key", OPENALEX_KEY)
        assert "nothing new since" in output
        assert not list(tmp_path.glob("*.progress.json"))

        # an update stopped by a spent budget keeps one set of progress files, and resumes
        world.add(openalex_work(3004, "Traduction et analyse", "Encore.", 2026, "fr",
                                ["Di Wu"], [1002], published=today))
        world.fault("filter=cites:", 429, headers={
            "X-RateLimit-Limit-USD": "1", "X-RateLimit-Remaining-USD": "0",
            "X-RateLimit-Cost-Required-USD": "0.0001", "Retry-After": "50000"})
        code, output = _invoke("update", corpus, "--api-key", OPENALEX_KEY)
        assert code == 2 and "budget of this key is spent" in _error_line(output)
        assert len(list(tmp_path.glob("*.progress.json"))) == 1
        output = _run("update", corpus, "--api-key", OPENALEX_KEY)
        assert "1 works" in output and not list(tmp_path.glob("*.progress.json"))

        # a key on a paid plan: the updated-date filter is used, and no publication window
        world.log.clear()
        _run("update", corpus, "--api-key", OPENALEX_PAID_KEY)
        lists = _queries(server)
        assert lists and all("from_publication_date" not in q.get("filter", [""])[0]
                             for q in lists)
        assert any("from_updated_date" in q.get("filter", [""])[0] for q in lists[1:])
