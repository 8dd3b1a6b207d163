"""``openmsd recommend``: papers to cite at each citation location of a manuscript."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from openmsd.cli.options import (
    BackendOpt,
    CorpusArg,
    IncludeNonPapersOpt,
    JsonOpt,
    LangOpt,
    YearOpt,
)
from openmsd.cli.output import emit_each, err, fail, piped, say_left_out
from openmsd.cli.search import check_languages, say_why_empty, year_range

__all__ = ["app"]

app = typer.Typer()


@app.command()
def recommend(
    corpus: CorpusArg,
    manuscript: Annotated[Path, typer.Option(help="The manuscript: plain text (.txt), Markdown "
                                             "(.md), LaTeX (.tex), JATS XML (.xml) or unarXive "
                                             "JSON(L) (.json, .jsonl), with citation markers "
                                             "([12], (Smith, 2020), \\cite{x}, {{cite:x}}, "
                                             "xref) where citations go.")],
    at: Annotated[str | None, typer.Option(help="Only the sentences containing this text (a "
                                                "sentence or a marker).")] = None,
    model: Annotated[str | None, typer.Option(
        help="The model whose index to search (a registry name or a 'train citrec' "
             "directory; default: the model the corpus has an index for).")] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="Papers per citation location.")] = 5,
    lang: LangOpt = None,
    year: YearOpt = None,
    paper: Annotated[str | None, typer.Option(help="unarXive JSONL: the paper_id to read "
                                                   "(default: the first).")] = None,
    bibtex_file: Annotated[Path | None, typer.Option(
        "--bibtex", help="Write the BibTeX entries of the recommended papers here.")] = None,
    json: JsonOpt = False,
    backend: BackendOpt = None,
    include_non_papers: IncludeNonPapersOpt = False,
) -> None:
    """Papers to cite at each citation location of a manuscript, with the sentences that
    point to them."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError, identify
    from openmsd.ingest import ManuscriptError, read_manuscript
    from openmsd.present import ranked_locations, recommendations_table, recommendations_view
    from openmsd.rank import (
        RankerChoiceError,
        UnknownModelError,
        UnknownScorerError,
        language_warning,
        manuscript_model,
    )
    from openmsd.search import (
        MAX_LOCATIONS,
        CitationRequest,
        SearchService,
        papers_by_id,
    )

    try:
        document = read_manuscript(manuscript, paper)
    except ManuscriptError as error:
        fail(str(error))
    for problem in document.problems[:20]:
        err.print(f"[yellow]unknown marker[/]: {problem}", highlight=False)
    if len(document.problems) > 20:
        err.print(f"... {len(document.problems) - 20} more unknown markers", highlight=False)
    target = Corpus(corpus)
    years = year_range(year)
    try:
        check_languages(target, lang)
        key, encoder = manuscript_model(target, model, backend)
    except (UnknownScorerError, RankerChoiceError) as error:
        fail(str(error))
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        fail(f"{manuscript}: {error}")
    try:
        warning = language_warning(identify([document.text[:2000]])[0][0], encoder)
        if warning:
            err.print(f"[yellow]warning[/]: {manuscript}: {warning}", highlight=False)
        located = SearchService(target).recommend_each(
            CitationRequest(document.text, key, k, at=at,
                            languages=lang, years=years, explain=True,
                            max_locations=None,  # every location of the manuscript
                            manuscript_ids=document.ids, manuscript_title=document.title,
                            include_non_papers=include_non_papers),
            encoder)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        fail(f"{manuscript}: {error}")
    seen = {"locations": 0, "markers": 0, "results": 0}
    cited: dict[str, None] = {}  # the papers recommended, for --bibtex
    left_out: Counter[str] = Counter()

    def batches() -> Iterator[list[dict[str, Any]]]:
        """The locations as they are ranked, MAX_LOCATIONS at a time, counted on the way."""
        batch: list[dict[str, Any]] = []
        try:
            for location in located:
                found = location.as_dict()
                seen["locations"] += 1
                seen["markers"] += bool(found["markers"])
                seen["results"] += bool(found["results"])
                cited.update(dict.fromkeys(r["paper_id"] for r in found["results"]))
                left_out.update(found["left_out"])
                batch.append(found)
                if len(batch) == MAX_LOCATIONS:
                    yield ranked_locations(batch)
                    batch = []
        except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
            fail(f"{manuscript}: {error}")
        if batch:
            yield ranked_locations(batch)

    emit_each(batches(), json, recommendations_table if piped() else recommendations_view)
    if at is None and seen["locations"] and not seen["markers"]:
        err.print(f"[yellow]note[/]: {manuscript} has no citation marker: one location per "
                  f"paragraph ({seen['locations']})", highlight=False)
    if bibtex_file:
        # lazy: a command loads its own code only (openmsd --help start time)
        from openmsd.export import save  # BibTeX and CSL libraries: only for --bibtex

        save(papers_by_id(target, list(cited)), "bib", bibtex_file)
        err.print(f"{len(cited)} BibTeX entries -> {bibtex_file}", highlight=False)
    if not seen["results"]:
        say_why_empty(target, lang, years, "the index is empty")
    say_left_out(left_out)
