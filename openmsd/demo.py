"""``openmsd demo``: the main job on the sample shipped with openmsd, as a newcomer meets it.

Ingest the sample (SciELO articles in Portuguese, Spanish and English, with S2ORC and arXiv
papers on the same topics), embed and index it with the default model on its fast backend,
then show what the tool is for: related papers across languages with why, one search in three
languages, citation recommendations for a paragraph, and the command that opens the web app.
Every step calls the functions the ``related``, ``search`` and ``recommend`` commands call.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from rich.console import Console, RenderableType
from rich.markup import escape

from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest, read_manuscript
from openmsd.models import DEFAULT_MODEL, choose_backend, embed_corpus, load_model
from openmsd.present import (
    ranked_locations,
    recommendations_table,
    recommendations_view,
    results_table,
    results_view,
    shorten,
)
from openmsd.rank import HYBRID, HYBRID_GRAPH, left_out_line
from openmsd.search import CitationRequest, Result, SearchService
from openmsd.vectors import vector_key

__all__ = ["PARAGRAPH", "QUERIES", "RELATED", "SAMPLE", "run", "shorten"]

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "sample"
PARAGRAPH = DATA / "demo-paragraph.md"
RELATED = [
    ("10.1590/2236-8906-76-2021", "a Portuguese article on orchids of central Brazil"),
    ("10.1590/0101-3173.2022.v45n1.p139", "a Spanish article on Foucault"),
]
"""The shipped articles whose related papers the demo shows, and how it introduces them."""
QUERIES = [
    ("English", "bryophytes and orchids of Brazilian forests"),
    ("Portuguese", "mortalidade por hepatite C no Brasil"),
    ("Spanish", "vacunación infantil y desigualdades raciales"),
]
"""One search in each of three languages."""
LANGUAGES = {"en": "English", "pt": "Portuguese", "es": "Spanish", "fr": "French",
             "de": "German", "und": "undetermined"}
Progress = Callable[[], AbstractContextManager[Callable[[str, int | None],
                                                        Callable[[int], None]]]]


def _table(console: Console, results: list[Result]) -> RenderableType:
    """Results as ``openmsd related`` and ``openmsd search`` show them: fitted to a terminal,
    or their table (TSV in a pipe)."""
    return (results_view(results) if console.is_terminal else results_table(results)) or ""


def _left_out(console: Console, left_out: dict[str, int]) -> None:
    """The records that are not papers left out of the results above, where there were."""
    line = left_out_line(left_out)
    if line:
        console.print(f"[dim]{escape(line)}[/]", highlight=False)


def _step(console: Console, number: int, text: str) -> None:
    console.print(f"\n[bold cyan]{number}/5[/] [bold]{text}[/]", highlight=False)


def _languages(corpus: Corpus) -> str:
    rows = corpus.connect().execute("SELECT coalesce(language, 'und'), count(*) AS n FROM papers "
                                    "GROUP BY ALL ORDER BY n DESC").fetchall()
    return ", ".join(f"{n} {LANGUAGES.get(lang, lang)}" for lang, n in rows)


def _ingest(out_dir: Path, console: Console, progress: Progress) -> Corpus:
    inputs = sorted(p for p in SAMPLE.iterdir() if p.is_dir())
    _step(console, 1, "Reading the sample shipped with openmsd")
    console.print("SciELO journal articles (CC BY) in Portuguese, Spanish and English, and S2ORC "
                  "and arXiv papers on the same topics: health, plants and ecology, materials, "
                  "education and society, language and literature.", highlight=False)
    with progress() as bars:
        result = ingest(inputs, out_dir, progress=bars)
    counts = result.build["counts"]
    corpus = Corpus(out_dir)
    console.print(f"{out_dir}: {counts['papers']:,} papers ({_languages(corpus)}), "
                  f"{counts['citations']:,} citations between them, {counts['contexts']:,} "
                  "citing sentences", highlight=False)
    warnings = result.report["problems"]
    if warnings:
        console.print(f"[yellow]{warnings:,} warnings[/] about the input, listed once each in "
                      f"{corpus.layout.problems}", highlight=False)
    return corpus


def _embed(corpus: Corpus, model: str, console: Console, progress: Progress) -> tuple[str, str]:
    backend = choose_backend(corpus, model)
    key = vector_key(model, backend)
    _step(console, 2, f"Turning every paper into a vector with {model}")
    how = {"torch": "PyTorch", "onnx": "ONNX Runtime, int8", "onnx-q4": "ONNX Runtime, 4-bit "
           "weights", "onnx-fp32": "ONNX Runtime, float32", "onnx-sq8": "ONNX Runtime, int8 "
           "per token", "cuda-fp16": "PyTorch, float16 on the GPU"}.get(backend, backend)
    console.print(f"A multilingual model ({how}): papers about the same thing get close vectors "
                  "whatever their language. Done once; later runs re-use them.",
                  highlight=False)
    started = time.perf_counter()
    encoder = load_model(model, backend)
    total = corpus.check()["build"]["counts"]["papers"]
    with progress() as bars:
        done = embed_corpus(corpus, encoder, key, progress=bars("embedding", total))
    index, _ = build_index(corpus, key)
    console.print(f"{done.embedded:,} papers embedded ({done.cached:,} already were), "
                  f"{index.index.ntotal:,} in the search index, in "
                  f"{time.perf_counter() - started:.0f} s", highlight=False)
    return key, backend


def _quiet_loading() -> None:
    """transformers' own "Loading weights" bar would print between the demo's steps."""
    try:
        # optional: the models extra; transformers takes ~1.0 s to import
        from transformers.utils import logging
    except ImportError:  # the ONNX path without transformers: nothing to quiet
        return
    logging.disable_progress_bar()


def run(out_dir: Path, console: Console, progress: Progress,
        model: str = DEFAULT_MODEL) -> dict[str, float]:
    """Run the demo into ``out_dir``, printing to ``console``; ``progress`` opens the progress
    bars (``bars(label, total)`` -> advance). Returns the seconds each step took."""
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name], clock = now - clock, now

    _quiet_loading()
    corpus = _ingest(out_dir, console, progress)
    service = SearchService(corpus)
    lap("ingest")
    key, backend = _embed(corpus, model, console, progress)
    lap("embed and index")

    _step(console, 3, "Related papers, across languages, with why")
    for paper_id, what in RELATED:
        title = corpus.connect().execute("SELECT title FROM papers WHERE paper_id = ?",
                                         [paper_id]).fetchone()
        console.print(f"\nFor {what}, [italic]{title[0] if title else paper_id}[/] "
                      f"({paper_id}):", highlight=False)
        results = service.related(paper_id, HYBRID_GRAPH, k=5)
        console.print(_table(console, results))
        _left_out(console, results.left_out)
    console.print(f"[dim]Ranked as `openmsd related` ranks ({HYBRID_GRAPH}): the {model} "
                  "vectors, BM25 over each paper's own words and over its English words, and "
                  "the citation graph, their z-scores added; relevance: unrated until 'openmsd "
                  "train ranker' learns from the corpus's links how likely each is; why: the "
                  "signals that put the paper there.[/]",
                  highlight=False)
    lap("related")

    _step(console, 4, "One search in three languages")
    for language, text in QUERIES:
        console.print(f"\n{language}: [italic]{text}[/]", highlight=False)
        results = service.search(text, HYBRID, k=3)
        console.print(_table(console, results))
        _left_out(console, results.left_out)
    lap("search")

    _step(console, 5, "Papers to cite in a paragraph")
    document = read_manuscript(PARAGRAPH)
    console.print(f"The text in {PARAGRAPH.name} has three citation markers; for each "
                  "one, the papers to cite and the sentence that points to them most.",
                  highlight=False)
    found = [location.as_dict() for location in service.recommend(
        CitationRequest(document.text, key, k=2, explain=True, max_locations=None),
        load_model(model, backend))]
    console.print((recommendations_view if console.is_terminal else recommendations_table)(
        ranked_locations(found)) or "")
    lap("recommend")
    _next_steps(out_dir, console)
    return times


def _next_steps(out_dir: Path, console: Console) -> None:
    console.print("\n[bold]What next[/]", highlight=False)
    steps = [
        ("Browse and search it in your web browser (http://127.0.0.1:8000/):",
         f"openmsd serve {out_dir}"),
        ("Related papers of any paper, by id or DOI:",
         f"openmsd related {out_dir} {RELATED[0][0]}"),
        ("Search in any language:", f'openmsd search {out_dir} "florestas secundárias"'),
        ("Papers to cite in your own text (Markdown, LaTeX, JATS, plain text):",
         f"openmsd recommend {out_dir} --manuscript my-draft.md"),
        ("Your own papers (OpenAlex, Crossref, JATS, S2ORC, unarXive, JSON lines...):",
         "openmsd ingest FILES --out my-corpus\nopenmsd embed my-corpus\n"
         "openmsd index build my-corpus"),
    ]
    for text, commands in steps:  # a command a line, each fits 80 columns
        shown = "".join(f"\n    [bold green]{escape(c)}[/]" for c in commands.splitlines())
        console.print(f"  {text}{shown}", highlight=False)
    if importlib.util.find_spec("fastapi") is None:  # the serve extra is not installed
        console.print("  The web app needs the serve extra: pip install -e \".[serve]\"",
                      highlight=False, markup=False)
    console.print("  'openmsd --help' lists every command.", highlight=False, markup=False)
