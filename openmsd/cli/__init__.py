"""The ``openmsd`` command line: one thin command per use case."""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.core import TyperGroup

from openmsd.cli.fetch import fetch_app
from openmsd.cli.fetch import update as update_corpus
from openmsd.corpus.build import LINKED
from openmsd.corpus.stats import corpus_stats, table1_rows
from openmsd.corpus.store import Corpus, CorpusError, write_json
from openmsd.eval.retrieval import CUTOFF, RetrievalEvalError, evaluate_files
from openmsd.index.factory_index import FactoryParams
from openmsd.index.vector_index import HNSW_THRESHOLD, build_factory_index, build_index
from openmsd.ingest import formats
from openmsd.ingest.pipeline import ingest as run_ingest
from openmsd.ingest.report import IngestError
from openmsd.models.embed import choose_backend, embed_corpus, stored_backends, vector_key
from openmsd.models.registry import (
    DEFAULT_MODEL,
    MODELS,
    UnknownModelError,
    UnsupportedBackendError,
    load_model,
)
from openmsd.rank import HYBRID, HYBRID_GRAPH, UnknownScorerError, default_dense
from openmsd.rank.load import is_builtin, is_dense
from openmsd.relations.build import DEFAULT_MAX_GROUP, RelationsConfig, RelationsError
from openmsd.relations.build import derive as derive_relations
from openmsd.relations.engine import connect as connect_engine
from openmsd.relations.split import SPLITS, SplitConfig
from openmsd.relations.stats import relations_stats
from openmsd.search.related import PaperNotFoundError


def _join_lines(text: str | None) -> str | None:
    """Help text with the line breaks of a docstring joined (paragraphs kept).

    >>> _join_lines("The papers most related\n    to a paper.\n\nSecond paragraph.")
    'The papers most related to a paper.\n\nSecond paragraph.'
    """
    return re.sub(r"(?<=\S)[ \t]*\n[ \t]*(?=\S)", " ", text) if text else text


def _tidy(command: Any) -> Any:
    """``command`` (and its subcommands) with help texts of whole lines."""
    if command is not None and not getattr(command, "_tidied", False):
        command.help = _join_lines(command.help)
        command.short_help = _join_lines(command.short_help)
        command._tidied = True
        for sub in getattr(command, "commands", {}).values():
            _tidy(sub)
    return command


class _MainGroup(TyperGroup):
    """The top-level group: ``demo`` listed first, help texts without mid-sentence breaks."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: name != "demo")

    def get_command(self, ctx: Any, name: str) -> Any:
        return _tidy(super().get_command(ctx, name))


app = typer.Typer(cls=_MainGroup, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Multilingual related-paper search and citation recommendation "
                       "(OpenMSD). New here? Run 'openmsd demo'.")
corpus_app = typer.Typer(help="Inspect a corpus directory.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
app.add_typer(fetch_app, name="fetch")
app.command("update")(update_corpus)


class _DefaultCommandGroup(TyperGroup):
    """A group whose first argument, when it names no subcommand, goes to ``build``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["build", *args]
        return super().parse_args(ctx, args)


relations_app = typer.Typer(cls=_DefaultCommandGroup, no_args_is_help=True,
                            help="Related pairs (DC: direct citation, CC: co-citation, BC: "
                                 "bibliographic coupling), the OpenMSD split, training "
                                 "triples: 'openmsd relations CORPUS', 'openmsd relations "
                                 "stats CORPUS'.")
app.add_typer(relations_app, name="relations")

BackendOption = Annotated[str | None, typer.Option(
    help="torch, or onnx (ONNX Runtime int8); by default the backend the corpus's vectors were "
         "made with, else onnx where the model has it.")]


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _plain(text: str) -> str:
    """``text`` without control characters (an escape sequence in a title must not reach the
    terminal); newlines and tabs are kept."""
    return _CONTROL.sub("", text)


