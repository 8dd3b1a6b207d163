"""Ranker names are parsed once (:mod:`openmsd.rank.spec`): the grammar round-trips through
``str()``, the old backend spelling ``NAME@onnx`` parses to the same spec (said on stderr only
when typed), bad names name their bad part, and an unknown name lists what the corpus can rank
with."""

from __future__ import annotations

import json

import pytest

from openmsd.corpus import Corpus
from openmsd.rank import (
    Papers,
    RankerSpec,
    RankerSpecError,
    UnknownScorerError,
    is_builtin,
    is_dense,
    leaves,
    load_scorer,
)
from openmsd.rank.spec import parse

PAPERS = Papers(["fr1", "fr2", "en1", "en2"],
                ["apprentissage des langues", "traduction automatique", "language learning",
                 "machine translation"],
                ["fr", "fr", "en", "en"])

CANONICAL = [
    "bm25",
    "bm25@same",
    "bm25-en@cross",
    "minilm-en@en",
    "e5-small-multilingual:onnx",
    "minilm-en:onnx@en",
    "bm25@same~prf",
    "co-citation~links",
    "bm25~prf~links",
    "e5-small-multilingual+llm64",
    "e5-small-multilingual+llm64:onnx@same~prf",
    "bm25@same+e5-small-multilingual:onnx+bm25-en@cross",
    "0.7*bm25+0.3*minilm-en:torch",
    "hybrid",
    "hybrid~prf+ppr",
    "two-stage:minilm-en",
    "fused:e5-small-multilingual",
    "sentence-transformers/all-MiniLM-L6-v2",
    "./models/my@model",
    "~/models/x",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_names_round_trip(text):
    spec = parse(text)
    assert str(spec) == text
    assert parse(str(spec)) == spec


def test_the_parts_of_a_name():
    spec = parse("e5-small-multilingual+llm64:onnx@same~prf~links")
    assert (spec.model, spec.enrichment, spec.backend, spec.language, spec.modifiers) == (
        "e5-small-multilingual", "llm64", "onnx", "same", ("prf", "links"))
    assert spec.stored_model == "e5-small-multilingual+llm64"
    assert spec.vector_key == "e5-small-multilingual+llm64@onnx"  # the on-disk name
    assert str(spec.inner) == "e5-small-multilingual+llm64:onnx@same~prf"
    assert str(spec.bare) == "e5-small-multilingual+llm64:onnx"
    fusion = parse("0.5*bm25@same+0.5*minilm-en")
    assert fusion.is_fusion and fusion.weights == (0.5, 0.5)
    assert [str(m) for m in fusion.members] == ["bm25@same", "minilm-en"]
    assert not parse("minilm-en+llm64").is_fusion  # an enrichment, not a member
    assert parse("minilm-en:torch").vector_key == "minilm-en"
    assert RankerSpec.parse("bm25") == RankerSpec(model="bm25")


@pytest.mark.parametrize(("old", "new"), [
    ("e5-small-multilingual@onnx", "e5-small-multilingual:onnx"),
    ("minilm-en@onnx@en", "minilm-en:onnx@en"),
    ("minilm-en@torch", "minilm-en:torch"),
    ("bm25@same+e5-small-multilingual@onnx", "bm25@same+e5-small-multilingual:onnx"),
    ("e5-small-multilingual+llm64@onnx~prf", "e5-small-multilingual+llm64:onnx~prf"),
])
def test_old_spellings_parse_to_the_same_spec(old, new, capsys):
    assert parse(old) == parse(new)
    assert str(parse(old)) == new
    assert capsys.readouterr().err == ""  # read, not typed: silent


def test_a_typed_old_spelling_is_named_once_on_stderr(capsys):
    parse("muse-v3@onnx@fr", typed=True)
    parse("muse-v3@onnx@fr", typed=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["openmsd: 'muse-v3@onnx@fr' is an old spelling, deprecated: write "
                     "'muse-v3:onnx@fr' (NAME:BACKEND)"]
    parse("muse-v3:onnx@fr", typed=True)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty ranker name"),
    ("bm25+", r"'bm25\+': member 2 is empty"),
    ("+bm25", "member 1 is empty"),
    ("bm25@", "'bm25@': ends with '@': expected a language"),
    ("@en", "'@en': no model before '@'"),
    ("bm25~prf@same", r"'bm25~prf@same': the modifiers come last \(bm25@same~prf\)"),
    ("minilm-en@en:onnx", r"the backend comes before the language \(minilm-en:onnx@en\)"),
    ("minilm-en:onnx@torch", "two backends"),
    ("0.5*bm25+minilm-en", "give every member a weight"),
    ("0.5*bm25", "a weight needs a fusion"),
    ("bm25+x*minilm-en", r"'x\*minilm-en' in 'bm25\+x\*minilm-en': bad weight"),
])
def test_bad_names_name_the_bad_part(text, message):
    with pytest.raises(RankerSpecError, match=message):
        parse(text)


