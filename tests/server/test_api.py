"""The JSON API over a real corpus (muse-v3 index): lookups, related, search, recommend,
BibTeX, statistics, validation (422 naming the field), 404s, size limits and errors."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.server.conftest import SCRIPT_TITLE

CONTRACT = ["/healthz", "/api/search", "/api/papers/{key}", "/api/papers/{key}/related",
            "/api/recommend", "/api/stats"]


def test_health_and_openapi_schema_lists_the_contract(client) -> None:
    health = client.get("/healthz").json()
    assert {k: health[k] for k in ("status", "indexed", "reloads")} == {
        "status": "ok", "indexed": {"muse-v3": 58}, "reloads": {"muse-v3": 0}}
    # the fused search's dense member encodes through the server's batching encoder
    before = health["encoded"]["muse-v3"]["texts"]
    assert client.get("/api/search", params={"q": "analyse syntaxique du français"}).json()[
        "model"] == "hybrid"
    assert client.get("/healthz").json()["encoded"]["muse-v3"]["texts"] == before + 1
    paths = client.get("/openapi.json").json()["paths"]
    for path in CONTRACT:
        assert path in paths, path
    assert "/docs" not in paths and client.get("/docs").status_code == 404  # CDN scripts


def test_paper_by_id_and_by_doi(client) -> None:
    paper = client.get("/api/papers/fr-parse").json()
    assert paper["title"] == "Analyse syntaxique en dépendances du français"
    assert paper["language"] == "fr" and paper["english_title"] == "Dependency parsing of French"
    assert paper["references"] == 2 and paper["cited_by"] == 1
    by_doi = client.get("/api/papers/" + quote("https://doi.org/10.1590/2176-4573P59384"))
    assert by_doi.status_code == 200 and by_doi.json()["paper_id"] == "10.1590/2176-4573p59384"


def test_unknown_paper_is_404(client) -> None:
    for url in ("/api/papers/no-such-paper", "/api/papers/no-such-paper/related",
                "/api/papers/..%2F..%2Fetc%2Fpasswd"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "no paper" in response.json()["detail"]


def test_related_explains_and_filters(client) -> None:
    page = client.get("/api/papers/fr-parse/related?k=5").json()
    ids = [r["paper_id"] for r in page["results"]]
    assert "fr-parse" not in ids and page["paper"]["paper_id"] == "fr-parse"
    en = next(r for r in page["results"] if r["paper_id"] == "en-parse")
    assert en["cites"] and "cited by the query paper" in en["why"]
    pt = next(r for r in page["results"] if r["paper_id"] == "pt-parse")
    assert pt["cited_by"] and pt["shared_references"] == 1
    spanish = client.get("/api/papers/fr-parse/related?k=5&lang=es").json()["results"]
    assert spanish and {r["language"] for r in spanish} == {"es"}
    recent = client.get("/api/papers/fr-parse/related?k=20&year_from=2015&year_to=2020").json()
    assert recent["results"] and all(2015 <= r["year"] <= 2020 for r in recent["results"])


def test_pagination_pages_are_consecutive(client) -> None:
    whole = client.get("/api/papers/fr-parse/related?k=6").json()["results"]
    first = client.get("/api/papers/fr-parse/related?k=3").json()
    second = client.get(f"/api/papers/fr-parse/related?k=3&offset={first['next_offset']}").json()
    assert first["next_offset"] == 3 and second["offset"] == 3
    ids = [r["paper_id"] for r in first["results"] + second["results"]]
    assert ids == [r["paper_id"] for r in whole]
    last = client.get("/api/papers/fr-parse/related?k=10&offset=50&include_non_papers=true"
                      ).json()  # 57 others
    assert len(last["results"]) == 7 and last["next_offset"] is None
    assert last["left_out"] == {}
    # by default the 5 records that are not papers (2 errata, 2 editorials, a book review)
    # are left out and counted
    papers_only = client.get("/api/papers/fr-parse/related?k=10&offset=50").json()
    assert len(papers_only["results"]) == 2 and papers_only["next_offset"] is None
    assert papers_only["left_out"] == {"erratum": 2, "editorial": 2, "book-review": 1}
    beyond = client.get("/api/papers/fr-parse/related?k=10&offset=60").json()
    assert beyond["results"] == [] and beyond["next_offset"] is None


def test_search_finds_papers_in_other_languages(client) -> None:
    page = client.get("/api/search", params={"q": "analyse syntaxique en dépendances",
                                             "k": 5}).json()
    assert page["paper"] is None
    top = [r["paper_id"] for r in page["results"]]
    assert top[0] == "fr-parse"
    assert {"es-parse", "pt-parse"} & set(top[:4])  # the same topic in other languages


def test_search_with_a_doi_gives_related_papers(client) -> None:
    page = client.get("/api/search", params={"q": "doi:10.1590/0101-3173.2022.v45n1.p139"}).json()
    assert page["paper"]["paper_id"] == "10.1590/0101-3173.2022.v45n1.p139"
    assert any("cites the query paper" in r["why"] for r in page["results"])


@pytest.mark.parametrize(("url", "field"), [
    ("/api/search?q=x&k=0", ["query", "k"]),
    ("/api/search?q=x&k=101", ["query", "k"]),
    ("/api/search?q=x&offset=-1", ["query", "offset"]),
    ("/api/search?q=x&lang=%3Cb%3E", ["query", "lang", 0]),
    ("/api/search?q=x&year_from=abc", ["query", "year_from"]),
    ("/api/search?q=x&model=nope", ["query", "model"]),
    ("/api/search", ["query", "q"]),
    ("/api/search?q=%20%20", ["query", "q"]),
    ("/api/search?q=" + "x" * 10_001, ["query", "q"]),
    ("/api/papers/fr-parse/related?k=abc", ["query", "k"]),
    ("/api/bibtex", ["query", "id"]),
])
def test_bad_parameters_are_422_naming_the_field(client, url: str, field: list) -> None:
    response = client.get(url)
    assert response.status_code == 422
    assert field in [error["loc"] for error in response.json()["detail"]]
    assert "x" * 100 not in response.text  # the input is not echoed back


def test_recommend_at_citation_markers(client) -> None:
    text = ("Parsing has improved a lot. Transition-based dependency parsers are fast [3]. "
            "Neural machine translation learns to align words (Bahdanau et al., 2015). "
            "We thank the reviewers.")
    body = client.post("/api/recommend", json={"text": text, "k": 3}).json()
    assert [loc["location"] for loc in body["locations"]] == [1, 2]
    first, second = body["locations"]
    assert first["markers"] == ["[3]"] and first["context"][0] == "Parsing has improved a lot."
    assert first["results"][0]["paper_id"] in {"en-parse", "xss"}
    assert "en-mt" in [r["paper_id"] for r in second["results"]]  # context: parsing too
    drivers = first["results"][0]["drivers"]
    assert drivers and {d["sentence"] for d in drivers} <= set(first["context"])
    assert [d["score"] for d in drivers] == sorted((d["score"] for d in drivers), reverse=True)
    plain = client.post("/api/recommend", json={"text": text, "k": 3, "explain": False}).json()
    assert all(r["drivers"] == [] for loc in plain["locations"] for r in loc["results"])
    only = client.post("/api/recommend", json={"text": text, "at": "align"}).json()
    assert [loc["location"] for loc in only["locations"]] == [2]


def test_recommend_rejects_bad_bodies(client) -> None:
    assert client.post("/api/recommend", json={"text": ""}).status_code == 422
    missing = client.post("/api/recommend", json={"txt": "a"})
    assert ["body", "text"] in [e["loc"] for e in missing.json()["detail"]]
    nowhere = client.post("/api/recommend", json={"text": "One sentence.", "at": "zzz"})
    assert nowhere.status_code == 422 and "zzz" in nowhere.text
    assert client.post("/api/recommend", json={"text": "a" * 50_001}).status_code == 422
    huge = client.post("/api/recommend", content=b'{"text": "' + b"a" * 300_000 + b'"}',
                       headers={"content-type": "application/json"})
    assert huge.status_code == 413
    assert client.post("/api/recommend", content=b"{not json",
                       headers={"content-type": "application/json"}).status_code == 422


def test_bibtex_export(client) -> None:
    response = client.get("/api/bibtex?id=fr-parse&id=en-mt&id=unknown")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-bibtex")
    assert response.text.count("@article{") == 2
    assert "title = {Analyse syntaxique en dépendances du français}" in response.text
    assert "author = {Bahdanau, Dzmitry}" in response.text


def test_stats(client) -> None:
    stats = client.get("/api/stats").json()
    assert stats["papers"] == 58 and stats["citations"] == 9
    assert stats["models"]["muse-v3"] == {"indexed": 58, "index": "IndexFlatIP", "default": True}


def test_titles_are_escaped_in_pages(client) -> None:
    page = client.get("/", params={"q": "dependency parsing markup"}).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert SCRIPT_TITLE not in page
    paper = client.get("/papers/xss").text
    assert SCRIPT_TITLE not in paper and "<img src=x" not in paper and "<b>Venue" not in paper
    assert "&lt;b&gt;Venue&lt;/b&gt;" in paper
    echoed = client.get("/", params={"q": '"><script>alert(3)</script>'}).text
    assert "<script>alert(3)" not in echoed


def test_security_headers(client) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


def test_pages_render_on_the_server(client) -> None:
    page = client.get("/?q=traduction+automatique&lang=en")
    assert page.status_code == 200 and "Neural machine translation" in page.text
    assert "Result languages" in page.text  # the chart
    assert client.get("/papers/fr-parse").status_code == 200
    assert client.get("/papers/nope").status_code == 404
    bad = client.get("/?q=x&k=1000")
    assert bad.status_code == 422 and "query.k" in bad.text
    posted = client.post("/recommend", data={"text": "Dependency parsers are fast [1].", "k": 2})
    assert posted.status_code == 200
    assert "<mark>Dependency parsers are fast [1].</mark>" in posted.text
    assert "pointed to most by this sentence</div>" in posted.text  # the sentence, in words
    assert 'title="Dependency parsers are fast [1]. (similarity' in posted.text
    assert posted.text.count('class="drivers-note"') == 1 and "driven by" not in posted.text


def test_static_files_stay_inside_the_app(client) -> None:
    assert client.get("/static/app.js").status_code == 200
    for url in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2Fapp.py",
                "/static/../../../../etc/passwd"):
        assert client.get(url).status_code == 404, url


def test_errors_do_not_leak_stack_traces(client, app, monkeypatch) -> None:
    def broken() -> None:
        raise RuntimeError("secret detail /home/x")

    monkeypatch.setattr(app.state.resources, "stats", broken)
    for url in ("/api/stats", "/"):
        response = client.get(url)
        assert response.status_code == 500
        assert "secret" not in response.text and "Traceback" not in response.text


def test_papers_are_answered_alike_on_the_loop_and_in_the_thread_pool(client, app,
                                                                      monkeypatch) -> None:
    resources = app.state.resources
    assert resources.warmed()  # loaded when the app was created, before any request
    urls = ["/api/papers/fr-parse", "/api/papers/fr-parse/related?k=5&lang=es&lang=en",
            "/api/papers/no-such-paper/related"]
    on_loop = [client.get(url) for url in urls]
    monkeypatch.setattr(resources, "warmed", lambda: False)  # as while a new build loads
    in_pool = [client.get(url) for url in urls]
    assert [r.status_code for r in on_loop] == [r.status_code for r in in_pool] == [200, 200, 404]
    assert [r.json() for r in on_loop] == [r.json() for r in in_pool]


def test_a_long_manuscript_gets_every_location_from_recommend(served_corpus) -> None:
    from openmsd.corpus import Corpus
    from openmsd.models import load_model
    from openmsd.search import MAX_LOCATIONS, CitationRequest, SearchService

    text = " ".join(f"Dependency parsers are fast in experiment {n} [{n}]." for n in range(60))
    service, encoder = SearchService(Corpus(served_corpus)), load_model("muse-v3")
    every = service.recommend(CitationRequest(text, "muse-v3", 2, max_locations=None), encoder)
    assert [loc.location for loc in every] == list(range(60))  # two batches of locations
    assert all(loc.results for loc in every)
    first = service.recommend(CitationRequest(text, "muse-v3", 2), encoder)
    assert len(first) == MAX_LOCATIONS and first == every[:MAX_LOCATIONS]


def test_results_carry_their_rank_and_no_relevance_without_a_trained_ranker(client) -> None:
    first = client.get("/api/papers/fr-parse/related?k=3").json()["results"]
    second = client.get("/api/papers/fr-parse/related?k=3&offset=3").json()["results"]
    assert [r["rank"] for r in first + second] == [1, 2, 3, 4, 5, 6]
    scores = [r["score"] for r in first + second]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    # no 'openmsd train ranker' here: no probability of a link is claimed, none a share
    assert all(r["relevance"] is None for r in first + second)
    page = client.get("/papers/fr-parse").text
    assert "unrated" in page and "relevance 100%" not in page


def test_a_calibrated_ranker_gives_each_result_the_probability_of_a_link(
        served_corpus, tmp_path) -> None:
    import shutil

    from fastapi.testclient import TestClient

    from openmsd.corpus import Corpus
    from openmsd.server import create_app
    from tests.server.conftest import MODEL

    corpus = Corpus(shutil.copytree(served_corpus, tmp_path / "c", symlinks=True))
    members = ["bm25@same", MODEL]
    head = {"members": members, "method": "zscore", "weights": [1.0, 1.0],
            "calibration": {"x": [-1.0, 2.0, 6.0], "y": [0.02, 0.3, 0.9]}}
    corpus.layout.ranker.parent.mkdir(exist_ok=True)
    corpus.layout.ranker.write_text(json.dumps({"hybrid": {
        "members": members, "method": "model", "tuned": True, "paper": head,
        "free_text": head}}))
    with TestClient(create_app(corpus.root, [MODEL], watch_s=None),
                    raise_server_exceptions=False) as client:
        answer = client.get("/api/papers/fr-parse/related?k=6&model=hybrid")
        assert answer.status_code == 200, answer.text[:300]
        found = answer.json()["results"]
        assert [r["rank"] for r in found] == [1, 2, 3, 4, 5, 6]
        relevance = [r["relevance"] for r in found]
        assert all(r is not None and 0.0 <= r <= 1.0 for r in relevance), relevance
        assert relevance == sorted(relevance, reverse=True) and relevance[0] < 1.0
        assert len(set(relevance)) > 1  # a probability each, not a share of the first
        page = client.get("/papers/fr-parse?model=hybrid").text
        assert f"relevance {round(100 * relevance[0])}%" in page


@pytest.mark.parametrize("path", ["/api/recommend", "/api/related"])
def test_a_post_route_asked_with_get_says_post_and_shows_a_body_that_works(client, path) -> None:
    answer = client.get(path)
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    detail = answer.json()["detail"]
    assert detail.startswith(f"GET {path}: this endpoint takes POST only") and "curl" in detail
    body = json.loads(detail.split(" -d '", 1)[1].split("' ", 1)[0])
    assert client.post(path, json=body).status_code == 200
    schema = client.get("/openapi.json").json()["paths"][path]
    assert set(schema) == {"post"} and "POST only" in schema["post"]["description"]
    examples = schema["post"]["requestBody"]["content"]["application/json"]["examples"]
    assert len(examples) == 2
    for example in examples.values():
        answer = client.post(path, json=example["value"])
        assert answer.status_code == 200 and answer.json()["locations" if "recommend" in path
                                                          else "results"], example
