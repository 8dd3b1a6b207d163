"""Vectors keyed by model and backend (one ONNX build each): the model's ONNX backend by
default where it has one, never mixed; a corpus keeps the build its vectors were made with."""

from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from openmsd.cli import SAMPLE, app
from openmsd.corpus import Corpus
from openmsd.ingest import ingest
from openmsd.models import choose_backend, default_backend, load_model
from openmsd.rank import load_encoder
from openmsd.vectors import stored_backends, vector_key

runner = CliRunner()
MODEL = "minilm-en"  # small, and it has both backends
ARTICLE = "10.1590/0101-3173.2022.v45n1.p139"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("backends") / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    return Corpus(root)


def _embed(corpus: Corpus, *options: str) -> dict:
    result = runner.invoke(app, ["embed", str(corpus.root), "--model", MODEL, "--json",
                                 *options])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_onnx_is_the_default_backend_where_the_model_has_one():
    pytest.importorskip("onnxruntime")
    assert default_backend("e5-small-multilingual") == "onnx-sq8"
    assert default_backend("minilm-en") == "onnx"
    assert default_backend("muse-v3") == "torch" and default_backend("bm25") == "torch"
    assert vector_key("e5-small-multilingual", "onnx") == "e5-small-multilingual@onnx"


def test_the_two_backends_are_stored_apart_and_the_corpus_backend_is_reused(corpus):
    pytest.importorskip("onnxruntime")
    torch_run = _embed(corpus, "--backend", "torch")
    assert torch_run["embedded"] == 50 and torch_run["directory"].endswith(f"vectors/{MODEL}")
    again = _embed(corpus)  # no --backend: the corpus's torch vectors are re-used
    assert again["embedded"] == 0 and again["cached"] == 50
    assert stored_backends(corpus, MODEL) == ["torch"]
    assert runner.invoke(app, ["index", "build", str(corpus.root), "--model", MODEL]
                         ).exit_code == 0
    refused = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                  "--backend", "onnx"])
    assert refused.exit_code == 2
    assert "indexed with backend torch only, not onnx" in " ".join(refused.output.split())
    onnx_run = _embed(corpus, "--backend", "onnx")  # its own store, never added to torch's
    assert onnx_run["embedded"] == 50 and onnx_run["directory"].endswith(f"{MODEL}@onnx")
    assert set(stored_backends(corpus, MODEL)) == {"torch", "onnx"}
    for backend in ("torch", "onnx"):
        built = runner.invoke(app, ["index", "build", str(corpus.root), "--model", MODEL,
                                    "--backend", backend])
        assert built.exit_code == 0 and "50 papers indexed" in built.output
    assert choose_backend(corpus, MODEL, what="index") == "onnx"  # the newest index
    results = {}
    for backend in ("torch", "onnx"):
        found = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                    "--backend", backend, "-k", "5", "--json"])
        assert found.exit_code == 0, found.output
        results[backend] = [r["paper_id"] for r in json.loads(found.stdout)]
    assert len(set(results["torch"]) & set(results["onnx"])) >= 3  # int8 ranks much alike


def test_an_empty_result_says_why(corpus):
    found = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                "--backend", "torch", "--year", "1800"])
    assert found.exit_code == 0, found.output
    assert "no results: no paper matches --year 1800-1800 (its papers are from" in \
        " ".join(found.output.split())
    # a language no paper is in can give nothing: an error, as the API's 422
    unknown = runner.invoke(app, ["related", str(corpus.root), ARTICLE, "--model", MODEL,
                                  "--backend", "torch", "--lang", "xx"])
    assert unknown.exit_code == 2
    assert "is in 'xx'; its languages: en, es, pt" in " ".join(unknown.output.split())


def test_a_corpus_keeps_the_build_its_vectors_were_made_with(tmp_path, monkeypatch):
    """A corpus embedded with one ONNX build is embedded on and queried with that build after
    the model's default changed; a new corpus gets the new default, stored apart."""
    pytest.importorskip("onnxruntime")
    from openmsd.models import registry

    ingest([SAMPLE / "scielo-jats"], tmp_path / "old")
    old = Corpus(tmp_path / "old")
    first = _embed(old)  # minilm-en's default: onnx, the int8 build
    assert first["directory"].endswith(f"{MODEL}@onnx") and first["embedded"] == 50
    monkeypatch.setitem(registry.MODELS, MODEL,
                        dataclasses.replace(registry.MODELS[MODEL], onnx_backend="onnx-q4"))
    assert default_backend(MODEL) == "onnx-q4"
    again = _embed(old)  # the corpus's own build, not the new default: nothing re-embedded
    assert again["directory"].endswith(f"{MODEL}@onnx") and again["cached"] == 50
    assert stored_backends(old, MODEL) == ["onnx"]
    query = load_encoder(vector_key(MODEL, choose_backend(old, MODEL)))
    assert query.precision == "qint8"  # queries match the stored int8 vectors
    ingest([SAMPLE / "scielo-jats"], tmp_path / "new")
    new = _embed(Corpus(tmp_path / "new"))
    assert new["directory"].endswith(f"{MODEL}@onnx-q4") and new["embedded"] == 50
    assert load_model(MODEL, "onnx-q4").precision == "q4"
