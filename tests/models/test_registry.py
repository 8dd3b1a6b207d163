"""Every registered model loads offline and embeds; unknown names list the known ones."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.models import BM25, MODELS, UnknownModelError, load_model, paper_input

FR = "Nous présentons un analyseur syntaxique robuste pour le français écrit."
EN = ["We present a robust syntactic parser for written French.",
      "Protein folding predicted with deep neural networks."]


@pytest.mark.parametrize("name", ["muse-v3", "minilm-en", "e5-small-multilingual"])
def test_dense_models_load_offline_and_embed_normalised_vectors(name, tmp_path, monkeypatch):
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("OPENMSD_CACHE", str(tmp_path))
    model = load_model(name)
    assert model.dim == MODELS[name].dim
    query, docs = model.encode([FR], "query"), model.encode(EN)
    assert query.shape == (1, model.dim) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-4)
    scores = (query @ docs.T)[0]
    assert scores[0] > scores[1]  # the translation beats an unrelated paper


def test_bm25_scores_a_fitted_collection():
    model = load_model("bm25")
    assert isinstance(model, BM25)
    scores = model.fit(EN).scores(["robust parser for French", "zzz unknown words"])
    assert scores.shape == (2, 2) and scores[0, 0] > scores[0, 1] and not scores[1].any()
    with pytest.raises(ValueError, match="call fit"):
        BM25().scores(["x"])


def test_unknown_models_list_the_registered_ones():
    with pytest.raises(UnknownModelError, match="expected one of e5-small-multilingual"):
        load_model("specter2")


def test_input_formatting_follows_openmsd():
    assert paper_input("T", "A", summary="S") == "Title: T. Abstract: (S) A"
    assert paper_input("", "") == ""


def test_models_list_cli():
    result = CliRunner().invoke(app, ["models", "list", "--json"])
    names = [m["name"] for m in json.loads(result.stdout)]
    assert names == list(MODELS)


@pytest.mark.parametrize("language", ["en", "fr", "es", "pt", "de", "it", "nl", "ru", "sv",
                                      "da", "nb", "tr", "zh", "ko", "ca", "und"])
def test_bm25_analysis_is_bm25s_tokenize(language):
    """The analyser gives what bm25s.tokenize gives with the language's stop words and
    stemmer (every bm25s stop-word list as text, so a wrong list fails)."""
    import bm25s
    import bm25s.stopwords

    from openmsd.models.bm25 import STOPWORDS, analyse_many, stemmer_of

    texts = [*EN, FR, "", "A b", "L'été d'ÉTÉ, ab_cd 12 3.5 Ünïcode naïve",
             *(" ".join(getattr(bm25s.stopwords, n)) for n in dir(bm25s.stopwords)
               if n.startswith("STOPWORDS_"))]
    stemmer = stemmer_of(language)
    expected = bm25s.tokenize(texts, stopwords=STOPWORDS.get(language, []),
                              stemmer=stemmer.stemWords if stemmer else None,
                              show_progress=False, return_ids=False)
    assert analyse_many(texts, [language] * len(texts)) == expected