def test_a_bad_name_is_an_unknown_scorer():
    with pytest.raises(UnknownScorerError, match="member 2 is empty"):
        load_scorer("bm25+", PAPERS)


def test_old_and_new_spellings_load_the_same_scorer():
    old = load_scorer("bm25@same+bm25-en~prf", PAPERS)
    assert [m.name for m in old.members] == ["bm25@same", "bm25-en~prf"]
    assert is_builtin("bm25~prf") and is_builtin("bm25+bm25-en") and not is_builtin("bm25@same")
    assert is_dense("minilm-en:onnx@en") and is_dense("minilm-en@onnx")
    assert not is_dense("bm25@same") and not is_dense("hybrid")
    assert is_builtin("bm25+") and not is_dense("bm25+")  # no model: no traceback either


def test_needs_a_corpus_is_one_message():
    for name in ("ppr", "authors", "author-ppr", "bm25~links"):
        with pytest.raises(UnknownScorerError, match=rf"scorer '{name}' reads .*: it needs a "
                                                     r"corpus; expected one of random, bm25"):
            load_scorer(name, PAPERS)


def _corpus_with_vectors(root, *keys):
    for key in keys:
        (root / "vectors" / key).mkdir(parents=True)
        (root / "vectors" / key / "part-00000.parquet").write_bytes(b"")
    return Corpus(root)


def test_an_unknown_name_lists_what_the_corpus_can_rank_with(tmp_path):
    corpus = _corpus_with_vectors(tmp_path, "minilm-en@onnx", "e5-small-multilingual")
    papers = Papers(PAPERS.ids, PAPERS.texts, PAPERS.languages, corpus=corpus)
    with pytest.raises(UnknownScorerError) as error:
        load_scorer("bm52", papers)
    message = str(error.value)
    assert message.startswith("unknown ranker 'bm52'; expected one of random, bm25, bm25-en")
    for name in ("minilm-en:onnx", "e5-small-multilingual", "co-citation", "ppr",
                 "authors", "hybrid", "hybrid-graph", "NAME:BACKEND", "NAME@LANG"):
        assert name in message
    assert "minilm-en@onnx" not in message  # the stored vectors, as a name is typed


def test_stored_rankers_read_old_spellings_silently(tmp_path, capsys):
    corpus = _corpus_with_vectors(tmp_path, "minilm-en@onnx")
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "ranker.json").write_text(json.dumps({"hybrid": {
        "members": ["bm25@same", "e5-small-multilingual@onnx", "minilm-en@onnx@en"],
        "weights": [1.0, 1.0, 1.0], "method": "zscore", "tuned": True}}))
    found = leaves("hybrid", corpus)
    assert [str(leaf) for leaf in found] == ["bm25@same", "e5-small-multilingual:onnx",
                                             "minilm-en:onnx@en"]
    assert [leaf.bare.vector_key for leaf in found[1:]] == ["e5-small-multilingual@onnx",
                                                            "minilm-en@onnx"]
    assert capsys.readouterr().err == ""
