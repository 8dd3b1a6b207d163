"""``openmsd ingest``, ``openmsd formats`` and ``openmsd corpus stats|query``: reading sources
into a corpus and looking at it."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import orjson
import typer
from rich.console import Group
from rich.markup import escape

from openmsd.cli.options import FORMATS, CorpusArg, JsonOpt, StrictOpt
from openmsd.cli.output import emit, err, fail, flat, json_text, out, piped, progress
from openmsd.report import IngestError

if TYPE_CHECKING:
    import pyarrow as pa

QUERY_BATCH = 10_000
"""Rows a piped ``corpus query`` holds at once."""

__all__ = ["app", "corpus_app"]

app = typer.Typer()
corpus_app = typer.Typer(help="Inspect a corpus directory.", no_args_is_help=True)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def problem_sentence(skipped: int, warnings: int) -> str:
    """What ingest says of the input's problems, in one sentence.

    >>> problem_sentence(0, 0)
    'The input had no problem.'
    >>> problem_sentence(0, 1)
    'Every record was read; 1 had a defect and was kept as it was (a warning).'
    >>> problem_sentence(3, 2)
    '3 records or fields were left out, and 2 records were kept with a defect (warnings).'
    """
    if not skipped and not warnings:
        return "The input had no problem."
    if not skipped:
        return (f"Every record was read; {warnings:,} had a defect and "
                f"{'was' if warnings == 1 else 'were'} kept as "
                f"{'it was (a warning)' if warnings == 1 else 'they were (warnings)'}.")
    left = f"{_plural(skipped, 'record')} or fields were left out"
    if skipped == 1:
        left = "1 record or field was left out"
    if not warnings:
        return f"{left}; every other record was read."
    return (f"{left}, and {_plural(warnings, 'record')} "
            f"{'was' if warnings == 1 else 'were'} kept with a defect "
            f"({'a warning' if warnings == 1 else 'warnings'}).")


def _print_report(report: dict, problems: list, limit: int = 10) -> None:
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import PROBLEMS

    counts = report.get("counts", {})
    skipped, warnings = counts.get("problems.skipped", 0), counts.get("problems.warning", 0)
    err.print(problem_sentence(skipped, warnings), highlight=False, markup=False)
    for reason, n in report["problems_by_reason"].items():
        err.print(f"  {n:>7,}  {reason}", highlight=False)
    for problem in problems[:limit]:
        label = "warning" if getattr(problem, "kind", None) == "warning" else "skipped"
        err.print(f"  - {label}: {problem}", highlight=False, soft_wrap=True)
    if len(problems) > limit:
        err.print(f"  ... {len(problems) - limit:,} more in {PROBLEMS}", highlight=False)



def write_rows(reader: pa.RecordBatchReader, as_json: bool) -> None:
    """The rows of an Arrow stream on stdout as they come, batch by batch (memory stays that
    of one batch): tab-separated lines under a header line, each cell as
    :func:`openmsd.corpus.cell_text` writes it; or, ``as_json``, one JSON array of objects
    (what :func:`emit` writes of the same rows)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import cell_text

    write = sys.stdout.write
    columns = reader.schema.names
    if not as_json:
        write("\t".join(flat(c) for c in columns) + "\n")
    else:
        write("[")
    first = True
    for batch in reader:
        rows = batch.to_pylist()
        if as_json:
            for row in rows:
                text = json_text(row, orjson.OPT_INDENT_2)
                write(("\n  " if first else ",\n  ") + text.replace("\n", "\n  "))
                first = False
        else:
            write("".join("\t".join(flat(cell_text(row[c])) for c in columns) + "\n"
                          for row in rows))
    if as_json:
        write("]\n" if first else "\n]\n")
    sys.stdout.flush()


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
    engine: Annotated[str, typer.Option(help="duckdb (one process) or spark (one task per "
                                             "file; see docs/scale.md); both incremental.")
                      ] = "duckdb",
    since: Annotated[str | None, typer.Option(
        help="YYYY-MM-DD: of an OpenAlex snapshot folder, only the partitions updated on or "
             "after that day (a corpus refreshed between quarterly releases).")] = None,
) -> None:
    """Read scholarly metadata, citations and contexts into a corpus directory (files,
    folders, an OpenAlex snapshot folder in either layout)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import CorpusError, build_summary
    from openmsd.engines import EngineError
    from openmsd.engines import engine as engine_named

    if since is not None:
        try:
            since = datetime.strptime(since, "%Y-%m-%d").strftime("%Y-%m-%d")
        except ValueError:
            fail(f"--since {since!r}: expected a date YYYY-MM-DD")
    try:
        runner = engine_named(engine)
        with progress() as start:
            result = runner.ingest(inputs, out_dir, fmt, strict, since, start)
    except (IngestError, CorpusError, EngineError) as error:
        fail(str(error))
    if not json:
        for path in result.unchanged:
            err.print(f"unchanged, not read again: {path}", highlight=False)
        _print_report(result.report, result.problems)
    emit(result.report, json, lambda _: build_summary(out_dir, result.build["counts"]))


@app.command("formats")
def list_formats(json: JsonOpt = False) -> None:
    """The source formats openmsd reads."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.ingest import get_reader

    rows = [{"format": name, "description": get_reader(name).description}
            for name in FORMATS]
    emit(rows, json, lambda _: Group(*(f"[bold]{r['format']}[/]: {escape(r['description'])}"
                                       for r in rows)))


@corpus_app.command("stats")
def stats(corpus: CorpusArg, json: JsonOpt = False) -> None:
    """Papers, languages, citation links by direction and resolved references."""
    # lazy: a command loads its own code only (openmsd --help start time)
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
    import duckdb  # lazy: duckdb takes ~0.1 s to import

    # lazy: a command loads its own code only (openmsd --help start time)
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
