"""The translation and HTTP backends, against Debian's Apertium and a real local
OpenAI-compatible server (openmsd.enrich.server, uvicorn on a loopback port) around it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openmsd.corpus.store import Corpus
from openmsd.corpus.summaries import read_summaries
from openmsd.enrich.generator import GeneratorError
from openmsd.enrich.methods import generate_checked
from openmsd.enrich.openai_http import OpenAICompatible
from openmsd.enrich.run import enrich
from tests.enrich.conftest import needs_apertium
from tests.server.conftest import free_port, serve_in_thread


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1`` serving Apertium (passages taken as Spanish)."""

    from openmsd.enrich.apertium import Apertium
    from openmsd.enrich.server import create_app

    with serve_in_thread(create_app(Apertium(), language="es")) as url:
        yield f"{url}/v1"


@needs_apertium
def test_apertium_translates_spanish_and_says_what_it_cannot():
    from openmsd.enrich.apertium import Apertium

    answers = Apertium().generate("translate", [
        "Presentamos un analizador sintáctico para el español.",
        "Nous présentons un analyseur."], ["es", "fr"], 64)
    assert answers[0].text == "We present a syntactic analyser for the Spanish."
    assert answers[1].text is None and "no fr->en pair" in (answers[1].error or "")
    summary = Apertium().generate("summary64", ["Presentamos."], ["es"], 64)[0]
    assert summary.text is None and "only translates" in (summary.error or "")


@needs_apertium
def test_topn_translates_what_the_source_has_no_english_for(corpus_dir):
    from openmsd.enrich.apertium import Apertium

    corpus = Corpus(corpus_dir)
    result = enrich(corpus, "topn", 64, Apertium())
    assert (result.enriched, result.no_abstract) == (2, 1)
    assert result.failed_reasons == {"apertium has no fr->en pair (it has ca, es, gl)": 1}
    rows = {r["paper_id"]: r for r in read_summaries(corpus, "topn", 64).to_pylist()}
    assert rows["es-parse"]["source"] == "apertium"
    assert rows["es-parse"]["summary"].startswith("We present a syntactic analyser of "
                                                  "dependencies for the Spanish")
    assert rows["fr-parse"]["source"] == "author"


@needs_apertium
def test_http_backend_against_a_real_server(endpoint, corpus_dir):
    backend = OpenAICompatible(endpoint)
    assert backend.name == "http:apertium"
    corpus = Corpus(corpus_dir)
    result = enrich(corpus, "topn", 64, backend)
    rows = {r["paper_id"]: r for r in read_summaries(corpus, "topn", 64).to_pylist()}
    assert rows["es-parse"]["source"] == "http:apertium"
    assert "syntactic analyser" in rows["es-parse"]["summary"]
    # the server reads every passage as Spanish: the French abstract comes back French
    assert result.failed_reasons == {"not English (fr)": 1}
    assert result.enriched == 2


@needs_apertium
def test_rejected_output_is_retried_then_failed(endpoint):
    backend = OpenAICompatible(endpoint)
    answers = generate_checked(backend, "translate", [
        "Presentamos un analizador sintáctico de dependencias para el español.",
        "Cet article décrit un système de traduction automatique du français."],
        ["es", "fr"], 64, attempts=3)
    assert answers[0][1] is None
    assert answers[1][1] == "not English (fr)"


@needs_apertium
def test_http_errors_are_failures_not_summaries(endpoint):
    backend = OpenAICompatible(endpoint, retries=0)
    answer = backend.generate("summary64", ["Presentamos."], ["es"], 64)[0]
    assert answer.text is None and answer.error.startswith("HTTP 400")


def test_unreachable_endpoint_fails_fast_with_its_url():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(GeneratorError, match=f"cannot reach the endpoint {url}/models"):
        OpenAICompatible(url)  # how fast: benchmarks/wall_times.py
