"""A language filter no paper can pass is an error in the command line (exit 2) and in the
API (422), with the same words: the languages asked and the corpus's."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from openmsd.cli import app as cli
from openmsd.corpus import Corpus, corpus_languages
from openmsd.search import language_problem


def test_one_check_for_the_cli_and_the_api(client, served_corpus: Path) -> None:
    held = corpus_languages(Corpus(served_corpus))
    assert {"en", "es", "fr", "pt"} <= set(held)
    problem = language_problem(Corpus(served_corpus), ["zz", "xx"])
    assert "'zz', 'xx'" in problem and ", ".join(held) in problem
    assert language_problem(Corpus(served_corpus), ["zz", "es"]) is None  # one is enough

    for args in (["search", served_corpus, "parsing"], ["related", served_corpus, "fr-parse"]):
        result = CliRunner().invoke(cli, [*map(str, args), "--model", "bm25", "--lang", "zz"])
        assert result.exit_code == 2, result.output
        assert "--lang" in result.output and "'zz'" in result.output
        assert "Traceback" not in result.output
    answer = client.get("/api/search", params={"q": "parsing", "lang": "zz"})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["loc"] == ["query", "lang"]
    assert answer.json()["detail"][0]["msg"] == language_problem(Corpus(served_corpus),
                                                                 ["zz"])
    related = client.get("/api/papers/fr-parse/related", params={"lang": "zz"})
    assert related.status_code == 422 and "'zz'" in related.text
    kept = client.get("/api/search", params={"q": "parsing", "lang": ["zz", "es"]})
    assert kept.status_code == 200 and kept.json()["results"]
