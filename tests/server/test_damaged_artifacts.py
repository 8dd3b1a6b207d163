"""A damaged ``ranker.json`` (edited to nonsense, or holding weights that are not finite) is
refused with one line naming the file and ``openmsd train ranker``: exit 2 in the command line, 503
with that line in the server, never a traceback, a 500 or ranking without it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus
from openmsd.rank import fusion_spec
from tests.server.conftest import MODEL

runner = CliRunner()
GOOD = {"hybrid": {"members": ["bm25@same", MODEL], "weights": [1.0, 2.0],
                   "method": "zscore", "tuned": True}}
DAMAGED = {
    "not JSON": "{\"hybrid\": [",
    "a list": "[1, 2]",
    "an entry of the wrong type": json.dumps({"hybrid": "bm25"}),
    "members not names": json.dumps({"hybrid": {"members": [1, 2], "weights": [1, 1]}}),
    "an unknown method": json.dumps({"hybrid": {**GOOD["hybrid"], "method": "vote"}}),
    "weights of the wrong count": json.dumps({"hybrid": {**GOOD["hybrid"], "weights": [1.0]}}),
    "NaN weights": json.dumps({"hybrid": {**GOOD["hybrid"], "weights": [float("nan"), 1.0]}}),
    "infinite weights": json.dumps({"hybrid": {**GOOD["hybrid"],
                                               "weights": [1.0, float("inf")]}}),
    "weights of text": json.dumps({"hybrid": {**GOOD["hybrid"], "weights": ["a", "b"]}}),
    "a fallback of strangers": json.dumps({"hybrid": {**GOOD["hybrid"], "fallbacks": [
        {"silent": ["authors"], "members": ["bm25"], "weights": [1.0]}]}}),
}


@pytest.fixture
def corpus(served_corpus: Path, tmp_path: Path) -> Corpus:
    return Corpus(shutil.copytree(served_corpus, tmp_path / "c", symlinks=True))


def test_a_sound_ranker_file_is_read(corpus: Corpus) -> None:
    corpus.layout.ranker.write_text(json.dumps(GOOD))
    assert list(fusion_spec("hybrid", corpus).weights) == [1.0, 2.0]


@pytest.mark.parametrize("what", list(DAMAGED))
def test_a_damaged_ranker_file_is_named_in_the_command_line(corpus: Corpus, what: str) -> None:
    corpus.layout.ranker.write_text(DAMAGED[what])
    with pytest.raises(ArtifactError, match=r"ranker\.json"):
        fusion_spec("hybrid", corpus)
    for args in (["search", str(corpus.root), "dependency parsing"],
                 ["related", str(corpus.root), "en-parse", "--model", "hybrid"]):
        result = runner.invoke(app_cli(), args)
        assert result.exit_code == 2, (what, result.output)
        lines = result.output.strip().splitlines()
        assert "Traceback" not in result.output
        joined = " ".join(lines)
        assert str(corpus.layout.ranker) in joined.replace("\n", "")
        assert f"openmsd train ranker {corpus.root}" in joined


def app_cli():
    from openmsd.cli import app

    return app


@pytest.mark.parametrize("what", ["not JSON", "NaN weights"])
def test_a_damaged_ranker_file_is_503_in_the_server_naming_it(corpus: Corpus,
                                                              what: str) -> None:
    from openmsd.server import create_app

    corpus.layout.ranker.write_text(DAMAGED[what])
    with TestClient(create_app(corpus.root, [MODEL], watch_s=None),
                    raise_server_exceptions=False) as client:
        for path, params in (("/api/search", {"q": "dependency parsing"}),
                             ("/api/papers/en-parse/related", {}),
                             ("/", {"q": "dependency parsing"}),
                             ("/papers/en-parse", {})):
            answer = client.get(path, params=params)
            assert answer.status_code == 503, (path, answer.status_code, answer.text[:300])
            assert "ranker.json" in answer.text and "openmsd train ranker" in answer.text
        assert client.get("/api/stats").status_code == 200  # what needs no ranker still works
        corpus.layout.ranker.write_text(json.dumps(GOOD))  # rebuilt: answered again
        assert client.get("/api/search", params={"q": "dependency parsing"}).status_code == 200
