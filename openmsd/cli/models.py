"""``openmsd models list``, ``openmsd embed`` and ``openmsd index build``: the encoders, the
vectors they make and the index over them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from openmsd.cli.options import (
    DEFAULT_MODEL,
    HNSW_THRESHOLD,
    BackendOpt,
    CorpusArg,
    JsonOpt,
    SplitOpt,
)
from openmsd.cli.output import emit, fail, progress
from openmsd.report import IngestError

if TYPE_CHECKING:
    from openmsd.corpus import Corpus

__all__ = ["app", "index_app", "models_app"]

app = typer.Typer()
models_app = typer.Typer(help="The encoders openmsd can use.", no_args_is_help=True)
index_app = typer.Typer(help="The vector index of a corpus.", no_args_is_help=True)


@models_app.command("list")
def models_list(json: JsonOpt = False) -> None:
    """The registered models (all load offline); any SentenceTransformer directory or Hugging
    Face model name is accepted too."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.models import model_rows, models_table

    emit(model_rows(), json, models_table)


@app.command()
def embed(
    corpus: CorpusArg,
    model: Annotated[str, typer.Option(help="A registered model, a SentenceTransformer "
                                            "directory or a hub name.")] = DEFAULT_MODEL,
    batch_size: Annotated[int, typer.Option(help="Texts per forward pass.")] = 32,
    backend: Annotated[str | None, typer.Option(
        help="torch; onnx-sq8: ONNX Runtime, int8 per token, faster on CPU, PyTorch's "
             "ranking (built on first use); onnx-fp32: float32, PyTorch's vectors; onnx-q4: "
             "4-bit weights; onnx: int8 per batch, ranks less well. By default the backend of "
             "the vectors the corpus has, else the model's own where onnxruntime is installed "
             "(onnx-sq8 for e5-small-multilingual, onnx for minilm-en).")] = None,
    json: JsonOpt = False,
    enrich: Annotated[str | None, typer.Option(
        help="METHOD-LENGTH (e.g. llm-64, or llm64): embed the text enriched with 'openmsd "
             "enrich' summaries, stored as model MODEL+METHODLENGTH.")] = None,
    split: SplitOpt = None,
    engine: Annotated[str, typer.Option(help="local (this process) or spark (mapInPandas "
                                             "over partitions; see docs/scale.md).")] = "local",
) -> None:
    """Embed every paper whose text has no vector yet (resumable; never twice)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError, enriched_name, parse_variant
    from openmsd.engines import EngineError
    from openmsd.engines import engine as engine_named
    from openmsd.models import (
        UnknownModelError,
        UnsupportedBackendError,
        choose_backend,
        find_adapter,
    )
    from openmsd.rank import is_builtin
    from openmsd.relations import RelationsError, split_papers
    from openmsd.vectors import vector_key

    target = Corpus(corpus)
    if find_adapter(model, target) is not None:
        _map_adapter(target, model, backend, enrich, split, engine, json)
        return
    backend = choose_backend(target, model, backend)
    stored_as = vector_key(model, backend)
    if enrich is not None:
        try:
            stored_as = vector_key(enriched_name(model, *parse_variant(enrich)), backend)
        except ValueError as error:
            fail(f"--enrich: {error}")
    if is_builtin(model):
        fail(f"{model} is not a dense model: it has no vectors to store; evaluate or search "
             "with it directly")
    ids = None
    try:
        runner = engine_named(engine)
        ids = split_papers(target, split) if split else None
        with progress() as start:
            done = runner.embed(target, model, backend, stored_as, batch_size, ids,
                                enrich is not None, start)
    except (CorpusError, UnknownModelError, UnsupportedBackendError, RelationsError,
            FileNotFoundError, IngestError, EngineError) as error:
        fail(str(error))
    emit(done.fields, json, lambda _: done.line, indent=False)


def _map_adapter(target: Corpus, model: str, backend: str | None, enrich: str | None,
                 split: str | None, engine: str, json: bool) -> None:
    """``embed --model ADAPTER``: the stored base vectors through the adapter's head."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import CorpusError
    from openmsd.models import (
        AdapterError,
        find_adapter,
        load_vector_table,
        map_corpus,
        read_adapter,
    )

    if backend is not None or enrich is not None or split is not None or engine != "local":
        fail(f"{model} is an adapter: it maps the stored vectors of its bases (with the "
             "backends it was trained on); --backend, --enrich, --split and --engine do not "
             "apply")
    started = time.perf_counter()
    try:
        target.check()
        path = find_adapter(model, target)
        assert path is not None
        adapter = read_adapter(path)
        mapped, directory = map_corpus(target, adapter, load_vector_table)
    except (CorpusError, AdapterError, IngestError) as error:
        fail(str(error))
    done = {"model": adapter.name, "mapped": mapped, "directory": str(directory),
            "seconds": round(time.perf_counter() - started, 3)}
    emit(done, json, lambda _: (
        f"{adapter.name}: {mapped:,} papers mapped from "
        f"{' ⊕ '.join(b['key'] for b in adapter.bases)} in {done['seconds']:.1f} s -> "
        f"{directory}"), indent=False)


