"""``openmsd eval retrieval|sdsm|citrec|pools``: measuring rankers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from openmsd.cli.options import CUTOFF, DEFAULT_MODEL, HYBRID, JsonOpt, StrictOpt
from openmsd.cli.output import emit, err, fail, out, progress
from openmsd.report import IngestError

if TYPE_CHECKING:
    from openmsd.corpus import Corpus

__all__ = ["eval_app"]

eval_app = typer.Typer(help="Measure models.", no_args_is_help=True)


def _print_problems(problems: list, limit: int = 10, more: bool = False) -> None:
    """The first ``limit`` input problems on stderr (with ``more``, a count of the rest)."""
    for problem in problems[:limit]:
        err.print(f"  - {problem}", highlight=False, soft_wrap=True)
    if more and len(problems) > limit:
        err.print(f"  ... {len(problems) - limit:,} more problems", highlight=False)


def _stored_key(corpus: Corpus, model: str) -> str:
    """``model``, or its vector key of another backend when the corpus has only that one."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.vectors import stored_backends, vector_key

    stored = stored_backends(corpus, model)
    return vector_key(model, stored[0]) if stored and "torch" not in stored else model


@eval_app.command("retrieval", help=(
    "Rank the corpus for each query with a model and print one JSON object: model, n_queries "
    "(queries evaluated), n_docs, metrics (MAP, nDCG@10, MRR, Recall@1, Recall@10, Recall@100), "
    "skipped_queries, problems.\n\n"
    "Metrics are fractions in [0, 1], not percentages: means over the queries with a relevant "
    "document (the others are counted in skipped_queries), computed with trec_eval "
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
    model: Annotated[str, typer.Option(help="A ranker: 'hybrid' (z-score fusion of BM25 and the "
                                       "default dense model), 'bm25', 'bm25-en', a registered "
                                       "model ('openmsd models list'), a SentenceTransformer "
                                       "directory, a hub name, or a fusion A+B.")]
    = HYBRID,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the JSON here.")]
    = None,
    strict: StrictOpt = False,
    batch_size: Annotated[int, typer.Option(help="Texts per encoder batch.")] = 32,
) -> None:
    """Retrieval metrics of a model on queries, a corpus and qrels (fractions in [0, 1])."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.eval import evaluate_files
    from openmsd.ingest import RetrievalEvalError
    from openmsd.io import write_json
    from openmsd.models import UnknownModelError
    from openmsd.rank import UnknownScorerError

    try:
        result, report = evaluate_files(queries, corpus, qrels, model, strict, batch_size)
    except (RetrievalEvalError, IngestError, UnknownModelError, UnknownScorerError) as error:
        fail(str(error))
    _print_problems(report.problems, more=True)
    if out_file is not None:
        write_json(out_file, result)
    emit(result, True)


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
    json: JsonOpt = False,
) -> None:
    """OpenMSD's SDSM tasks: for each query paper of the split, rank the whole split's pool;
    MAP and nDCG@10 (%) for citation, co-citation and bib-coupling prediction, with
    breakdowns by query language, direction and resource level, and paired t-tests."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import SDSMError, evaluate_sdsm, sdsm_view, write_report
    from openmsd.models import UnknownModelError
    from openmsd.rank import RankerSpec, UnknownScorerError, default_dense

    with progress() as start:
        bars: dict[str, Callable[[int], None]] = {}

        def advance(name: str, done: int, total: int) -> None:
            if name not in bars:
                bars[name] = start(f"ranking with {name} (queries)", total)
            bars[name](done)

        try:
            target = Corpus(corpus)
            for name in model or []:
                RankerSpec.parse(name, typed=True)  # a bad name fails here; an old one is said
            # a model whose vectors the corpus holds only from another backend: those
            models = [_stored_key(target, name)
                      for name in model or ["bm25", default_dense(target), HYBRID]]
            result = evaluate_sdsm(target, models, split, dc, baseline, seed, embed,
                                   progress=advance, protocol=protocol)
        except (SDSMError, CorpusError, UnknownModelError, UnknownScorerError,
                FileNotFoundError) as error:
            fail(str(error))
    summary = result.summary
    if report is not None:
        for path in write_report(result, report):
            err.print(f"wrote {path}", highlight=False)
    emit(summary, json, lambda s: sdsm_view(s, split))
    if not json:
        for name, figures in summary["models"].items():
            if "error" in figures:
                err.print(f"{name}: not scored: {figures['error']}", highlight=False)


@eval_app.command("citrec")
def eval_citrec(
    corpus: Annotated[Path, typer.Argument(help="A corpus with citation contexts.")],
    model: Annotated[list[str], typer.Option("--model", "-m", help="'bm25', a registry or "
                                             "SentenceTransformer model (untrained, on the "
                                             "fundamental context), an adapter directory, "
                                             "a fusion A+B, a stage or a 'train citrec' "
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
    json: JsonOpt = False,
) -> None:
    """Citation recommendation on held-out citing papers: Recall@10, MAP@10 (positive=1, >=1,
    >=2; MP-BERT4CR Table 3), MRR and nDCG@10. Stages as models: 'prefetch' (the hybrid
    fusion of bm25 and the dense model), 'two-stage:MODEL' (MODEL reranks the prefetch's top
    200), 'fused:MODEL' (the prefetch's top 200 ordered by MODEL's learned rerank fusion: the
    prefetch's rank, MODEL's whole-manuscript cosine and the citing sentence's own BM25 and
    dense scores; a model without one: the rank fusion weighted on dev). The prefetch with
    another dense member, an adapter say, is the fusion 'bm25@same+MODEL' (MODEL: a name or
    an adapter directory), compared beside 'prefetch'."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.eval import CitrecEvalError, evaluate, table3
    from openmsd.eval import write_citrec_report as write_report
    from openmsd.models import UnknownModelError
    from openmsd.rank import CitrecDataError

    try:
        result = evaluate(Corpus(corpus), model, test_fraction, seed, outside_references,
                          log=lambda m: err.print(m, highlight=False), split=split)
    except (CitrecEvalError, CitrecDataError, CorpusError, UnknownModelError,
            ValueError) as error:
        fail(str(error))
    if out_file:
        write_report(result, out_file)
    if json:
        emit(result, json)
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
    json: JsonOpt = False,
) -> None:
    """OpenMSD's merged-pool protocol (Appendix A) on any tasks with labels: every task's
    papers in one pool, clusters ignored; beside SciDocs' clustered protocol."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.eval import evaluate_pool_files, pools_view
    from openmsd.ingest import RetrievalEvalError
    from openmsd.models import UnknownModelError

    bad = [p for p in protocol if p not in ("clustered", "merged")]
    if bad:
        fail(f"unknown protocol {bad[0]!r}: expected clustered or merged")
    files = {}
    for item in task:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            fail(f"--task {item!r}: expected NAME=QRELS_FILE")
        files[name] = Path(path)
    try:
        result, report = evaluate_pool_files(papers, files, model, tuple(protocol))
    except (RetrievalEvalError, UnknownModelError) as error:
        fail(str(error))
    _print_problems(report.problems)
    emit(result, json, lambda r: pools_view(r, list(files), protocol))
