"""``openmsd fetch openalex`` against a local server speaking the OpenAlex API."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from openmsd.fetch import (
    FetchError,
    FetchPlan,
    OpenAlex,
    Polite,
    Seed,
    crawl,
    fetch_crossref,
    iter_works,
    seeds_from_ids,
    sidecar_path,
)
from openmsd.ingest.openalex import rebuild_abstract
from tests.fetch.apiserver import OPENALEX_KEY, Server
from tests.fetch.conftest import FAST, FAST_PAID


def _ids(path: Path) -> list[str]:
    return [w["id"].rsplit("/", 1)[-1] for w in iter_works(path)]


def test_seeds_references_and_citers_depth_1(api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl.gz"
    plan = FetchPlan(seeds=seeds_from_ids(["W1001", "10.5555/test.1002"], "cli"), citing=True)
    report = crawl(OpenAlex(api.openalex, FAST), plan, out)
    ids = _ids(out)
    assert len(ids) == len(set(ids))
    # seeds, their references, the works citing them; not the second step (1008, 1012)
    assert set(ids) == {"W1001", "W1002", "W1004", "W1005", "W1006", "W1007", "W1009",
                        "W1010"}
    assert report.works == 8 and not report.unresolved
    with gzip.open(out) as handle:  # OpenAlex works JSONL, abstracts as inverted indexes
        first = orjson.loads(handle.readline())
    assert rebuild_abstract(first["abstract_inverted_index"]).startswith("Analyse syntaxique")
    assert not out.with_name(out.name + ".partial").exists()
    assert not out.with_name(out.name + ".progress.json").exists()
    assert orjson.loads(sidecar_path(out).read_bytes())["plan"]["citing"] is True
    # the key in the api_key parameter of every request; no header, no retired mailto
    assert all(f"api_key={OPENALEX_KEY}" in p for p in api.world.log)
    assert not any("Authorization" in h for h in api.world.headers)
    assert not any("mailto" in p for p in api.world.log)
    # two free singletons, one OR-filter of the 4 references, one cites filter: $0.0002
    assert report.billed_calls == 2 and report.cost_usd == pytest.approx(0.0002)
    assert report.budget_limit_usd == 1.0
    assert report.budget_remaining_usd == pytest.approx(1.0 - 0.0002)


def test_depth_2_bounded_by_max_works(api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    plan = FetchPlan(seeds=seeds_from_ids(["W1001"], "cli"), citing=True, depth=2)
    crawl(OpenAlex(api.openalex, FAST), plan, out)
    assert {"W1008", "W1012", "W1011"} <= set(_ids(out))  # two steps away
    out2 = tmp_path / "w2.jsonl"
    report = crawl(OpenAlex(api.openalex, FAST),
                   FetchPlan(seeds=plan.seeds, citing=True, depth=2, max_works=4), out2)
    assert len(_ids(out2)) == 4 and report.stopped_at_max_works


def test_cursor_paging_across_pages_with_429_and_503(api: Server, tmp_path: Path) -> None:
    api.world.fault("/works?", 429, headers={"Retry-After": "1"})
    api.world.fault("cursor=", 503)
    out = tmp_path / "w.jsonl.gz"
    report = crawl(OpenAlex(api.openalex, FAST), FetchPlan(filters={"language": "en"}, per_page=3),
                   out)
    english = {w for w, work in api.world.works.items() if work["language"] == "en"}
    assert set(_ids(out)) >= english
    pages = [p for p in api.world.log if "filter=language" in p]
    assert len({p.split("cursor=")[1].split("&")[0] for p in pages}) >= 3  # several cursors
    assert not api.world.faults  # both faults were served, and retried past
    assert report.requests >= 3


def test_unknown_doi_and_merged_id_and_work_without_abstract(api: Server,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    seeds = seeds_from_ids(["10.5555/unknown.1", "W999", "W1005"], "cli")
    report = crawl(OpenAlex(api.openalex, FAST), FetchPlan(seeds=seeds, depth=0), out)
    assert report.unresolved == [{"seed": "doi:10.5555/unknown.1", "origin": "cli",
                                  "reason": "not found in OpenAlex"}]
    assert report.merged == {"W999": "W1001"}
    works = {w["id"].rsplit("/", 1)[-1]: w for w in iter_works(out)}
    assert set(works) == {"W1001", "W1005"}
    assert works["W1005"]["abstract_inverted_index"] is None


def test_malformed_json_is_reported_and_the_rest_continue(api: Server, tmp_path: Path) -> None:
    api.world.fault("/works/W1002", 200, body=b'{"id": "https://openalex.org/W1002", ')
    out = tmp_path / "w.jsonl"
    report = crawl(OpenAlex(api.openalex, FAST),
                   FetchPlan(seeds=seeds_from_ids(["W1002", "W1003"], "cli"), depth=0), out)
    assert _ids(out) == ["W1003"]
    assert report.unresolved[0]["seed"] == "W1002"
    assert "not JSON" in report.unresolved[0]["reason"]


def test_a_page_that_stays_broken_stops_the_fetch_and_it_resumes(api: Server,
                                                                 tmp_path: Path) -> None:
    for _ in range(4):  # more 503s than retries on the references of the seed
        api.world.fault("openalex_id", 503)
    out = tmp_path / "w.jsonl.gz"
    plan = FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"], "cli"), citing=True)
    with pytest.raises(FetchError, match="still failing after 3 retries"):
        crawl(OpenAlex(api.openalex, FAST), plan, out)
    assert not out.exists()
    assert out.with_name(out.name + ".progress.json").exists()
    # killed mid-write: a torn last line in the partial output
    partial = out.with_name(out.name + ".partial")
    with open(partial, "ab") as handle:
        handle.write(b'{"id": "https://openalex.org/W10')
    report = crawl(OpenAlex(api.openalex, FAST), plan, out)
    ids = _ids(out)
    assert report.resumed and len(ids) == len(set(ids)) == 8


def test_since_fetches_only_updated_works(api: Server, tmp_path: Path) -> None:
    api.world.works["W1009"]["updated_date"] = "2026-11-01T00:00:00.000000"
    out = tmp_path / "w.jsonl"
    plan = FetchPlan(seeds=seeds_from_ids(["W1001"], "cli"), citing=True, since="2026-10-01")
    report = crawl(OpenAlex(api.openalex, FAST_PAID), plan, out)  # a paid-plan filter
    assert _ids(out) == ["W1009"]
    assert report.skipped_not_updated == 1


def test_search_seed_by_title_and_search_query(api: Server, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    crawl(OpenAlex(api.openalex, FAST), FetchPlan(search="translation", depth=0), out)
    assert set(_ids(out)) == {"W1002", "W1007"}
    by_title = tmp_path / "t.jsonl"
    seed = Seed(None, "Grammaires d'arbres adjoints", "my.bib:z")
    crawl(OpenAlex(api.openalex, FAST), FetchPlan(seeds=[seed], depth=0), by_title)
    assert _ids(by_title) == ["W1004"]
    assert any("filter=title.search:" in p for p in api.world.log)


def test_unreachable_api_and_oversized_answer(api: Server, tmp_path: Path) -> None:
    polite = Polite(retries=0, timeout=2)
    plan = FetchPlan(seeds=seeds_from_ids(["W1001"], "cli"), depth=0)
    with pytest.raises(FetchError, match="unreachable"):
        crawl(OpenAlex("http://127.0.0.1:9", polite), plan, tmp_path / "a.jsonl")
    small = Polite(retries=0, max_bytes=100)
    with pytest.raises(FetchError, match=r"no seed resolved \(of 1\).*over the limit"):
        crawl(OpenAlex(api.openalex, small), plan, tmp_path / "b.jsonl")
    assert not (tmp_path / "b.jsonl").exists()
    two = FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"], "cli"), depth=0)
    api.world.fault("/works/W1001", 200, body=b"x" * 3000)
    report = crawl(OpenAlex(api.openalex, Polite(retries=0, max_bytes=2000)), two,
                   tmp_path / "b.jsonl")
    assert "over the limit" in report.unresolved[0]["reason"] and report.works == 1
    with pytest.raises(FetchError, match="expected an http"):
        OpenAlex("ftp://x")
    crossref = fetch_crossref(["10.5555/test.1005"], tmp_path / "c.json", api.crossref, small)
    assert crossref.works == 0 and "over the limit" in crossref.unresolved[0]["reason"]
    assert fetch_crossref(["10.5555/test.1005"], tmp_path / "d.json", api.crossref,
                          Polite(retries=0)).works == 1


def test_a_fetch_killed_midway_resumes_without_duplicates(api: Server, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    api.world.delay = 0.3
    out = tmp_path / "w.jsonl.gz"
    command = [sys.executable, "-m", "openmsd.cli", "fetch", "openalex", "W1001", "W1002",
               "--citing", "--depth", "2", "--out", str(out), "--api-url", api.openalex]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    partial = out.with_name(out.name + ".partial")
    deadline = time.time() + 60
    while time.time() < deadline and (not partial.exists() or partial.stat().st_size == 0):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not out.exists() and partial.exists()
    api.world.delay = 0.0
    report = crawl(OpenAlex(api.openalex, FAST),
                   FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"], "cli"), citing=True,
                             depth=2), out)
    ids = _ids(out)
    assert report.resumed and len(ids) == len(set(ids))
    clean = tmp_path / "clean.jsonl"
    crawl(OpenAlex(api.openalex, FAST), FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"],
                                                                       "cli"),
                                                 citing=True, depth=2), clean)
    assert set(ids) == set(_ids(clean))


def test_a_refused_key_stops_the_fetch_with_a_clear_error(api: Server, tmp_path: Path) -> None:
    with pytest.raises(FetchError, match=r"401 refused .*Invalid API key.*the API key is wrong"):
        crawl(OpenAlex(api.openalex, FAST, api_key="wrong"),
              FetchPlan(seeds=seeds_from_ids(["W1001", "W1002"], "cli")), tmp_path / "w.jsonl")
    assert "api_key=wrong" in api.world.log[-1]


def test_a_search_answered_404_is_one_line(api: Server, tmp_path: Path) -> None:
    """An --api-url that is not OpenAlex's (every path 404): the search names the URL."""
    from typer.testing import CliRunner

    from openmsd.cli import app

    result = CliRunner().invoke(app, ["fetch", "openalex", "--search", "parsing", "--out",
                                      str(tmp_path / "w.jsonl"), "--api-url",
                                      f"{api.url}/not-openalex", "--retries", "0"])
    assert result.exit_code == 2, result.output
    assert "HTTP 404 (not found)" in result.output and "--api-url" in result.output
    assert "Traceback" not in result.output and "_NotFound" not in result.output
    assert not (tmp_path / "w.jsonl").exists()
