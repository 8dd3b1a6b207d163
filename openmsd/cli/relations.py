"""``openmsd relations [build] CORPUS`` and ``openmsd relations stats CORPUS``."""

from __future__ import annotations

import tempfile
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from openmsd.cli.options import DEFAULT_MAX_GROUP, CorpusArg, JsonOpt
from openmsd.cli.output import emit, err, fail, progress

__all__ = ["relations_app"]

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


@relations_app.command("build")
def relations_build(
    corpus: CorpusArg,
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
    memory_limit: Annotated[str | None, typer.Option(
        help="DuckDB's memory limit (such as 4GB; default: OPENMSD_MEMORY_LIMIT, else a "
             "quarter of this machine's memory); beyond it DuckDB spills to a temporary "
             "folder in CORPUS/relations.")] = None,
    json: JsonOpt = False,
) -> None:
    """Derive related pairs (DC: direct citation, CC: co-citation, BC: bibliographic coupling),
    the train / dev / IDT / ODT split (in- and out-of-distribution test sets) and Specter
    triples of a corpus."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.memory import chosen_limit
    from openmsd.relations import RelationsConfig, RelationsError, SplitConfig
    from openmsd.relations import connect as connect_engine
    from openmsd.relations import derive as derive_relations

    target, made = Corpus(corpus), False
    try:
        limit = chosen_limit(memory_limit, "--memory-limit")
        config = RelationsConfig(max_group=max_group or None, seed=seed,
                                 split=SplitConfig(top_languages=top_languages, idt=idt,
                                                   odt=odt, dev=dev, seed=seed))
        target.check()  # not a corpus: nothing made in it
        made = not target.layout.relations.exists()
        target.layout.relations.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.layout.relations, prefix=".spill-") as spill:
            runner = connect_engine(engine, memory_limit=limit, spill=spill)
            with progress() as start:
                start(f"deriving relations on {engine}", None)
                result = derive_relations(target, runner, config)
            runner.close()
    except (CorpusError, RelationsError, ValueError) as error:
        if made and not any(target.layout.relations.iterdir()):  # what this run made, empty
            target.layout.relations.rmdir()
        fail(str(error))
    if json:
        emit(result, json)
        return
    problems = result["citation_problems"]
    left_out = {k: v for k, v in problems.items() if k != "rows" and v}
    if left_out:
        err.print("citations left out: " + ", ".join(f"{k} {v:,}" for k, v in left_out.items()),
                  highlight=False)
    for line in capped_lines(result.get("capped", {}), config.max_group):
        err.print(line, highlight=False)
    relations_stats_command(corpus)


def capped_lines(capped: dict[str, dict[str, int]], max_group: int | None) -> list[str]:
    """One line per relation whose groups ``--max-group`` cut, with what it left out."""
    groups = {"cc": ("co-citation", "citing papers", "references"),
              "bc": ("coupling", "cited papers", "citers")}
    lines = []
    for relation, found in capped.items():
        if found.get("groups"):
            name, holders, members = groups[relation]
            lines.append(f"{name} pairs sampled (--max-group {max_group}): {found['groups']:,} "
                         f"{holders} over the cap, {found['left_out']:,} {members} left out "
                         f"(largest group {found['largest']:,})")
    return lines


@relations_app.command("stats")
def relations_stats_command(corpus: CorpusArg, json: JsonOpt = False) -> None:
    """OpenMSD's Table 3 for a corpus: pairs per relation, split and language direction."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.relations import RelationsError, relations_stats, stats_view

    try:
        numbers = relations_stats(Corpus(corpus))
    except (CorpusError, RelationsError) as error:
        fail(str(error))
    emit(numbers, json, stats_view)
