"""The ``openmsd`` command line: one thin command per use case."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from openmsd.corpus.build import LINKED
from openmsd.corpus.stats import corpus_stats, table1_rows
from openmsd.corpus.store import Corpus, CorpusError
from openmsd.ingest import formats
from openmsd.ingest.pipeline import ingest as run_ingest
from openmsd.ingest.report import IngestError

app = typer.Typer(help="Multilingual related-paper search and citation recommendation (OpenMSD).",
                  no_args_is_help=True, pretty_exceptions_enable=False)
corpus_app = typer.Typer(help="Inspect a corpus directory.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")

out = Console(emoji=False)
err = Console(stderr=True, emoji=False)
SAMPLE = Path(__file__).parent / "data" / "sample"


@contextlib.contextmanager
def _progress() -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               TextColumn("{task.completed:,} records"), TimeElapsedColumn()]
    with Progress(*columns, console=err, transient=True) as progress:
        def start(label: str, total: int | None) -> Callable[[int], None]:
            task = progress.add_task(label, total=total)
            return lambda n: progress.advance(task, n)
        yield start


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _print_report(report: dict, problems: list, limit: int = 10) -> None:
    err.print(f"[bold]ingest report[/]: {report['problems']:,} problems", highlight=False)
    for reason, n in report["problems_by_reason"].items():
        err.print(f"  {n:>7,}  {reason}", highlight=False)
    for problem in problems[:limit]:
        err.print(f"  - {problem}", highlight=False, soft_wrap=True)
    if len(problems) > limit:
        err.print(f"  ... {len(problems) - limit:,} more in problems.jsonl", highlight=False)


@app.command()
def ingest(
    inputs: Annotated[list[Path], typer.Argument(help="Files or folders to read.")],
    out_dir: Annotated[Path, typer.Option("--out", help="The corpus directory.")],
    fmt: Annotated[str | None, typer.Option(
        "--format", help=f"One of {', '.join(formats.FORMATS)}; detected by content by default."
    )] = None,
    strict: Annotated[bool, typer.Option(help="Fail on the first problem in the input.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Read scholarly metadata, citations and contexts into a corpus directory."""
    try:
        with _progress() as progress:
            result = run_ingest(inputs, out_dir, fmt, strict, progress=progress)
    except (IngestError, CorpusError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(result.report, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for path in result.unchanged:
        err.print(f"unchanged, not read again: {path}", highlight=False)
    _print_report(result.report, result.problems)
    counts = result.build["counts"]
    resolved = sum(counts.get(f"references.{k}", 0) for k in LINKED)
    out.print(f"[bold]{out_dir}[/]: {counts['papers']:,} papers, {counts['references']:,} "
              f"references ({resolved:,} resolved to corpus papers, "
              f"{counts.get('references.unresolved', 0):,} to papers outside the corpus, "
              f"{counts.get('references.citing-unknown', 0):,} from papers outside it), "
              f"{counts['citations']:,} citations, {counts['contexts']:,} contexts",
              highlight=False)


def _stats_table(stats: dict) -> Table:
    table = Table(title="Papers (OpenMSD Table 1)")
    for column in ("", "papers", "with abstract", "with full text", "with citations"):
        table.add_column(column, justify="right" if column else "left")
    for name, *values in table1_rows(stats):
        table.add_row(name, *(f"{v:,}" for v in values))
    return table


@corpus_app.command("stats")
def stats(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Papers, languages, citation links by direction and resolved references."""
    try:
        numbers = corpus_stats(Corpus(corpus))
    except CorpusError as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(numbers, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out.print(_stats_table(numbers))
    languages = Table(title="Languages")
    for column in ("language", "papers", "with abstract", "with citations"):
        languages.add_column(column, justify="left" if column == "language" else "right")
    for lang, v in numbers["per_language"].items():
        languages.add_row(lang, f"{v['papers']:,}", f"{v['with_abstract']:,}",
                          f"{v['with_citations']:,}")
    out.print(languages)
    links = Table(title="Citation links")
    links.add_column("direction")
    links.add_column("pairs", justify="right")
    for direction, n in numbers["citations_by_direction"].items():
        links.add_row(direction, f"{n:,}")
    out.print(links)
    out.print(f"references: {numbers['references']:,}, resolved to corpus papers: "
              f"{numbers['references_resolved']:,} "
              f"({', '.join(f'{k} {v:,}' for k, v in numbers['references_by_resolution'].items())})"
              f"; contexts: {numbers['contexts']:,} ({numbers['contexts_resolved']:,} with the "
              "cited paper in the corpus)", highlight=False)


@corpus_app.command("query")
def query(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    sql: Annotated[str, typer.Argument(help="SQL over the views papers, citations, references, "
                                       "contexts.")],
) -> None:
    """Run SQL over the corpus tables with DuckDB and print the result."""
    try:
        con = Corpus(corpus).connect()
        out.print(con.sql(sql))
    except CorpusError as error:
        _fail(str(error))
    except Exception as error:  # DuckDB's own errors name the problem well
        _fail(f"{type(error).__name__}: {error}")


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Where to build the demo corpus.")]
    = Path("demo-corpus"),
) -> None:
    """Ingest the sample corpus shipped with openmsd and print its statistics."""
    inputs = sorted(p for p in SAMPLE.iterdir() if p.is_dir())
    out.print(f"ingesting the shipped sample ({', '.join(p.name for p in inputs)}) into {out_dir}",
              highlight=False)
    ingest(inputs, out_dir)
    stats(out_dir)


@app.command("formats")
def list_formats() -> None:
    """The source formats openmsd reads."""
    for name in formats.FORMATS:
        out.print(f"[bold]{name}[/]: {formats.get(name).description}", highlight=False)


if __name__ == "__main__":
    app()