class _SafeConsole(Console):
    """A console that strips control characters from the strings it is given to print."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_plain(o) if isinstance(o, str) else o for o in objects), **kwargs)


out = _SafeConsole(emoji=False)
err = _SafeConsole(stderr=True, emoji=False)
SAMPLE = Path(__file__).parent.parent / "data" / "sample"


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
        err.print(f"  ... {len(problems) - limit:,} more in problems.jsonl", highlight=False)


@app.command()
def ingest(
    inputs: Annotated[list[str], typer.Argument(help="Files or folders to read (with "
                                                "--engine spark, URIs too).")],
    out_dir: Annotated[str, typer.Option("--out", help="The corpus directory (with --engine "
                                         "spark, a URI too: s3a://, gs://, hdfs://).")],
    fmt: Annotated[str | None, typer.Option(
        "--format", help=f"One of {', '.join(formats.FORMATS)}; detected by content by default."
    )] = None,
    strict: Annotated[bool, typer.Option(help="Fail on the first problem in the input.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    engine: Annotated[str, typer.Option(help="duckdb (one process, incremental) or spark (one "
                                             "task per file; see docs/scale.md).")] = "duckdb",
) -> None:
    """Read scholarly metadata, citations and contexts into a corpus directory."""
    if engine not in ("duckdb", "spark"):
        _fail(f"--engine {engine!r}: expected duckdb or spark")
    try:
        if engine == "spark":
            from openmsd.ingest.spark import spark_ingest

            result = spark_ingest(inputs, out_dir, fmt, strict)
        else:
            with _progress() as progress:
                result = run_ingest([Path(i) for i in inputs], Path(out_dir), fmt, strict,
                                    progress=progress)
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
        out.print(str(con.sql(sql)), markup=False, highlight=False)
    except CorpusError as error:
        _fail(str(error))
    except Exception as error:  # DuckDB's own errors name the problem well
        _fail(f"{type(error).__name__}: {error}")


@relations_app.command("build")
def relations_build(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    engine: Annotated[str, typer.Option(help="duckdb (in process) or spark.")] = "duckdb",
    max_group: Annotated[int, typer.Option(
        help="Cap on a citing paper's references (CC) or a paper's citers (BC) paired; "
             "0 for exact counts.")] = DEFAULT_MAX_GROUP,
    seed: Annotated[int, typer.Option(help="Seed of every sample and of the split.")] = 0,
    top_languages: Annotated[int, typer.Option(help="In-distribution languages.")] = 30,
    idt: Annotated[float, typer.Option(help="Share of in-distribution papers in IDT (the "
                                         "in-distribution test set).")] = 0.1,
    odt: Annotated[float, typer.Option(help="Share of non-English in-distribution papers "
                                            "in ODT (the out-of-distribution test set).")] = 0.1,
    dev: Annotated[float, typer.Option(help="Share of papers held out of train for dev.")]
    = 0.05,
    json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Derive related pairs (DC: direct citation, CC: co-citation, BC: bibliographic coupling),
    the train / dev / IDT / ODT split (in- and out-of-distribution test sets) and Specter
    triples of a corpus."""
    try:
        config = RelationsConfig(max_group=max_group or None, seed=seed,
                                 split=SplitConfig(top_languages=top_languages, idt=idt,
                                                   odt=odt, dev=dev, seed=seed))
        runner = connect_engine(engine)
        with _progress() as progress:
            progress(f"deriving relations on {engine}", None)
            result = derive_relations(Corpus(corpus), runner, config)
        runner.close()
    except (CorpusError, RelationsError, ValueError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    problems = result["citation_problems"]
    left_out = {k: v for k, v in problems.items() if k != "rows" and v}
    if left_out:
        err.print("citations left out: " + ", ".join(f"{k} {v:,}" for k, v in left_out.items()),
                  highlight=False)
    relations_stats_command(corpus)


@relations_app.command("stats")
def relations_stats_command(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """OpenMSD's Table 3 for a corpus: pairs per relation, split and language direction."""
    try:
        numbers = relations_stats(Corpus(corpus))
    except (CorpusError, RelationsError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(numbers, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    table = Table(title=f"Related pairs per split (OpenMSD Table 3; cap "
                        f"{numbers['max_group'] or 'none'}, engine {numbers['engine']})")
    table.add_column("relation")
    table.add_column("direction", no_wrap=True)
    for split in SPLITS:
        table.add_column(f"{split} ({numbers['splits'][split]['papers']:,} papers)",
                         justify="right")
    for relation in ("dc", "cc", "bc"):
        directions = numbers["splits"]["train"][relation]["by_direction"]
        for i, direction in enumerate(directions):
            table.add_row(relation.upper() if i == 0 else "", direction,
                          *(f"{numbers['splits'][s][relation]['by_direction'][direction]:,}"
                            for s in SPLITS))
    out.print(table)
    out.print(f"whole graph: DC {numbers['dc']:,}, CC {numbers['cc']:,}, BC {numbers['bc']:,}; "
              f"train triples: Specter {numbers['specter_triples']:,}, SciNCL "
              f"{numbers['scincl_triples']:,}", highlight=False)


models_app = typer.Typer(help="The encoders openmsd can use.", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The registered models (all load offline); any SentenceTransformer directory or Hugging
    Face model name is accepted too."""
    rows = [{"name": m.name, "dim": m.dim, "multilingual": m.multilingual,
             "description": m.description, "default": m.name == DEFAULT_MODEL}
            for m in MODELS.values()]
    if json:
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    table = Table(title="Models")
    for column in ("name", "dim", "languages", "description"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["name"] + (" (default)" if row["default"] else ""),
                      str(row["dim"] or "sparse"),
                      "multilingual" if row["multilingual"] else "English",
                      row["description"])
    out.print(table)


def _year_range(year: str | None) -> tuple[int | None, int | None] | None:
    """``2005`` -> (2005, 2005); ``2005-2010``, ``2005-``, ``-2010`` -> ranges."""
    if not year:
        return None
    low, sep, high = year.partition("-")
    try:
        if not sep:
            return int(low), int(low)
        span = (int(low) if low else None), (int(high) if high else None)
    except ValueError:
        _fail(f"--year {year!r}: expected YEAR, FROM-TO, FROM- or -TO")
        return None
    if span[0] is not None and span[1] is not None and span[0] > span[1]:
        _fail(f"--year {year!r}: a reversed range (FROM after TO); did you mean "
              f"{span[1]}-{span[0]}?")
    return span


def _index_backend(corpus: Corpus, model: str, backend: str | None) -> str:
    """The backend whose index of ``model`` to search: ``backend`` when given (refused, naming
    what the corpus has, when only the other backend has an index), else the corpus's own."""
    stored = stored_backends(corpus, model, "index")
    if backend is not None and stored and backend not in stored:
        _fail(f"{corpus.root}: {model} is indexed with backend {', '.join(stored)} only, not "
              f"{backend} (vectors of two backends are never mixed): leave out --backend, or "
              f"run 'openmsd embed {corpus.root} --model {model} --backend {backend}' and "
              f"'openmsd index build {corpus.root} --model {model} --backend {backend}'")
    return choose_backend(corpus, model, backend, "index")


def _ranker(corpus: Corpus, model: str | None, backend: str | None, default: str) -> str:
    """The ranker a command uses: ``default`` without ``--model``; for a dense model, the
    vectors of the backend its index was built with."""
    if model is None:
        return default
    if is_builtin(model) or "@" in model or not is_dense(model, corpus):
        return model
    return vector_key(model, _index_backend(corpus, model, backend))


def _stored_key(corpus: Corpus, model: str) -> str:
    """``model``, or its vector key of another backend when the corpus has only that one."""
    stored = stored_backends(corpus, model)
    return vector_key(model, stored[0]) if stored and "torch" not in stored else model


def _say_why_empty(corpus: Corpus, languages: list[str] | None,
                   years: tuple[int | None, int | None] | None, otherwise: str) -> None:
    """Say on stderr why a search found nothing: an empty corpus, the filters (with what the
    corpus has), or ``otherwise``."""
    con = corpus.connect()
    papers, low, high = con.execute("SELECT count(*), min(year), max(year) FROM papers").fetchone()
    if not papers:
        reason = ("the corpus has no papers: add some with 'openmsd ingest FILES --out "
                  f"{corpus.root}'")
    elif languages or years:
        held = [lang for lang, in con.execute("SELECT DISTINCT coalesce(language, 'und') AS l "
                                              "FROM papers ORDER BY l").fetchall()]
        filters = []
        if languages:
            filters.append(f"--lang {' '.join(languages)} (its languages: {', '.join(held)})")
        if years:
            filters.append(f"--year {years[0] or ''}-{years[1] or ''} (its papers are from "
                           f"{low}-{high})")
        reason = "no paper matches " + " and ".join(filters)
    else:
        reason = otherwise
    err.print(f"[yellow]no results[/]: {reason}", highlight=False, soft_wrap=True)


def _print_results(results: list, as_json: bool, corpus: Corpus | None = None,
                   export: str | None = None) -> None:
    if export and corpus is not None:
        from openmsd.export import EXPORTS
        from openmsd.export import export as export_records
        from openmsd.search.papers import papers_by_id

        if export not in EXPORTS:
            _fail(f"--export {export!r}: expected one of {', '.join(EXPORTS)}")
        sys.stdout.write(export_records(papers_by_id(corpus, [r.paper_id for r in results]),
                                        export))
        return
    if as_json:
        sys.stdout.write(orjson.dumps([r.as_dict() for r in results],
                                      option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    if not results:
        return
    table = Table()
    for column in ("score", "paper", "lang", "year"):
        table.add_column(column, no_wrap=True)
    table.add_column("title", overflow="fold", ratio=3)
    table.add_column("why related", overflow="fold", ratio=1)
    for r in results:
        title = r.title or r.english_title or ""
        if r.english_title and r.english_title != title:
            title += f"\n[dim]{r.english_title}[/]"
        table.add_row(*map(_plain, (f"{r.score:.3f}", r.paper_id, r.language or "?",
                                    str(r.year or ""), title, "; ".join(r.why))))
    out.print(table)


@app.command()
def embed(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    model: Annotated[str, typer.Option(help="A registered model, a SentenceTransformer "
                                            "directory or a hub name.")] = DEFAULT_MODEL,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 32,
    backend: Annotated[str | None, typer.Option(
        help="torch, or onnx: ONNX Runtime int8, several times faster on CPU (built on first "
             "use); by default the backend of the vectors the corpus has, else onnx where the "
             "model has it and onnxruntime is installed.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
    enrich: Annotated[str | None, typer.Option(
        help="METHOD-LENGTH (e.g. llm-64): embed the text enriched with 'openmsd enrich' "
             "summaries, stored as model MODEL+METHODLENGTH.")] = None,
    split: Annotated[str | None, typer.Option(
        help="Only the papers of this relations split (idt, odt, test = idt + odt, ...).")]
    = None,
    engine: Annotated[str, typer.Option(help="local (this process) or spark (mapInPandas "
                                             "over partitions; see docs/scale.md).")] = "local",
) -> None:
    """Embed every paper whose text has no vector yet (resumable; never twice)."""
    from openmsd.enrich.run import EnrichError, split_papers
    from openmsd.enrich.store import enriched_name

    target = Corpus(corpus)
    backend = choose_backend(target, model, backend)
    stored_as = vector_key(model, backend)
    if enrich is not None:
        method, _, size = enrich.partition("-")
        if not size.isdigit():
            _fail(f"--enrich {enrich!r}: expected METHOD-LENGTH, e.g. llm-64")
        stored_as = vector_key(enriched_name(model, method, int(size)), backend)
    if is_builtin(model):
        _fail(f"{model} is not a dense model: it has no vectors to store; evaluate or search "
              "with it directly")
    if engine not in ("local", "spark"):
        _fail(f"--engine {engine!r}: expected local or spark")
    if engine == "spark":
        if enrich or split:
            _fail("--engine spark embeds whole corpora: --enrich and --split run locally")
        from openmsd.models.spark_embed import spark_embed

        result = spark_embed(str(target.table_path("papers")), str(target.root / "vectors"),
                             model, backend, batch_size=batch_size)
        if json:
            sys.stdout.write(orjson.dumps(asdict(result)).decode() + "\n")
            return
        out.print(f"{result.model}: {result.embedded:,} papers embedded in {result.parts:,} "
                  f"partitions, {result.cached:,} already were, {result.no_text:,} without "
                  f"title or abstract -> {result.directory}", highlight=False)
        return
    try:
        target.check()
        encoder = load_model(model, backend)  # weights load once the corpus checked out
        total = target.check()["build"]["counts"]["papers"]
        ids = split_papers(target, split) if split else None
        with _progress() as progress:
            result = embed_corpus(target, encoder, stored_as, batch_size,
                                  progress(f"embedding with {stored_as}",
                                           len(ids) if ids is not None else total),
                                  paper_ids=ids)
    except (CorpusError, UnknownModelError, UnsupportedBackendError, EnrichError,
            FileNotFoundError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(asdict(result)).decode() + "\n")
        return
    out.print(f"{stored_as}: {result.embedded:,} papers embedded, {result.cached:,} already were, "
              f"{result.no_text:,} without title or abstract -> {result.directory}",
              highlight=False)


index_app = typer.Typer(help="The vector index of a corpus.", no_args_is_help=True)
app.add_typer(index_app, name="index")


@index_app.command("build")
def index_build(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    model: Annotated[str, typer.Option(help="The model whose vectors to index.")]
    = DEFAULT_MODEL,
    kind: Annotated[str, typer.Option(help="flat (exact), hnsw, or auto (hnsw above "
                                           f"{HNSW_THRESHOLD:,} papers).")] = "auto",
    backend: BackendOption = None,
    full: Annotated[bool, typer.Option("--full", help="Rebuild the whole index from the "
                                                      "vectors, even when it could be "
                                                      "extended.")] = False,
    factory: Annotated[str | None, typer.Option(
        help="A FAISS index factory string (e.g. 'IVF65536,PQ48'): an approximate index built "
             "batch by batch with inverted lists on disk, nprobe chosen on a recall check "
             "(docs/scale-index.md).")] = None,
    train: Annotated[int, typer.Option(help="--factory: vectors in the training sample.")]
    = 100_000,
    rerank: Annotated[int, typer.Option(help="--factory: candidates re-ranked exactly from "
                                             "the stored vectors (0: none).")] = 100,
    target_recall: Annotated[float, typer.Option(help="--factory: the recall@10 nprobe is "
                                                      "chosen to reach.")] = 0.95,
) -> None:
    """Build the FAISS index of a model's vectors, or add the papers embedded since."""
    try:
        target = Corpus(corpus)
        model = vector_key(model, choose_backend(target, model, backend))
        if factory is None:
            built, added = build_index(target, model, kind, full)
        else:
            params = FactoryParams(factory, train=train, rerank=rerank,
                                   target_recall=target_recall)
            with _progress() as progress:
                bars: dict[str, Callable[[int], None]] = {}

                def step(stage: str, rows: int) -> None:
                    if stage not in bars:
                        bars[stage] = progress(f"index {stage}", None)
                    bars[stage](rows)
                built = build_factory_index(target, model, params, step)
            added = built.index.ntotal
    except (CorpusError, FileNotFoundError, ValueError) as error:
        _fail(str(error))
    settings = built.settings
    tuned = (f"; nprobe {settings.nprobe} (recall@{settings.k} {settings.recall:.3f} on "
             f"{settings.calibration_rows:,} held-out rows)" if settings else "")
    out.print(f"{model}: {built.index.ntotal:,} papers indexed ({added:,} added, "
              f"{type(built.index).__name__}{tuned})", highlight=False)


@app.command()
def related(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    paper: Annotated[str | None, typer.Argument(help="A paper id or DOI (or give --seeds).")]
    = None,
    model: Annotated[str | None, typer.Option(
        help="The ranker: 'hybrid-graph' (default: text and citation graph, as 'openmsd tune' "
             "weighed them), 'hybrid', 'bm25', a dense model, a graph scorer, or a fusion "
             "A+B; with --seeds, the dense model whose index to search.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="How many papers.")] = 10,
    lang: Annotated[list[str] | None, typer.Option(help="Only these languages.")] = None,
    year: Annotated[str | None, typer.Option(help="YEAR, FROM-TO, FROM- or -TO.")] = None,
    seeds: Annotated[list[Path] | None, typer.Option(
        help="A library (BibTeX, RIS, or ids one a line): papers related to all of it.")]
    = None,
    negative: Annotated[list[Path] | None, typer.Option(
        help="A library of papers to steer away from.")] = None,
    export: Annotated[str | None, typer.Option(
        help="Print the results as bib (BibTeX), ris or csl (CSL-JSON).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    backend: BackendOption = None,
) -> None:
    """The papers most related to a paper, or to a whole library (--seeds), in any language,
    with why."""
    from openmsd.fetch import FetchError, read_seed_file
    from openmsd.search.library import library_seeds, related_to_library
    from openmsd.search.ranking import rank_related

    try:
        target = Corpus(corpus)
        if seeds:
            positive, missing = library_seeds(target, [s for f in seeds
                                                       for s in read_seed_file(f)])
            negatives, missing_neg = library_seeds(target, [s for f in negative or []
                                                            for s in read_seed_file(f)])
            for name in missing + missing_neg:
                err.print(f"  not in the corpus: {name}", highlight=False, markup=False)
            if not positive:
                _fail(f"none of the {len(missing)} seeds is in {corpus}")
            err.print(f"related to these {len(positive)} papers"
                      + (f", away from {len(negatives)}" if negatives else ""), highlight=False)
            dense = model or default_dense(target)
            key = (dense if "@" in dense else
                   vector_key(dense, _index_backend(target, dense, backend)))
            results = related_to_library(target, positive, key, negatives, k, lang,
                                         _year_range(year))
        elif paper:
            results = rank_related(target, paper, _ranker(target, model, backend, HYBRID_GRAPH),
                                   k, lang, _year_range(year))
        else:
            _fail("give a paper id or DOI, or --seeds LIBRARY")
    except (CorpusError, FileNotFoundError, PaperNotFoundError, FetchError, UnknownScorerError,
            UnknownModelError) as error:
        _fail(str(error))
    _print_results(results, json, target, export)
    if not results:
        _say_why_empty(target, lang, _year_range(year), "the index holds no other paper")


@app.command("search")
def search_command(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    text: Annotated[str, typer.Argument(help="A title, an abstract or a query, any language.")],
    model: Annotated[str | None, typer.Option(
        help="The ranker: 'hybrid' (default: BM25 and the corpus's dense model, as 'openmsd "
             "tune' weighed them), 'bm25', a dense model, or a fusion A+B.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, help="How many papers.")] = 10,
    lang: Annotated[list[str] | None, typer.Option(help="Only these languages.")] = None,
    year: Annotated[str | None, typer.Option(help="YEAR, FROM-TO, FROM- or -TO.")] = None,
    export: Annotated[str | None, typer.Option(
        help="Print the results as bib (BibTeX), ris or csl (CSL-JSON).")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    backend: BackendOption = None,
) -> None:
    """The papers nearest to a free text, in any language."""
    from openmsd.search.ranking import rank_search

    try:
        target = Corpus(corpus)
        results = rank_search(target, text, _ranker(target, model, backend, HYBRID), k, lang,
                              _year_range(year))
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        _fail(str(error))
    _print_results(results, json, target, export)
    if not results:
        _say_why_empty(target, lang, _year_range(year), "the index is empty")


eval_app = typer.Typer(help="Measure models.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("retrieval", help=(
    "Rank the corpus for each query with a model and print one JSON object: model, n_queries "
    "(queries evaluated), n_docs, metrics (MAP, nDCG@10, MRR, Recall@1, Recall@10, Recall@100), "
    "skipped_queries, problems.\n\n"
    "Metrics are fractions in [0, 1], not percentages: means over the queries with a relevant "
    "document (the others are counted in skipped_queries), computed by ranx with trec_eval "
    f"semantics on the top {CUTOFF} documents per query (AP and recall divide by all relevant "
    "documents; nDCG gains are the grades). Input lines that cannot be used are left out, "
    "listed on stderr and counted in problems."))
def eval_retrieval(
    queries: Annotated[Path, typer.Option(help="Queries, JSON lines: 'id' (or '_id') and any "
                                          "of title, abstract, context, text.")],
    corpus: Annotated[Path, typer.Option(help="Documents, JSON lines, as the queries.")],
    qrels: Annotated[Path, typer.Option(help="Judgements: query_id<TAB>doc_id<TAB>relevance "
                                        "(integer grade; > 0 is relevant; a BEIR header line "
                                        "is skipped).")],
    model: Annotated[str, typer.Option(help="A ranker: 'hybrid' (RRF of BM25 and the default "
                                       "dense model), 'bm25', 'bm25-en', a registered model "
                                       "('openmsd models list'), a SentenceTransformer "
                                       "directory, a hub name, or a fusion A+B.")]
    = HYBRID,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the JSON here.")]
    = None,
    strict: Annotated[bool, typer.Option(help="Fail on the first problem in the input.")]
    = False,
    batch_size: Annotated[int, typer.Option(help="Texts per encoder batch.")] = 32,
) -> None:
    """Retrieval metrics of a model on queries, a corpus and qrels (fractions in [0, 1])."""
    try:
        result, report = evaluate_files(queries, corpus, qrels, model, strict, batch_size)
    except (RetrievalEvalError, IngestError, UnknownModelError, UnknownScorerError) as error:
        _fail(str(error))
    for problem in report.problems[:10]:
        err.print(f"  - {problem}", highlight=False, soft_wrap=True)
    if len(report.problems) > 10:
        err.print(f"  ... {len(report.problems) - 10:,} more problems", highlight=False)
    if out_file is not None:
        write_json(out_file, result)
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")


@eval_app.command("sdsm")
def eval_sdsm(
    corpus: Annotated[Path, typer.Argument(help="A corpus with relations ('openmsd relations').")],
    model: Annotated[list[str] | None, typer.Option(
        "--model", "-m", help="A ranker: a model with stored vectors ('openmsd embed'), "
                              "'bm25', 'bm25-en', 'random', a graph scorer (hidden-links "
                              "protocol), 'hybrid', 'hybrid-graph' or a fusion A+B; repeat to "
                              "compare (default: bm25, the corpus's dense model, hybrid).")]
    = None,
    protocol: Annotated[str, typer.Option(
        help="text-only (the papers' protocol: graph scorers refused) or hidden-links (a "
             "seeded half of each query's citation links hidden from the graph and "
             "predicted).")] = "text-only",
    split: Annotated[str, typer.Option(help="idt, odt, test (= idt + odt), dev or train.")]
    = "idt",
    dc: Annotated[str, typer.Option(help="Citation task's relevant papers: those the query "
                                         "cites ('cited'), those citing it ('citing'), or "
                                         "'both'.")] = "both",
    baseline: Annotated[str | None, typer.Option(help="The model others are t-tested "
                                                      "against (default: bm25 when scored, "
                                                      "else the first).")] = None,
    embed: Annotated[bool, typer.Option(help="Embed pool papers a dense model has no vector "
                                             "for first (stored, as 'openmsd embed').")] = False,
    report: Annotated[Path | None, typer.Option(help="Write sdsm.md, sdsm.json, "
                                                     "per_query.parquet and plots here.")]
    = None,
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
    json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """OpenMSD's SDSM tasks: for each query paper of the split, rank the whole split's pool;
    MAP and nDCG@10 (%) for citation, co-citation and bib-coupling prediction, with
    breakdowns by query language, direction and resource level, and paired t-tests."""
    from openmsd.eval.report import breakdown_rows, header, table_rows, write_report
    from openmsd.eval.sdsm import DIRECTIONS, RESOURCE_LEVELS, SDSMError, evaluate_sdsm

    with _progress() as start:
        bars: dict[str, Callable[[int], None]] = {}

        def advance(name: str, done: int, total: int) -> None:
            if name not in bars:
                bars[name] = start(f"ranking with {name} (queries)", total)
            bars[name](done)

        try:
            target = Corpus(corpus)
            # a model whose vectors the corpus holds only from another backend: those
            models = [_stored_key(target, name)
                      for name in model or ["bm25", default_dense(target), HYBRID]]
            result = evaluate_sdsm(target, models, split, dc, baseline, seed, embed,
                                   progress=advance, protocol=protocol)
        except (SDSMError, CorpusError, UnknownModelError, UnknownScorerError,
                FileNotFoundError) as error:
            _fail(str(error))
    summary = result.summary
    if report is not None:
        for path in write_report(result, report):
            err.print(f"wrote {path}", highlight=False)
    if json:
        sys.stdout.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    left_out = ", ".join(f"{n:,} {why}" for why, n in summary["left_out"].items() if n)
    table = Table(title=f"SDSM, split {split}: pool {summary['pool']:,} papers"
                        + (f" ({left_out} left out)" if left_out else "")
                        + "; MAP / nDCG@10 in %")
    for column in header():
        table.add_column(column.replace(" ", "\n"),
                         justify="left" if column == "model" else "right")
    for row in table_rows(summary):
        table.add_row(*row)
    out.print(table)
    counts = next(iter(summary["models"].values()))
    out.print("queries: " + ", ".join(f"{t} {counts[t]['n_queries']}" for t in
                                      ("citation", "co-citation", "bib-coupling", "average"))
              + f"; † / ‡ p < 0.05 / 0.01 against {summary['significance']['baseline']} "
                "(paired t-test on per-query AP)", highlight=False)
    for title, key, groups in (("by query language", "by_language", None),
                               ("by direction", "by_direction", list(DIRECTIONS)),
                               ("by resource level", "by_resource", list(RESOURCE_LEVELS))):
        head, rows = breakdown_rows(summary, key, groups)
        breakdown = Table(title=f"average MAP (queries) {title}")
        for column in head:
            breakdown.add_column(column, justify="left" if column == "model" else "right")
        for row in rows:
            breakdown.add_row(*row)
        out.print(breakdown)
    for name, figures in summary["models"].items():
        if "error" in figures:
            err.print(f"{name}: not scored: {figures['error']}", highlight=False)


@app.command()
def tune(
    corpus: Annotated[Path, typer.Argument(help="A corpus with relations ('openmsd relations') "
                                                "and vectors of its dense model.")],
    step: Annotated[float, typer.Option(help="Grid step of the weights (0.1: tenths).")] = 0.1,
    seed: Annotated[int, typer.Option(help="Seed of the hidden links.")] = 0,
    json: Annotated[bool, typer.Option("--json", help="Print the tuned rankers as JSON.")]
    = False,
) -> None:
    """Fit 'hybrid' (text and metadata, on the train and dev splits) and 'hybrid-graph' (text
    and citation graph, hidden links of the train and dev splits), never on test: a grid of
    weights and a learned fusion, the better kept; saved beside the index
    (CORPUS/index/ranker.json) with their provenance."""
    from openmsd.rank.tune import TuneError
    from openmsd.rank.tune import tune as fit_weights

    if not 0 < step <= 0.5:
        _fail(f"--step {step}: expected a value in (0, 0.5]")
    try:
        with _progress() as start:
            spec = fit_weights(Corpus(corpus), step, seed, start)
    except (TuneError, CorpusError, FileNotFoundError, UnknownScorerError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(spec, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for name, entry in spec.items():
        members = (", ".join(entry["members"]) if entry["method"] == "learned" else
                   " + ".join(f"{w:g}×{m}" for m, w in zip(entry["members"], entry["weights"],
                                                          strict=True)))
        best_single = max(entry["single_values"].items(), key=lambda kv: kv[1])
        out.print(f"[bold]{name}[/] ({entry['method']}): {members}; {entry['objective']} on "
                  f"{entry['split']} ({entry['queries']} queries): "
                  f"{entry['objective_value']:.2f} (best single: {best_single[0]} "
                  f"{best_single[1]:.2f})", highlight=False)


@eval_app.command("citrec")
def eval_citrec(
    corpus: Annotated[Path, typer.Argument(help="A corpus with citation contexts.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="'bm25', a registry or "
                                             "SentenceTransformer model (untrained, on the "
                                             "fundamental context), or a 'train citrec' "
                                             "directory; repeat to compare.")],
    test_fraction: Annotated[float, typer.Option(help="Share of citing papers held out "
                                                      "(as in training).")] = 0.3,
    seed: Annotated[int, typer.Option(help="Seed of the held-out draw (as in training).")]
    = 0,
    outside_references: Annotated[bool, typer.Option(
        "--outside-references", help="References outside the corpus are candidates too.")]
    = False,
    split: Annotated[str, typer.Option(help="random: held-out citing papers drawn by seed; "
                                            "time: the newest are test and candidates are no "
                                            "later than the citing paper.")] = "random",
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the JSON and a "
                                                  "Markdown table (FILE.md) here.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Citation recommendation on held-out citing papers: Recall@10, MAP@10 (positive=1, >=1,
    >=2; MP-BERT4CR Table 3), MRR and nDCG@10. Stages as models: 'prefetch' (the hybrid
    fusion of bm25 and the dense model), 'two-stage:MODEL' (MODEL reranks the prefetch's top
    200), 'fused:MODEL'."""
    from openmsd.eval.citrec import CitrecEvalError, evaluate, table3
    from openmsd.models.citrec.data import CitrecDataError

    try:
        result = evaluate(Corpus(corpus), model, test_fraction, seed, outside_references,
                          log=lambda m: err.print(m, highlight=False), split=split)
    except (CitrecEvalError, CitrecDataError, CorpusError, UnknownModelError,
            ValueError) as error:
        _fail(str(error))
    if out_file:
        write_json(out_file, result)
        from openmsd.corpus.store import atomic_path

        with atomic_path(out_file.with_suffix(".md")) as tmp:
            tmp.write_text(table3(result) + "\n")
        from openmsd.eval.citrec import plot_table3

        with atomic_path(out_file.with_suffix(".png")) as tmp:
            plot_table3(result, tmp)
    if json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out.print(table3(result), highlight=False, markup=False)


@eval_app.command("pools")
def eval_pools(
    papers: Annotated[Path, typer.Option(help="Papers: JSON lines (id, title, abstract) or "
                                              "SciDocs' metadata JSON object.")],
    task: Annotated[list[str], typer.Option(help="NAME=QRELS ('query 0 doc label' or "
                                                 "'query<TAB>doc<TAB>label' lines); repeat "
                                                 "for each task.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="A registry model, a "
                                             "SentenceTransformer directory, 'bm25' or "
                                             "'random'; repeat to compare.")]
    = [DEFAULT_MODEL],  # noqa: B006
    protocol: Annotated[list[str], typer.Option(help="clustered (SciDocs: rank the query's "
                                                     "cluster) and/or merged (OpenMSD "
                                                     "Appendix A: rank the whole pool).")]
    = ["clustered", "merged"],  # noqa: B006
    json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """OpenMSD's merged-pool protocol (Appendix A) on any tasks with labels: every task's
    papers in one pool, clusters ignored; beside SciDocs' clustered protocol."""
    from openmsd.eval.pools import evaluate_files as evaluate_pool_files

    bad = [p for p in protocol if p not in ("clustered", "merged")]
    if bad:
        _fail(f"unknown protocol {bad[0]!r}: expected clustered or merged")
    files = {}
    for item in task:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            _fail(f"--task {item!r}: expected NAME=QRELS_FILE")
        files[name] = Path(path)
    try:
        result, report = evaluate_pool_files(papers, files, model, tuple(protocol))
    except (RetrievalEvalError, UnknownModelError) as error:
        _fail(str(error))
    for problem in report.problems[:10]:
        err.print(f"  - {problem}", highlight=False, soft_wrap=True)
    if json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    columns = [*files, "average"]
    for name in protocol:
        table = Table(title=f"{name} protocol: pool {result['pool']:,} papers; "
                            "MAP / nDCG@10 in %")
        table.add_column("model")
        for column in columns:
            for metric in ("MAP", "nDCG@10"):
                table.add_column(f"{column}\n{metric}", justify="right")
        for model_name, figures in result["models"].items():
            table.add_row(model_name, *(
                "–" if figures[name][c][m] is None else f"{figures[name][c][m]:.2f}"
                for c in columns for m in ("MAP", "nDCG@10")))
        out.print(table)


@app.command("robustness")
def robustness_command(
    papers: Annotated[list[Path], typer.Argument(help="Papers with titles and abstracts: any "
                                                 "input 'openmsd ingest' reads (JSONL, S2ORC, "
                                                 "unarXive, ...); several are pooled.")],
    model: Annotated[list[str], typer.Option(
        "--model", "-m", help="A dense encoder ('openmsd models list', a SentenceTransformer "
                              "directory); repeat to compare models.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Report directory (report.json, "
                                          "report.html, plots, embedding cache).")],
    sample_size: Annotated[int, typer.Option("--sample", help="Seeded sample of papers (0: "
                                             "all).")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of every neighbour.")] = 0,
    lang: Annotated[str, typer.Option(help="Language of the texts used: a paper's own text "
                                      "in it, else its translation into it; 'any' keeps "
                                      "each paper's own text.")] = "en",
    backend: Annotated[str, typer.Option(help="torch or onnx (int8, faster on CPU; models "
                                         "without an ONNX path run with torch).")] = "torch",
    batch_size: Annotated[int, typer.Option(help="Texts per encoder batch.")] = 32,
    tsne: Annotated[bool, typer.Option(help="Draw the t-SNE of T vs T+A vectors.")] = True,
    examples_from: Annotated[list[Path], typer.Option(
        "--examples-from", help="Quote example texts only from the papers of this input "
                                "(one of PAPERS; repeatable): one whose licence lets the report "
                                "be published.")] = [],  # noqa: B006
) -> None:
    """The robustness suite (Singh & Singh): short-query alternative-self retrieval (Tasks I,
    II), the 32 textual neighbours (NN1_Ret, NN10_Ret, AOP-10/20, similarity distributions,
    the Table 5 capability matrix), t-SNE; writes DIR/report.json and DIR/report.html."""
    from openmsd.robustness.suite import RobustnessError, run_suite

    try:
        report = run_suite(papers, model, out_dir, sample_size or None, seed,
                           None if lang == "any" else lang, backend, batch_size, tsne,
                           examples_from)
    except (RobustnessError, IngestError, UnknownModelError, UnsupportedBackendError,
            ValueError) as error:
        _fail(str(error))
    for name, result in report["models"].items():
        cap = ", ".join(f"{c} {v['AOP-20']}{'*' if v['optimal'] else ''}"
                        for c, v in result["capability"].items())
        out.print(f"[bold]{name}[/]: Task I MRR {result['task1']['MRR']} T100 "
                  f"{result['task1']['T100']}; Task II MRR {result['task2']['MRR']} T100 "
                  f"{result['task2']['T100']}; AOP-20 {cap} (* optimal)", highlight=False)
    out.print(f"{report['n_papers']} papers; report in {out_dir / 'report.html'} "
              f"({report['timing_s']['total']} s)", highlight=False)


@app.command("enrich")
def enrich_command(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    method: Annotated[str, typer.Option(help="author (the source's English abstract), topn "
                                             "(English abstract cut to N tokens) or llm "
                                             "(a generated summary).")],
    length: Annotated[int, typer.Option(help="Summary length in tokens: 64 or 128.")] = 64,
    backend: Annotated[str | None, typer.Option(
        help="gemma (local Gemma-3-270M), apertium (es/ca/gl), or an OpenAI-compatible "
             "endpoint URL (http://HOST:PORT/v1). llm: default gemma; topn: translates "
             "abstracts the source has no English version of.")] = None,
    endpoint_model: Annotated[str | None, typer.Option(
        help="The model name sent to an endpoint (default: the first it lists).")] = None,
    api_key_env: Annotated[str, typer.Option(
        help="The environment variable holding the endpoint's key.")] = "OPENAI_API_KEY",
    split: Annotated[str | None, typer.Option(
        help="Only the papers of this relations split (idt, odt, test = idt + odt, ...).")]
    = None,
    batch_size: Annotated[int, typer.Option(help="Papers per batch (and per write).")] = 8,
    attempts: Annotated[int, typer.Option(help="Tries per paper when the output is empty "
                                               "or not English.")] = 2,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count the papers and "
                                                            "tokens a run would take.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
) -> None:
    """English summaries of the non-English papers (OpenMSD §7), cached per paper, method and
    length: a rerun only does what is missing. Embed them with 'openmsd embed --enrich'."""
    from openmsd.enrich.backends import load_backend
    from openmsd.enrich.generator import GeneratorError
    from openmsd.enrich.run import EnrichError, enrich, split_papers

    target = Corpus(corpus)
    try:
        target.check()
        ids = split_papers(target, split) if split else None
        name = backend or ("gemma" if method == "llm" else None)
        generator = (load_backend(name, endpoint_model, api_key_env)
                     if name and not (dry_run and name == "gemma") else None)
        with _progress() as progress:
            result = enrich(target, method, length, generator, ids, batch_size, dry_run,
                            attempts,
                            progress(f"enrich {method}{length}", None))
        if dry_run and name and generator is None:
            result.backend = name
    except (CorpusError, EnrichError, GeneratorError, ValueError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(result.summary()).decode() + "\n")
        return
    verb = "would summarise" if dry_run else "summarised"
    out.print(f"{method}{length}: {verb} {result.to_do if dry_run else result.enriched:,} "
              f"papers; {result.cached:,} cached, {result.skipped_english:,} English skipped, "
              f"{result.unknown_language:,} of unknown language, {result.no_abstract:,} "
              f"without abstract, {result.failed:,} failed -> {result.directory}",
              highlight=False)
    if dry_run:
        out.print(f"input {result.input_tokens:,} tokens, at most "
                  f"{result.max_generated_tokens:,} generated", highlight=False)
    elif result.tokens_per_s is not None:
        out.print(f"{result.seconds:.0f} s: {result.papers_per_s} papers/s, "
                  f"{result.tokens_per_s} generated tokens/s", highlight=False)
    for reason, n in result.failed_reasons.items():
        err.print(f"  failed {n:>5,}  {reason}", highlight=False)


@app.command()
def recommend(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
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
    lang: Annotated[list[str] | None, typer.Option(help="Only these languages.")] = None,
    year: Annotated[str | None, typer.Option(help="YEAR, FROM-TO, FROM- or -TO.")] = None,
    paper: Annotated[str | None, typer.Option(help="unarXive JSONL: the paper_id to read "
                                                   "(default: the first).")] = None,
    bibtex_file: Annotated[Path | None, typer.Option(
        "--bibtex", help="Write the BibTeX entries of the recommended papers here.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    backend: BackendOption = None,
) -> None:
    """Papers to cite at each citation location of a manuscript, with the sentences that
    point to them."""
    from openmsd.corpus.langid import identify
    from openmsd.corpus.store import atomic_path
    from openmsd.demo import shorten
    from openmsd.export import bibtex
    from openmsd.search.manuscript import ManuscriptError, read_manuscript
    from openmsd.search.papers import papers_by_id
    from openmsd.search.recommend import language_warning
    from openmsd.search.recommend import recommend as recommend_citations

    try:
        document = read_manuscript(manuscript, paper)
    except ManuscriptError as error:
        _fail(str(error))
    for problem in document.problems[:20]:
        err.print(f"[yellow]unknown marker[/]: {problem}", highlight=False)
    if len(document.problems) > 20:
        err.print(f"... {len(document.problems) - 20} more unknown markers", highlight=False)
    target = Corpus(corpus)
    model = model or default_dense(target)
    if is_builtin(model):
        _fail(f"recommend ranks with a dense model's index; {model!r} is not one")
    try:
        model, _, stored = model.partition("@")  # the default: a vector key MODEL@onnx
        backend = _index_backend(target, model, backend or stored or None)
        encoder = load_model(model, backend)
        warning = language_warning(identify([document.text[:2000]])[0][0], encoder)
        if warning:
            err.print(f"[yellow]warning[/]: {manuscript}: {warning}", highlight=False)
        found = recommend_citations(target, document.text, encoder, vector_key(model, backend),
                                    k, at=at,
                                    languages=lang, years=_year_range(year), explain=True,
                                    max_locations=None,  # every location of the manuscript
                                    manuscript_ids=document.ids,
                                    manuscript_title=document.title)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        _fail(f"{manuscript}: {error}")
    if at is None and found and not any(loc["markers"] for loc in found):
        err.print(f"[yellow]note[/]: {manuscript} has no citation marker: one location per "
                  f"paragraph ({len(found)})", highlight=False)
    if bibtex_file:
        ids = list(dict.fromkeys(r["paper_id"] for loc in found for r in loc["results"]))
        with atomic_path(bibtex_file) as tmp:
            tmp.write_text(bibtex(papers_by_id(Corpus(corpus), ids)), encoding="utf-8")
        err.print(f"{len(ids)} BibTeX entries -> {bibtex_file}", highlight=False)
    if not any(location["results"] for location in found):
        _say_why_empty(target, lang, _year_range(year), "the index is empty")
    if json:
        sys.stdout.write(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for location in found:
        out.print(f"[bold]sentence {location['sentence_number']}[/] "
                  f"{' '.join(location['markers'])}: {location['sentence']}", highlight=False)
        for r in location["results"]:
            title = r["title"] or r["english_title"] or ""
            out.print(f"  {r['score']:.3f}  {r['paper_id']}  [{r['language'] or '?'}] "
                      f"{r['year'] or ''}  {title}", highlight=False, markup=False)
            if r.get("drivers"):
                out.print(f"         ← {shorten(r['drivers'][0]['sentence'])}", highlight=False,
                          markup=False, style="dim")
            if r.get("co_cited_with"):
                out.print(f"         co-cited with {', '.join(r['co_cited_with'][:3])} in the "
                          "corpus", highlight=False, markup=False, style="dim")
        if location.get("cocited_set"):
            out.print(f"  cite together ({location['cites']} works): "
                      f"{', '.join(location['cocited_set'])}", highlight=False, markup=False)


@app.command()
def serve(
    corpus: Annotated[Path, typer.Argument(help="The corpus directory.")],
    host: Annotated[str, typer.Option(help="The address to listen on (loopback by default; "
                                      "0.0.0.0 exposes the server to the network).")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port.")] = 8000,
    model: Annotated[list[str] | None, typer.Option(
        help="A model with an index to serve (repeat for several; the first is the default); by "
             "default every registered model with an index, e5-small-multilingual first.")]
    = None,
    backend: BackendOption = None,
) -> None:
    """The web page and the JSON API over a corpus: http://HOST:PORT/ and /openapi.json."""
    from openmsd.server.app import serve as run_server
    from openmsd.server.resources import indexed_models

    try:
        run_server(corpus, model or indexed_models(corpus) or [DEFAULT_MODEL], host, port,
                   backend=backend)
    except (CorpusError, FileNotFoundError, UnknownModelError, ValueError) as error:
        _fail(str(error))


@app.command("train")
def train_command(
    recipe: Annotated[str, typer.Argument(help="pretrain-cl, mspt, specter, scincl or citrec "
                                              "(MP-BERT4CR, see docs/citrec.md).")],
    corpus: Annotated[Path, typer.Argument(help="A corpus with relations.")],
    out_dir: Annotated[Path, typer.Option("--out", help="The model directory to write.")],
    base: Annotated[str | None, typer.Option(help="The model to start from (default "
                                                  f"{DEFAULT_MODEL}).")] = None,
    config: Annotated[Path | None, typer.Option(help="A TOML/YAML file of training settings "
                                                     "(options given here win).")] = None,
    positives: Annotated[str | None, typer.Option(help="mspt: dc, cc, bc, dc-or-cc, "
                                                       "dc-and-cc, ...")] = None,
    loss: Annotated[str | None, typer.Option(help="contrastive (eq. 1) or triplet (eq. 2).")]
    = None,
    steps: Annotated[int | None, typer.Option(help="Training steps.")] = None,
    batch_size: Annotated[int | None, typer.Option(help="Examples a step.")] = None,
    mini_batch_size: Annotated[int | None, typer.Option(
        help="GradCache: encode this many texts at a time.")] = None,
    learning_rate: Annotated[float | None, typer.Option(help="Peak learning rate.")] = None,
    eval_steps: Annotated[int | None, typer.Option(help="Dev evaluation every N steps.")]
    = None,
    seed: Annotated[int | None, typer.Option(help="Seed.")] = None,
    epochs: Annotated[int | None, typer.Option(help="citrec: passes over the examples.")]
    = None,
    dynamic_sampling: Annotated[bool | None, typer.Option(
        "--dynamic-sampling/--no-dynamic-sampling",
        help="citrec: supplemental contexts (off: the ablation).")] = None,
    outside_references: Annotated[bool | None, typer.Option(
        "--outside-references", help="citrec: references outside the corpus are candidates "
        "too (their title or raw string).")] = None,
    enrich: Annotated[str | None, typer.Option(
        help="Train on text enriched with these English summaries (author64, topn128, "
             "llm64...: 'openmsd enrich').")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the manifest as JSON.")] = False,
) -> None:
    """Train a SentenceTransformer with one of OpenMSD's recipes; the best checkpoint on dev
    MAP is written to --out with openmsd_train.json (config, data fingerprint, metrics).
    citrec trains MP-BERT4CR (--loss triplet, mpt-tgt, mpt-src or mpt-src-tgt)."""
    if recipe == "citrec":
        _train_citrec({"corpus": str(corpus), "out": str(out_dir), "base": base, "loss": loss,
                       "max_steps": steps, "batch_size": batch_size,
                       "learning_rate": learning_rate, "seed": seed, "epochs": epochs,
                       "dynamic_sampling": dynamic_sampling,
                       "outside_references": outside_references}, config, json)
        return
    from openmsd.models.train import train
    from openmsd.models.train_config import ConfigError, TrainConfig, load_config
    from openmsd.models.train_data import TrainingDataError

    options = {"recipe": recipe, "corpus": str(corpus), "out": str(out_dir), "base": base,
               "positives": positives, "loss": loss, "max_steps": steps,
               "batch_size": batch_size, "mini_batch_size": mini_batch_size,
               "learning_rate": learning_rate, "eval_steps": eval_steps, "seed": seed,
               "enrich": enrich}
    try:
        settings = (load_config(config, **options) if config else
                    TrainConfig(**{k: v for k, v in options.items() if v is not None}))
        manifest = train(settings)
    except (ConfigError, TrainingDataError, CorpusError) as error:
        _fail(str(error))
    if json:
        sys.stdout.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    metrics = manifest["metrics"]
    out.print(f"{out_dir}: {metrics['steps']} steps, {manifest['data']['examples']:,} examples, "
              f"{metrics['examples_per_second']:.1f} examples/s; dev MAP "
              f"{metrics['dev_before']['dev_MAP']:.2f} → {metrics['dev_best']['dev_MAP']:.2f}",
              highlight=False)


def _train_citrec(options: dict[str, Any], config: Path | None, as_json: bool) -> None:
    """``openmsd train citrec``: MP-BERT4CR (openmsd.models.citrec.train)."""
    from openmsd.models.citrec.data import CitrecDataError
    from openmsd.models.citrec.train import CitrecConfigError, load_citrec_config
    from openmsd.models.citrec.train import train as train_citrec

    try:
        manifest = train_citrec(load_citrec_config(config, **options))
    except (CitrecConfigError, CitrecDataError, CorpusError) as error:
        _fail(str(error))
    if as_json:
        sys.stdout.write(orjson.dumps(manifest, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    metrics, data = manifest["metrics"], manifest["data"]
    out.print(f"{options['out']}: {metrics['steps']} steps on {data['train_examples']:,} "
              f"examples ({data['train_locations']:,} locations; {data['test_locations']:,} "
              f"held out), loss {metrics['first_loss']:.3f} → {metrics['last_loss']:.3f}, "
              f"{metrics['train_seconds']:.0f} s", highlight=False)


@app.command("experiment")
def experiment_command(
    config: Annotated[Path, typer.Argument(help="The experiment file (TOML or YAML).")],
) -> None:
    """Train and evaluate a grid of recipes × positive sets × seeds; write results.json and
    results.md (OpenMSD Tables 5/6 layout) into the experiment's out directory."""
    from openmsd.models.experiment import load_experiment, run_experiment
    from openmsd.models.train_config import ConfigError
    from openmsd.models.train_data import TrainingDataError

    try:
        experiment = load_experiment(config)
        run_experiment(experiment, log=lambda m: err.print(m, highlight=False))
    except (ConfigError, TrainingDataError, CorpusError) as error:
        _fail(str(error))
    out.print((experiment.out / "results.md").read_text(), highlight=False)


@app.command()
def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Where to build the demo corpus.")]
    = Path("demo-corpus"),
) -> None:
    """Start here: build a corpus from the sample shipped with openmsd and show related papers
    across languages, a search in three languages and citation recommendations."""
    from openmsd.demo import run as run_demo

    started = time.perf_counter()
    try:
        times = run_demo(out_dir, out, _progress)
    except (IngestError, CorpusError, FileNotFoundError, UnknownModelError,
            UnsupportedBackendError) as error:
        _fail(str(error))
    except ImportError as error:
        _fail(f"{error}: the demo needs the models extra: pip install -e \".[models]\"")
    steps = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in times.items())
    err.print(f"demo done in {time.perf_counter() - started:.0f} s ({steps})", highlight=False)


@app.command("formats")
def list_formats() -> None:
    """The source formats openmsd reads."""
    for name in formats.FORMATS:
        out.print(f"[bold]{name}[/]: {formats.get(name).description}", highlight=False)



def main() -> None:
    """The ``openmsd`` entry point: run the command, then end the process at once.

    Native libraries keep thread pools alive until their C++ static destructors run during
    ``exit()`` (ONNX Runtime's, PyTorch's, DuckDB's task scheduler); under load, one of them
    can still be joinable then and the process aborts with "terminate called without an active
    exception" (exit 134) after printing its results. So once the command is done, output is
    flushed, Python's exit handlers run, and the process ends with ``os._exit``, before any
    static destructor."""
    import atexit
    import logging
    import os

    try:
        app()
        code: int = 0
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            code = done.code or 0
        else:
            err.print(str(done.code), highlight=False)
            code = 1
    except KeyboardInterrupt:
        code = 130
    atexit._run_exitfuncs()  # what a normal exit runs first (finalizers, temp directories)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
