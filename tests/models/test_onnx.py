"""The ONNX Runtime path: e5-small-multilingual exported and int8-quantised into a temporary
cache, compared with the PyTorch encoder on multilingual texts; the error for other models."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.models import UnsupportedBackendError, load_model

TEXTS = [
    "Nous proposons une méthode d'alignement de phrases pour des corpus parallèles.",
    "We propose a sentence alignment method for parallel corpora.",
    "Title: Analyse syntaxique du français. Abstract: Nous présentons un analyseur robuste, "
    "évalué sur un corpus arboré de textes journalistiques et littéraires.",
    "Title: Parsing French. Abstract: We present a robust parser evaluated on a treebank of "
    "newspaper and literary texts.",
    "Die maschinelle Übersetzung von Fachtexten bleibt eine Herausforderung.",
    "La traducción automática de textos técnicos sigue siendo un desafío.",
    "自然言語処理のための多言語モデルを評価する。",
    "Оценка многоязычных моделей для обработки естественного языка.",
    "تحليل المشاعر في النصوص العربية باستخدام الشبكات العصبية",
    "  Espaces   multiples, tabulations\tet accents : àéîõü — «guillemets» ½ ﬁ.  ",
    "Reconnaissance d'entités nommées dans des comptes rendus médicaux.",
    "Named entity recognition in clinical reports.",
    "Un modèle de langue pour la détection automatique des discours haineux en ligne.",
    "Protein folding predicted with deep neural networks.",
    "Étiquetage morphosyntaxique de l'occitan avec peu de données annotées.",
    "Speech recognition for low-resource languages using self-supervised pretraining.",
    "Résumé automatique de documents longs : une approche extractive puis abstractive. " * 8,
    "Lexique",
    "Quels corpus pour l'apprentissage des plongements de phrases multilingues ?",
    "",
]


@pytest.fixture(scope="module")
def encoders(tmp_path_factory: pytest.TempPathFactory):
    """The torch and ONNX int8 encoders of e5, built in a temporary cache (about 30 s)."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENMSD_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield load_model("e5-small-multilingual"), load_model("e5-small-multilingual", "onnx")


@pytest.mark.parametrize("kind", ["query", "passage"])
def test_default_onnx_vectors_agree_with_torch(encoders, kind):
    torch_encoder, onnx_encoder = encoders
    assert onnx_encoder.precision == "qint8" and onnx_encoder.threads >= 1
    expected = torch_encoder.encode(TEXTS, kind)
    got = onnx_encoder.encode(TEXTS, kind, batch_size=8)
    assert got.shape == expected.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-4)
    cosine = (got * expected).sum(axis=1)
    # measured: mean 0.997, min 0.991 (the empty text); a batch's int8 activation scale is
    # shared by its texts, so vectors also move (cos ≥ 0.99) with their batchmates
    assert cosine.mean() >= 0.99 and cosine.min() >= 0.97, cosine


def test_batches_give_the_same_bits_on_one_thread_or_several(encoders):
    from openmsd.models import OnnxEncoder

    _, onnx_encoder = encoders
    model_dir = onnx_encoder.directory.parents[1]
    texts = TEXTS * 3
    alone = OnnxEncoder(model_dir, threads=1, passage_prefix="passage: ")
    several = OnnxEncoder(model_dir, threads=3, passage_prefix="passage: ")
    expected = alone.encode(texts, batch_size=1)  # batches of 128 tokens: many of them
    assert np.array_equal(several.encode(texts, batch_size=1), expected)
    assert np.array_equal(onnx_encoder.encode(texts, batch_size=1), expected)


def test_onnx_encoder_keeps_the_input_order_and_the_prefixes(encoders):
    _, onnx_encoder = encoders
    forward = onnx_encoder.encode(TEXTS, batch_size=32)  # one batch: same padding both ways
    backward = onnx_encoder.encode(TEXTS[::-1], batch_size=32)[::-1]
    assert np.allclose(forward, backward, atol=1e-5)
    assert onnx_encoder.encode([]).shape == (0, 384)
    query = onnx_encoder.encode(TEXTS[:1], "query")
    assert not np.allclose(query, forward[:1], atol=1e-3)  # "query: " vs "passage: "
    vectors = onnx_encoder.encode([TEXTS[1], TEXTS[13]])  # its translation, an unrelated text
    scores = (query @ vectors.T)[0]
    assert scores[0] > scores[1]

