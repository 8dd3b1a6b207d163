"""``openmsd enrich``: English summaries of the non-English papers of a corpus."""

from __future__ import annotations

from typing import Annotated

import typer

from openmsd.cli.options import CorpusArg, JsonOpt, SplitOpt
from openmsd.cli.output import emit, err, fail, out, progress

__all__ = ["app"]

app = typer.Typer()


@app.command("enrich")
def enrich_command(
    corpus: CorpusArg,
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
    split: SplitOpt = None,
    batch_size: Annotated[int, typer.Option(help="Papers per batch (and per write).")] = 8,
    attempts: Annotated[int, typer.Option(help="Tries per paper when the output is empty "
                                               "or not English.")] = 2,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count the papers and "
                                                            "tokens a run would take.")] = False,
    json: JsonOpt = False,
) -> None:
    """English summaries of the non-English papers (OpenMSD §7), cached per paper, method and
    length: a rerun only does what is missing. Embed them with 'openmsd embed --enrich'."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.enrich import EnrichError, GeneratorError, enrich, load_backend
    from openmsd.relations import split_papers

    target = Corpus(corpus)
    try:
        target.check()
        ids = split_papers(target, split) if split else None
        name = backend or ("gemma" if method == "llm" else None)
        generator = (load_backend(name, endpoint_model, api_key_env)
                     if name and not (dry_run and name == "gemma") else None)
        with progress() as start:
            result = enrich(target, method, length, generator, ids, batch_size, dry_run,
                            attempts, start(f"enrich {method}{length}", None))
        if dry_run and name and generator is None:
            result.backend = name
    except (CorpusError, EnrichError, GeneratorError, ValueError) as error:
        fail(str(error))
    if json:
        emit(result.summary(), json, indent=False)
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
