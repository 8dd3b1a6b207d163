"""Bad arguments are errors naming the argument, never tracebacks; corpus text reaches the
terminal without control characters."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model

MODEL = "muse-v3"
EVIL = "\x1b[2J\x1b]0;pwned\x07Screen clearing title\x9b31m"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    papers = root / "papers.jsonl"
    papers.write_bytes(b"".join(orjson.dumps(p) + b"\n" for p in [
        {"id": "evil", "title": EVIL, "abstract": "About clearing screens.", "year": 2020},
        {"id": "good", "title": "Screen reading", "abstract": "About screens.", "year": 2019}]))
    ingest([papers], root / "corpus")
    corpus = Corpus(root / "corpus")
    embed_corpus(corpus, load_model(MODEL), MODEL)
    build_index(corpus, MODEL)
    return corpus.root


def _invoke(*args: str):
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception)
    assert "Traceback" not in result.output
    return result


@pytest.mark.parametrize("k", ["-5", "0"])
def test_k_must_be_positive_on_every_command(corpus: Path, tmp_path: Path, k: str) -> None:
    manuscript = tmp_path / "m.txt"
    manuscript.write_text("Screens are cleared [1].")
    for args in (["search", corpus, "screen"], ["related", corpus, "good"],
                 ["recommend", corpus, "--manuscript", manuscript]):
        result = _invoke(*args, "--model", MODEL, "-k", k)
        assert result.exit_code == 2 and "-k" in result.output, (args, result.output)


def test_a_reversed_year_range_is_refused(corpus: Path, tmp_path: Path) -> None:
    manuscript = tmp_path / "m.txt"
    manuscript.write_text("Screens are cleared [1].")
    for args in (["search", corpus, "screen"], ["related", corpus, "good"],
                 ["recommend", corpus, "--manuscript", manuscript]):
        result = _invoke(*args, "--model", MODEL, "--year", "2020-2010")
        assert result.exit_code == 2 and "2020-2010" in result.output, (args, result.output)
        assert "reversed" in result.output


def test_a_corpus_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "file.txt"
    file.write_text("not a corpus")
    for args in (["related", file, "x"], ["corpus", "stats", file]):
        result = _invoke(*args)
        assert result.exit_code == 2 and "not a corpus directory" in result.output


def test_ingest_out_that_cannot_be_a_directory(tmp_path: Path) -> None:
    papers = tmp_path / "p.jsonl"
    papers.write_bytes(orjson.dumps({"id": "a", "title": "A"}) + b"\n")
    file = tmp_path / "file.txt"
    file.write_text("")
    result = _invoke("ingest", papers, "--out", file)
    assert result.exit_code == 2 and "a file, not a corpus directory" in result.output
    result = _invoke("ingest", papers, "--out", "/proc/openmsd-x")
    assert result.exit_code == 2 and "cannot create the corpus directory" in result.output


def test_control_characters_never_reach_the_terminal(corpus: Path) -> None:
    for args in (["search", corpus, "clearing screens"], ["related", corpus, "good"],
                 ["corpus", "query", corpus, "SELECT title FROM papers"]):
        result = _invoke(*args, *(["--model", MODEL] if args[0] != "corpus" else []))
        assert result.exit_code == 0, result.output
        assert "Screen clearing title" in result.output.replace("\n", " ") or \
            "Screen clearing" in result.output, result.output
        assert not any(c in result.output for c in "\x1b\x07\x9b"), repr(result.output)


def test_recommend_says_when_it_guesses_locations_or_the_language(corpus: Path,
                                                                   tmp_path: Path) -> None:
    """A manuscript without a marker gets one location per paragraph and a note saying so; a
    manuscript in a language the model was not trained on gets a warning naming it."""
    plain = tmp_path / "plain.txt"
    plain.write_text("Screen readers speak the text of a page.\n\n"
                     "Clearing a screen erases what it shows.\n")
    result = _invoke("recommend", corpus, "--manuscript", plain, "-k", "1")
    assert result.exit_code == 0
    assert "no citation marker: one location per paragraph (2)" in result.output
    greek = tmp_path / "greek.txt"
    greek.write_text("Οι αναγνώστες οθόνης διαβάζουν φωναχτά το κείμενο μιας σελίδας [1]. "
                     "Η εκκαθάριση της οθόνης σβήνει ό,τι δείχνει.\n")
    result = _invoke("recommend", corpus, "--manuscript", greek, "-k", "1")
    assert result.exit_code == 0
    assert "language (el) is not one that" in result.output


@pytest.mark.parametrize("command", [["related", "{c}", "good"], ["search", "{c}", "screen"],
                                     ["embed", "{c}"], ["index", "build", "{c}"],
                                     ["eval", "sdsm", "{c}"]])
def test_a_model_name_longer_than_a_file_name_is_one_line(corpus: Path, command: list[str]
                                                          ) -> None:
    args = [a.format(c=corpus) for a in command]
    result = CliRunner().invoke(app, [*args, "--model", "x" * 5000])
    assert result.exit_code == 2, result.output[-500:]
    assert "a name of 5,0" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_engine_is_named_once_and_refuses_what_it_does_not_do(corpus, tmp_path):
    from openmsd.engines import EngineError, engine

    assert engine("duckdb") is engine("duckdb") and engine("local").name == "local"
    with pytest.raises(EngineError, match="expected local"):
        engine("hadoop")
    unknown = _invoke("ingest", corpus / "papers.parquet", "--out", tmp_path / "new",
                      "--engine", "hadoop")
    assert unknown.exit_code == 2 and "--engine 'hadoop'" in unknown.output
    assert not (tmp_path / "new").exists()
    split = _invoke("embed", corpus, "--model", MODEL, "--engine", "spark", "--enrich",
                    "llm-64")
    assert split.exit_code == 2 and "--enrich and --split run locally" in split.output