def test_onnx_build_is_cached_and_follows_the_model_files(encoders):
    from openmsd.models.backends.onnx import ensure_onnx, is_current

    _, onnx_encoder = encoders
    directory: Path = onnx_encoder.directory
    model_dir = directory.parents[1]
    assert directory.name in ("qint8", "qint8-avx2") and directory.parent.name == "onnx"
    built = (directory / "model.onnx").stat().st_mtime_ns
    assert ensure_onnx(model_dir) == directory  # reused, not rebuilt
    assert (directory / "model.onnx").stat().st_mtime_ns == built
    assert (directory / "model.onnx").stat().st_size < 150e6  # embeddings quantised too
    assert not list(directory.parent.glob(".*"))  # no temporary directory left behind
    config = model_dir / "config.json"
    stat = config.stat()
    os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    try:
        assert not is_current(directory, model_dir, "qint8")  # changed in place: rebuild
    finally:
        os.utime(config, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert is_current(directory, model_dir, "qint8")
    assert not is_current(directory, model_dir, "q4")


@pytest.mark.parametrize("name", ["bm25", "muse-v3"])
def test_models_without_an_onnx_path_say_which_have_one(name):
    with pytest.raises(UnsupportedBackendError, match="e5-small-multilingual, minilm-en"):
        load_model(name, backend="onnx")
    assert issubclass(UnsupportedBackendError, ValueError)


def test_unknown_backends_are_refused():
    with pytest.raises(ValueError, match="expected one of torch, onnx"):
        load_model("e5-small-multilingual", backend="tensorrt")


def test_embed_cli_reports_an_unsupported_backend(tmp_path):
    result = CliRunner().invoke(app, ["embed", str(tmp_path), "--model", "bm25",
                                      "--backend", "onnx"])
    assert result.exit_code == 2
    assert "bm25 is not a dense model" in result.output


def test_a_trained_directory_keeps_its_prompts_on_onnx(tiny_model, tmp_path, monkeypatch):
    from sentence_transformers import SentenceTransformer

    monkeypatch.setenv("OPENMSD_CACHE", str(tmp_path / "cache"))
    model = SentenceTransformer(str(tiny_model))
    model.prompts = {"query": "query: ", "passage": "passage: "}  # as openmsd train saves e5
    model.save(str(tmp_path / "trained"))
    onnx_encoder = load_model(str(tmp_path / "trained"), "onnx")
    assert onnx_encoder.prefixes == {"query": "query: ", "passage": "passage: "}
    torch_encoder = load_model(str(tmp_path / "trained"))
    for kind in ("query", "passage"):
        cosine = (onnx_encoder.encode(TEXTS[:4], kind) * torch_encoder.encode(TEXTS[:4], kind))
        assert cosine.sum(axis=1).min() > 0.95


def test_a_new_process_loads_the_saved_optimised_graph_and_tokenizer(encoders):
    """The graph ONNX Runtime optimised is saved once beside the build; an encoder built from it
    (as the next process builds one) gives the same vectors, and its tokenizer (the tokenizers
    library, without transformers) the same ids as the transformers tokenizer saved with it."""
    from transformers import AutoTokenizer

    from openmsd.models import OnnxEncoder

    _, onnx_encoder = encoders
    saved = list(onnx_encoder.directory.glob("model.optimized-*.onnx"))
    assert len(saved) == 1
    again = OnnxEncoder(onnx_encoder.directory.parents[1], "e5", precision="qint8",
                        query_prefix="query: ", passage_prefix="passage: ",
                        cache_dir=onnx_encoder.directory.parent)
    assert list(onnx_encoder.directory.glob("model.optimized-*.onnx")) == saved
    np.testing.assert_array_equal(again.encode(TEXTS, "query"),
                                  onnx_encoder.encode(TEXTS, "query"))
    reference = AutoTokenizer.from_pretrained(str(onnx_encoder.directory))
    texts = ["passage: " + t for t in TEXTS]
    assert again.tokenizer.encode(texts) == reference(
        texts, truncation=True, max_length=again.max_length)["input_ids"]
