"""``openmsd ingest``, ``openmsd formats`` and ``openmsd corpus stats|query``: reading sources
into a corpus and looking at it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Group
from rich.markup import escape

from openmsd.cli.options import FORMATS, CorpusArg, JsonOpt, StrictOpt
from openmsd.cli.output import emit, err, fail, out, piped, progress, write_rows
from openmsd.report import IngestError

QUERY_BATCH = 10_000
"""Rows a piped ``corpus query`` holds at once."""

__all__ = ["app", "corpus_app"]

app = typer.Typer()
corpus_app = typer.Typer(help="Inspect a corpus directory.", no_args_is_help=True)


def _print_report(report: dict, problems: list, limit: int = 10) -> None:
    from openmsd.corpus import PROBLEMS

    counts = report.get("counts", {})
    skipped, warnings = counts.get("problems.skipped", 0), counts.get("problems.warning", 0)
    err.print(f"[bold]ingest report[/]: {skipped:,} records or fields skipped, {warnings:,} "
              "warnings (taken, with a defect)", highlight=False)
    for reason, n in report["problems_by_reason"].items():
        err.print(f"  {n:>7,}  {reason}", highlight=False)
    for problem in problems[:limit]:
        label = "warning" if getattr(problem, "kind", None) == "warning" else "skipped"
        err.print(f"  - {label}: {problem}", highlight=False, soft_wrap=True)
    if len(problems) > limit:
        err.print(f"  ... {len(problems) - limit:,} more in {PROBLEMS}", highlight=False)


@app.command()
def ingest(
    inputs: Annotated[list[str], typer.Argument(help="Files or folders to read (with "
                                                "--engine spark, URIs too).")],
    out_dir: Annotated[str, typer.Option("--out", help="The corpus directory (with --engine "
                                         "spark, a URI too: s3a://, gs://, hdfs://).")],
    fmt: Annotated[str | None, typer.Option(
        "--format", help=f"One of {', '.join(FORMATS)}; detected by content by default."
    )] = None,
    strict: StrictOpt = False,
    json: JsonOpt = False,
    engine: Annotated[str, typer.Option(help="duckdb (one process, incremental) or spark (one "
                                             "task per file; see docs/scale.md).")] = "duckdb",
) -> None:
    """Read scholarly metadata, citations and contexts into a corpus directory."""
    from openmsd.corpus import CorpusError, build_summary
    from openmsd.ingest import ingest as run_ingest

    if engine not in ("duckdb", "spark"):
        fail(f"--engine {engine!r}: expected duckdb or spark")
    try:
        if engine == "spark":
            from openmsd.ingest import ingest_on_spark

            result = ingest_on_spark(inputs, out_dir, fmt, strict)
        else:
            with progress() as start:
                result = run_ingest([Path(i) for i in inputs], Path(out_dir), fmt, strict,
                                    progress=start)
    except (IngestError, CorpusError) as error:
        fail(str(error))
    if not json:
        for path in result.unchanged:
            err.print(f"unchanged, not read again: {path}", highlight=False)
        _print_report(result.report, result.problems)
    emit(result.report, json, lambda _: build_summary(out_dir, result.build["counts"]))


@app.command("formats")
def list_formats(json: JsonOpt = False) -> None:
    """The source formats openmsd reads."""
    from openmsd.ingest import get_reader

    rows = [{"format": name, "description": get_reader(name).description}
            for name in FORMATS]
    emit(rows, json, lambda _: Group(*(f"[bold]{r['format']}[/]: {escape(r['description'])}"
                                       for r in rows)))


@corpus_app.command("stats")
def stats(corpus: CorpusArg, json: JsonOpt = False) -> None:
    """Papers, languages, citation links by direction and resolved references."""
    from openmsd.corpus import Corpus, CorpusError, corpus_stats, stats_view

    try:
        numbers = corpus_stats(Corpus(corpus))
    except CorpusError as error:
        fail(str(error))
    emit(numbers, json, stats_view)


@corpus_app.command("query")
def query(
    corpus: CorpusArg,
    sql: Annotated[str, typer.Argument(help="SQL over the views papers, citations, references, "
                                       "contexts.")],
    json: JsonOpt = False,
) -> None:
    """Run a SELECT over the corpus tables with DuckDB, read only, and print the result:
    DuckDB's table on a terminal; in a pipe or a file one row a line (tab-separated, every
    row) or JSON, streamed batch by batch (memory stays flat however many rows)."""
    import duckdb

    from openmsd.corpus import Corpus, CorpusError
    from openmsd.io import arrow_reader

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        fail(f"{type(error).__name__}: {error}")
    kinds = [s.type.name for s in statements]
    if kinds != ["SELECT"]:
        fail(f"corpus query runs one SELECT (FROM, WITH, DESCRIBE, SUMMARIZE) over the "
             f"corpus, read only; got {', '.join(kinds) or 'nothing'}")
    try:
        con = Corpus(corpus).connect_read_only()
        relation = con.sql(sql)
        if json or piped():
            write_rows(arrow_reader(con, sql, QUERY_BATCH), json)
        else:
            out.print(str(relation), markup=False, highlight=False)
    except CorpusError as error:
        fail(str(error))
    except duckdb.Error as error:  # DuckDB's own errors name the problem well
        fail(f"{type(error).__name__}: {error}")
