"""Related to a whole library: the API (POST /api/related), the page (/library) and exports."""

from __future__ import annotations

import bibtexparser
import rispy


def test_post_related_library(client) -> None:
    body = {"positive": ["fr-parse", "es-parse"], "negative": ["fr-mt"], "k": 5}
    answer = client.post("/api/related", json=body)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    ids = [r["paper_id"] for r in found["results"]]
    assert not {"fr-parse", "es-parse", "fr-mt"} & set(ids)
    assert {"pt-parse", "en-parse"} & set(ids[:3])  # the parsing papers, across languages
    assert all(r["seeds"] and set(r["seeds"]) <= {"fr-parse", "es-parse"}
               for r in found["results"])
    assert client.post("/api/related", json={"positive": ["nope"]}).status_code == 404
    assert client.post("/api/related", json={"positive": []}).status_code == 422


def test_library_page_escapes_and_names_the_seeds(client) -> None:
    page = client.get("/library?id=fr-parse&id=es-parse&id=xss&k=5")
    assert page.status_code == 200
    assert "Related to these 3 papers" in page.text
    assert "<script>alert(1)</script>" not in page.text


def test_export_formats_by_parameter_and_accept(client) -> None:
    ris = client.get("/api/bibtex?id=fr-parse&id=en-mt&format=ris")
    assert ris.headers["content-type"].startswith("application/x-research-info-systems")
    assert [e["id"] for e in rispy.loads(ris.text)] == ["fr-parse", "en-mt"]
    csl = client.get("/api/bibtex?id=en-mt",
                     headers={"Accept": "application/vnd.citationstyles.csl+json"})
    assert csl.json()[0]["author"][0] == {"family": "Bahdanau", "given": "Dzmitry"}
    bib = client.get("/api/bibtex?id=en-mt&format=bib")
    assert bibtexparser.loads(bib.text).entries[0]["ID"] == "bahdanau2015neural"
