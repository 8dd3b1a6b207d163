"""``openmsd demo`` on the shipped sample: what a newcomer sees."""

from __future__ import annotations

import contextlib
import doctest
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from rich.console import Console
from typer.testing import CliRunner

import openmsd.demo as demo_module
from openmsd.cli import app
from openmsd.cli.output import SafeConsole
from openmsd.corpus import Corpus
from openmsd.demo import PARAGRAPH, QUERIES, RELATED, run
from openmsd.models import default_backend
from openmsd.search import rank_related
from openmsd.vectors import vector_key

runner = CliRunner()


@pytest.fixture(scope="module")
def demo(demo_run):
    return demo_run


@contextlib.contextmanager
def _no_bars() -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
    yield lambda label, total: (lambda n: None)


def test_the_demo_shows_related_papers_across_languages_with_why(demo):
    root, text, times = demo
    corpus = Corpus(root)
    languages = dict(corpus.connect().execute(
        "SELECT language, count(*) FROM papers GROUP BY ALL").fetchall())
    assert {"pt", "es", "en"} <= set(languages) and languages["pt"] >= 20
    orchids = rank_related(corpus, RELATED[0][0], k=5)  # what the demo and `related` rank
    assert {r.language for r in orchids} - {"pt"}, "no result in another language"
    foucault = rank_related(corpus, RELATED[1][0], k=5)
    assert any("cites the query paper" in r.why for r in foucault)
    assert "cites query" in text and "similar text" in text  # the short words of a terminal
    for language, query in QUERIES:
        assert f"{language}: {query}" in text
    assert text.count("sentence ") >= 3 and "[3]" in text
    assert "openmsd serve" in text and "http://127.0.0.1:8000/" in text
    assert set(times) == {"ingest", "embed and index", "related", "search", "recommend"}


def test_the_demo_uses_no_unexplained_jargon(demo):
    _, text, _ = demo
    for jargon in (r"\b(DC|CC|BC)\b(?! BY)", r"\bIDT\b", r"\bODT\b", "Table 3"):
        assert not re.search(jargon, text), jargon


def test_a_second_run_reuses_the_corpus_and_its_vectors(demo):
    root, _, _ = demo
    text = io.StringIO()
    run(root, Console(file=text, width=120), _no_bars, model="muse-v3")
    assert "0 papers embedded" in text.getvalue()


def test_the_demo_in_a_pipe_or_a_file_prints_whole_lines(demo):
    """One result a line (TSV), 'What next' commands whole, no hint to install the serve
    extra where it is installed."""
    root, _, _ = demo
    text = io.StringIO()
    run(root, SafeConsole(file=text), _no_bars, model="muse-v3")
    lines = text.getvalue().splitlines()
    assert f"    openmsd related {root} {RELATED[0][0]}" in lines
    start = lines.index("    openmsd ingest FILES --out my-corpus")  # a command a line
    assert lines[start + 1:start + 3] == ["    openmsd embed my-corpus",
                                          "    openmsd index build my-corpus"]
    headers = [line for line in lines if line.startswith("rank\trelevance\t")]
    assert len(headers) == len(RELATED) + len(QUERIES)
    rows = [line.split("\t") for line in lines if re.match(r"\d+\t(\d+%|–)\t", line)]
    assert len(rows) == 5 * len(RELATED) + 3 * len(QUERIES)
    # the demo trains no ranker: every relevance is unrated, none a share of the best result's
    assert all(len(row) == 7 for row in rows) and {row[1] for row in rows} == {"–"}
    cited = [line.split("\t") for line in lines if re.match(r"\d+\t\[\d\]\t\d+\t", line)]
    assert [row[1] for row in cited] == ["[1]", "[1]", "[2]", "[2]", "[3]", "[3]"]
    assert "pip install" not in text.getvalue()  # the serve extra is installed here


def test_module_examples():
    assert doctest.testmod(demo_module).failed == 0


@pytest.mark.slow
def test_openmsd_demo_runs_the_default_model_on_its_fast_backend(tmp_path):
    result = subprocess.run([sys.executable, "-m", "openmsd.cli", "demo", "--out",
                             str(tmp_path / "d")], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    assert "What next" in result.stdout
    key = vector_key("e5-small-multilingual", default_backend("e5-small-multilingual"))
    assert (tmp_path / "d" / "index" / key / "index.faiss").exists()
    stats = runner.invoke(app, ["corpus", "stats", str(tmp_path / "d"), "--json"])
    assert json.loads(stats.stdout)["papers"] == 124


@pytest.mark.slow  # about 20 s: with the slow tests
def test_the_command_line_exits_cleanly_twenty_times(demo):
    """Once 'terminate called without an active exception' (exit 134) after the results, in
    two of ten runs under load: 20 runs, four at a time, all exit 0 with nothing on stderr."""
    root, _, _ = demo
    command = [sys.executable, "-m", "openmsd.cli", "related", str(root), RELATED[0][0],
               "--model", "muse-v3", "-k", "3", "--json"]
    results = []
    for _ in range(5):
        runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for _ in range(4)]
        results += [(run.wait(timeout=300), *run.communicate()) for run in runs]
    assert [code for code, _, _ in results] == [0] * 20, [e for _, _, e in results if e]
    assert not [e for _, _, e in results if "terminate called" in e]
    assert all(len(json.loads(out)) == 3 for _, out, _ in results)


def test_recommend_numbers_sentences_alike_in_text_and_json(demo):
    root, _, _ = demo
    command = ["recommend", str(root), "--manuscript", str(PARAGRAPH), "--model", "muse-v3",
               "-k", "2"]
    found = json.loads(runner.invoke(app, [*command, "--json"]).stdout)
    assert [loc["sentence_number"] for loc in found] == [loc["location"] + 1 for loc in found]
    rows = [line.split("\t") for line in runner.invoke(app, command).stdout.splitlines()[1:]]
    assert [int(row[0]) for row in rows] == [loc["sentence_number"] for loc in found
                                            for _ in loc["results"]]


def test_a_lone_match_on_one_word_does_not_outrank_the_papers_on_the_topic(demo):
    """The untuned hybrid weighs how strong each member's evidence is (z-score fusion): a 1975
    English paper on hearing impairment shares one word with a two-word Portuguese query on
    child vaccination and BM25 ranks it first; reciprocal-rank fusion put it first, above the
    vaccination papers the dense model ranks first."""
    from openmsd.search import rank_search

    corpus = Corpus(demo[0])
    top = [r.title for r in rank_search(corpus, "vacinação infantil", "hybrid", k=3)]
    assert "vaccination" in top[0].lower(), top
    assert not any("Hearing" in title for title in top), top
    # a query sharing only "Brasil" with the orchids, forests and bryophytes: the health
    # papers the dense model finds come first
    ten = [r.title for r in rank_search(corpus, "mortalidade por hepatite C no Brasil",
                                        "hybrid", k=10)]
    assert "Hepatitis C" in ten[0]
    assert not [t for t in ten if "Florestas" in t or "briófitas" in t], ten