@index_app.command("build")
def index_build(
    corpus: CorpusArg,
    model: Annotated[str, typer.Option(help="The model whose vectors to index.")]
    = DEFAULT_MODEL,
    kind: Annotated[str, typer.Option(help="flat (exact), hnsw, or auto (hnsw above "
                                           f"{HNSW_THRESHOLD:,} papers).")] = "auto",
    backend: BackendOpt = None,
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
    json: JsonOpt = False,
) -> None:
    """Build the FAISS index of a model's vectors, or add the papers embedded since."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.index import FactoryParams, build_factory_index, build_index
    from openmsd.models import choose_backend
    from openmsd.vectors import vector_key

    try:
        target = Corpus(corpus)
        model = vector_key(model, choose_backend(target, model, backend))
        if factory is None:
            built, added = build_index(target, model, kind, full)
        else:
            params = FactoryParams(factory, train=train, rerank=rerank,
                                   target_recall=target_recall)
            with progress() as start:
                bars: dict[str, Callable[[int], None]] = {}

                def step(stage: str, rows: int) -> None:
                    if stage not in bars:
                        bars[stage] = start(f"index {stage}", None)
                    bars[stage](rows)
                built = build_factory_index(target, model, params, step)
            added = built.index.ntotal
    except (CorpusError, FileNotFoundError, ValueError) as error:
        fail(str(error))
    settings = built.settings
    tuned = (f"; nprobe {settings.nprobe} (recall@{settings.k} {settings.recall:.3f} on "
             f"{settings.calibration_rows:,} held-out rows)" if settings else "")
    summary = {"model": model, "indexed": built.index.ntotal, "added": added,
               "index": type(built.index).__name__,
               "settings": asdict(settings) if settings else None}
    emit(summary, json, lambda _: escape(
        f"{model}: {built.index.ntotal:,} papers indexed ({added:,} added, "
        f"{type(built.index).__name__}{tuned})"))


@index_app.command("related")
def index_related(
    corpus: CorpusArg,
    ranker: Annotated[str, typer.Option(help="The fused ranker whose related papers to "
                                             "store (the server's default for related).")]
    = "hybrid-graph",
    workers: Annotated[int, typer.Option(min=1, help="Processes ranking papers.")] = 1,
    json: JsonOpt = False,
) -> None:
    """Rank every paper's related papers once for this corpus build and store them beside the
    index: ``openmsd serve`` then answers a paper's related papers by lookup (unfiltered, up to
    50 results; anything else, and a corpus, vectors or index changed since, is ranked live)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.search import compute_related_lists

    started = time.perf_counter()
    try:
        with progress() as start:
            advance = start(f"related papers ({ranker})", None)
            seen = [0]

            def step(done: int, total: int) -> None:
                advance(done - seen[0])
                seen[0] = done
            target = compute_related_lists(Corpus(corpus), ranker, workers=workers,
                                           progress=step)
    except (CorpusError, FileNotFoundError, ValueError, RuntimeError) as error:
        fail(str(error))
    seconds = time.perf_counter() - started
    emit({"ranker": ranker, "papers": seen[0], "seconds": round(seconds, 1),
          "path": str(target)}, json,
         lambda _: escape(f"{ranker}: related papers of {seen[0]:,} papers in {seconds:.0f} s "
                          f"-> {target}"))
