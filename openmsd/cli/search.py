"""``openmsd related`` and ``openmsd search``: related papers and free-text search over a
corpus; the --year and --lang checks every question command shares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from openmsd.cli.graph import (
    GRAPH_K,
    ByOpt,
    GraphKOpt,
    GraphOpt,
    SimilarEdgesOpt,
    check_graph_target,
    write_graph,
)
from openmsd.cli.options import (
    BackendOpt,
    CorpusArg,
    ExportOpt,
    IncludeNonPapersOpt,
    JsonOpt,
    K,
    LangOpt,
    NegativeOpt,
    YearOpt,
)
from openmsd.cli.output import emit, err, fail, piped, say_left_out, warn
from openmsd.cli.zotero import (
    DryRunOpt,
    ToZoteroOpt,
    ZoteroKeyOpt,
    ZoteroLibraryOpt,
    ZoteroUrlOpt,
    send_to_zotero,
)

if TYPE_CHECKING:
    from openmsd.corpus import Corpus
    from openmsd.search import Result

__all__ = ["Years", "app", "check_languages", "say_why_empty", "year_range"]

app = typer.Typer()

Years = tuple[int | None, int | None] | None


def year_range(year: str | None) -> Years:
    """``2005`` -> (2005, 2005); ``2005-2010``, ``2005-``, ``-2010`` -> ranges."""
    if not year:
        return None
    low, sep, high = year.partition("-")
    try:
        if not sep:
            return int(low), int(low)
        span = (int(low) if low else None), (int(high) if high else None)
    except ValueError:
        fail(f"--year {year!r}: expected YEAR, FROM-TO, FROM- or -TO")
    if span[0] is not None and span[1] is not None and span[0] > span[1]:
        fail(f"--year {year!r}: a reversed range (FROM after TO); did you mean "
             f"{span[1]}-{span[0]}?")
    return span


def check_languages(corpus: Corpus, languages: list[str] | None) -> None:
    """Exit 2 when no paper of the corpus is in any of ``--lang`` (the API's 422)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.search import language_problem

    if languages:
        corpus.check()
    problem = language_problem(corpus, languages)
    if problem:
        fail(f"--lang: {problem}")


def say_why_empty(corpus: Corpus, languages: list[str] | None, years: Years,
                  otherwise: str) -> None:
    """Say on stderr why a search found nothing: an empty corpus, the filters (with what the
    corpus has), or ``otherwise``."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.search import no_results_reason

    reason = no_results_reason(corpus, languages, years, otherwise)
    err.print(f"[yellow]no results[/]: {reason}", highlight=False, soft_wrap=True)


def _show(results: list[Result], corpus: Corpus, as_json: bool, export: str | None,
          languages: list[str] | None, years: Years, otherwise: str) -> None:
    """Print ``results`` as a table, JSON or an ``--export`` format; when there are none, say
    why on stderr; then, on stderr, the records that are not papers left out of them."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.present import ranked, results_table, results_view

    if export:
        # lazy: a command loads its own code only (openmsd --help start time)
        from openmsd.export import EXPORTS
        from openmsd.export import export as export_records
        from openmsd.search import papers_by_id

        if export not in EXPORTS:
            fail(f"--export {export!r}: expected one of {', '.join(EXPORTS)}")
        sys.stdout.write(export_records(papers_by_id(corpus, [r.paper_id for r in results]),
                                        export))
    else:
        emit(ranked([r.as_dict() for r in results]), as_json,
             lambda _: (results_table if piped() else results_view)(results))
    left_out = getattr(results, "left_out", {})
    if not results:
        say_why_empty(corpus, languages, years, "every record it found is not a paper"
                       if left_out else otherwise)
    say_left_out(left_out)


@app.command()
def related(
    corpus: CorpusArg,
    paper: Annotated[str | None, typer.Argument(help="A paper id or DOI (or give --seeds).")]
    = None,
    model: Annotated[str | None, typer.Option(
        help="The ranker: 'hybrid-graph' (default: text and citation graph, as 'openmsd "
             "train ranker' learned to weigh them), 'hybrid', 'bm25', a dense model, a "
             "graph scorer, or a fusion A+B; with --seeds, the dense model whose index to "
             "search.")] = None,
    k: K = 10,
    lang: LangOpt = None,
    year: YearOpt = None,
    seeds: Annotated[list[Path] | None, typer.Option(
        help="A library (BibTeX, RIS, ids one a line, or zotero:local or "
             "zotero:local/COLLECTION: the running Zotero desktop): papers related to all of "
             "it.")]
    = None,
    negative: NegativeOpt = None,
    export: ExportOpt = None,
    json: JsonOpt = False,
    backend: BackendOpt = None,
    graph: GraphOpt = None,
    graph_k: GraphKOpt = GRAPH_K,
    by: ByOpt = "similarity",
    similar_edges: SimilarEdgesOpt = False,
    to_zotero: ToZoteroOpt = None,
    zotero_library: ZoteroLibraryOpt = None,
    zotero_key: ZoteroKeyOpt = None,
    zotero_url: ZoteroUrlOpt = None,
    dry_run: DryRunOpt = False,
    include_non_papers: IncludeNonPapersOpt = False,
) -> None:
    """The papers most related to a paper, or to a whole library (--seeds), in any language,
    with why; --graph draws them as a picture; --to-zotero writes them into a Zotero
    collection."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.fetch import FetchError, read_seeds
    from openmsd.rank import (
        RankerChoiceError,
        UnknownModelError,
        UnknownScorerError,
        dense_key,
        question_ranker,
    )
    from openmsd.search import (
        PaperNotFoundError,
        Results,
        SearchService,
        find_paper,
        library_seeds,
    )

    check_graph_target(graph, by)
    shown, k = k, max(k, graph_k) if graph else k
    try:
        target = Corpus(corpus)
        service = SearchService(target)
        years = year_range(year)
        check_languages(target, lang)
        if seeds:
            positive, missing = library_seeds(target, [s for f in seeds
                                                       for s in read_seeds(f, warn)])
            negatives, missing_neg = library_seeds(target, [s for f in negative or []
                                                            for s in read_seeds(f, warn)])
            for name in missing + missing_neg:
                err.print(f"  not in the corpus: {name}", highlight=False, markup=False)
            if not positive:
                fail(f"none of the {len(missing)} seeds is in {corpus}")
            err.print(f"related to these {len(positive)} papers"
                      + (f", away from {len(negatives)}" if negatives else ""), highlight=False)
            results = service.library(positive, dense_key(target, model, backend), negatives,
                                      k, lang, years,
                                      include_non_papers=include_non_papers)
            queries = positive
        elif paper:
            results = service.related(paper, question_ranker(target, "related", model, backend),
                                      k, lang, years, include_non_papers=include_non_papers)
            queries = [find_paper(target, paper)]
        else:
            fail("give a paper id or DOI, or --seeds LIBRARY")
        if graph:
            write_graph(graph, target, queries, results[:graph_k], model, by, similar_edges)
    except (CorpusError, FileNotFoundError, PaperNotFoundError, FetchError, UnknownScorerError,
            UnknownModelError, RankerChoiceError) as error:
        fail(str(error))
    if dry_run and not to_zotero:
        fail("--dry-run goes with --to-zotero")
    if to_zotero:
        about = _about(target, queries, seeds)
        send_to_zotero(target, results[:shown], to_zotero, about, f"related to {about}",
                       zotero_library, zotero_key, zotero_url, dry_run, json)
        if dry_run:
            return
    _show(Results(results[:shown], results.left_out), target, json, export, lang, years,
          "the index holds no other paper")


def _about(corpus: Corpus, queries: list[str], seeds: list[Path] | None) -> str:
    """What results are related to, in words: the query paper's title, or the library."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.search import papers_by_id

    if seeds:
        return f"{', '.join(map(str, seeds))} ({len(queries)} papers)"
    found = papers_by_id(corpus, queries[:1])
    return (found[0].get("title") if found else None) or queries[0]


@app.command("search")
def search_command(
    corpus: CorpusArg,
    text: Annotated[str, typer.Argument(help="A title, an abstract or a query, any language.")],
    model: Annotated[str | None, typer.Option(
        help="The ranker: 'hybrid' (default: what 'openmsd train ranker' learned, else BM25 "
             "and the corpus's dense model fused), 'bm25', a dense model, or a fusion "
             "A+B.")] = None,
    k: K = 10,
    lang: LangOpt = None,
    year: YearOpt = None,
    export: ExportOpt = None,
    json: JsonOpt = False,
    backend: BackendOpt = None,
    include_non_papers: IncludeNonPapersOpt = False,
) -> None:
    """The papers nearest to a free text, in any language."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.rank import UnknownModelError, question_ranker
    from openmsd.search import SearchService

    try:
        target = Corpus(corpus)
        years = year_range(year)
        check_languages(target, lang)
        results = SearchService(target).search(text, question_ranker(target, "search", model,
                                                                     backend), k, lang, years,
                                               include_non_papers=include_non_papers)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        fail(str(error))
    _show(results, target, json, export, lang, years, "the index is empty")
