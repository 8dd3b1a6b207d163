"""``recommend`` on a long manuscript: its locations are ranked and printed a batch at a time
(the memory of one batch, however many locations), with the same answers and the same text as
ranking them all at once; a very long paragraph is split into sentences piece by piece."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.cli.output import json_text
from openmsd.corpus import Corpus
from openmsd.ingest import read_manuscript
from openmsd.models import load_model, split_sentences
from openmsd.present import ranked_locations
from openmsd.rank import MAX_PARAGRAPH_CHARS, manuscript_sentences
from openmsd.search import MAX_LOCATIONS, CitationRequest, recommend_citations
from openmsd.search.recommend import citation_locations

MODEL = "muse-v3"
LOCATIONS = 2 * MAX_LOCATIONS + 30


@pytest.fixture(scope="module")
def manuscript(demo_run, tmp_path_factory) -> tuple[Path, Path]:
    """The demo corpus and a manuscript of its abstracts' sentences, every other one marked:
    ``LOCATIONS`` citation locations, three batches."""
    root = demo_run[0]
    abstracts = [a for a in pq.read_table(root / "papers.parquet", columns=["abstract"])
                 ["abstract"].to_pylist() if a and len(a) > 200]
    sentences = [s.rstrip(".") for a in abstracts for s in a.split(". ") if len(s) > 40]
    paragraphs, marked = [], 0
    for start in range(0, len(sentences), 4):
        group = sentences[start:start + 4]
        text = []
        for i, sentence in enumerate(group):
            if i % 2 == 0 and marked < LOCATIONS:
                marked += 1
                sentence += f" [{marked}]"
            text.append(sentence + ".")
        paragraphs.append(" ".join(text))
        if marked == LOCATIONS:
            break
    assert marked == LOCATIONS
    path = tmp_path_factory.mktemp("manuscript") / "long.md"
    path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return root, path


@pytest.fixture(scope="module")
def all_at_once(manuscript) -> list[dict]:
    """The locations as ``recommend`` answered before batches: all ranked, then shown."""
    root, path = manuscript
    document = read_manuscript(path)
    request = CitationRequest(document.text, MODEL, 5, explain=True, max_locations=None,
                              manuscript_ids=document.ids, manuscript_title=document.title)
    found = recommend_citations(Corpus(root), request, load_model(MODEL))
    return ranked_locations([location.as_dict() for location in found])


def test_the_json_is_the_text_of_all_locations_at_once(manuscript, all_at_once) -> None:
    root, path = manuscript
    result = CliRunner().invoke(app, ["recommend", str(root), "--manuscript", str(path),
                                      "--model", MODEL, "--json"])
    assert result.exit_code == 0, result.output
    assert len(all_at_once) == LOCATIONS
    assert result.stdout == json_text(all_at_once, orjson.OPT_INDENT_2) + "\n"


def test_a_pipe_gets_one_header_and_every_row(manuscript, all_at_once) -> None:
    root, path = manuscript
    result = CliRunner().invoke(app, ["recommend", str(root), "--manuscript", str(path),
                                      "--model", MODEL])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sentence\tmarkers\trank")
    assert sum(line.startswith("sentence\t") for line in lines) == 1
    rows = sum(len(location["results"]) for location in all_at_once)
    assert len(lines) == 1 + rows


class _Counted:
    """A real encoder that counts the texts it is asked to encode."""

    def __init__(self, encoder) -> None:
        self.encoder, self.texts = encoder, 0

    def encode(self, texts, kind="passage", batch_size=32):
        self.texts += len(texts)
        return self.encoder.encode(texts, kind, batch_size)

    def __getattr__(self, name):
        return getattr(self.encoder, name)


def test_locations_are_ranked_a_batch_at_a_time(manuscript) -> None:
    root, path = manuscript
    counted = _Counted(load_model(MODEL))
    request = CitationRequest(path.read_text(encoding="utf-8"), MODEL, 5, explain=True,
                              max_locations=None)
    located = citation_locations(Corpus(root), request, counted)
    assert counted.texts == 0  # nothing ranked before the first location is asked for
    next(located)
    first = counted.texts
    assert sum(1 for _ in located) == LOCATIONS - 1
    assert 0 < first < counted.texts / 2  # the first batch's sentences, not all of them


@pytest.mark.slow  # about 20 s: with the slow tests
def test_locations_are_held_a_batch_at_a_time(manuscript) -> None:
    """Memory while the locations are read one by one and let go stays that of a batch:
    what is held after the last location is no more than after the first batch, while the
    list of them all holds far more."""
    root, path = manuscript
    corpus, encoder = Corpus(root), load_model(MODEL)
    request = CitationRequest(path.read_text(encoding="utf-8"), MODEL, 5, explain=True,
                              max_locations=None)
    warm = CitationRequest(request.text, MODEL, 5, explain=True, max_locations=1)
    list(citation_locations(corpus, warm, encoder))  # the corpus's tables and rankers loaded
    gc.collect()
    tracemalloc.start()
    try:
        held = []
        for n, _ in enumerate(citation_locations(corpus, request, encoder), 1):
            if n % MAX_LOCATIONS == 1:
                gc.collect()
                held.append(tracemalloc.get_traced_memory()[0])
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        kept = list(citation_locations(corpus, request, encoder))
        gc.collect()
        all_of_them = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert n == len(kept) == LOCATIONS and len(held) == 3
    growth = held[-1] - held[1]
    print(f"held at each batch's start {held}, all locations {all_of_them}")
    assert all_of_them > 0 and growth < all_of_them / 4, (held, all_of_them)


def test_a_very_long_paragraph_is_split_piece_by_piece() -> None:
    sentence = "Secondary forests recover their species within decades of abandonment. "
    paragraph = (sentence * (3 * MAX_PARAGRAPH_CHARS // len(sentence))).strip()
    sentences, starts = manuscript_sentences([paragraph], "en")
    assert starts == [0] and len(sentences) == paragraph.count(".")
    assert " ".join(sentences) == paragraph  # nothing lost or doubled at the cuts
    short = paragraph[:MAX_PARAGRAPH_CHARS]
    assert manuscript_sentences([short], "en")[0] == split_sentences(short, "en")
