"""``openmsd watch``: the papers new for a library since its last watch, ranked for it, as a
table, an Atom feed and an HTML digest (:mod:`openmsd.search.watch`,
:mod:`openmsd.present.feed`). ``openmsd update --watch`` runs it after an update."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from openmsd.cli.options import (
    BackendOpt,
    CorpusArg,
    IncludeNonPapersOpt,
    JsonOpt,
    NegativeOpt,
)
from openmsd.cli.output import emit, err, fail, out, piped, say_left_out, warn
from openmsd.cli.zotero import (
    DryRunOpt,
    ToZoteroOpt,
    ZoteroKeyOpt,
    ZoteroLibraryOpt,
    ZoteroUrlOpt,
    send_to_zotero,
)

__all__ = ["WATCH_K", "AtomOpt", "HtmlOpt", "app", "check_outputs", "run_watch"]

WATCH_K = 50
"""New papers a feed lists at most."""

app = typer.Typer()


def _since(value: str | None) -> datetime | None:
    """``--since`` as a UTC time: a date (its midnight) or an ISO date and time."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        fail(f"--since {value!r}: expected a date YYYY-MM-DD (or YYYY-MM-DDTHH:MM)")
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _check_target(option: str, target: Path | None) -> None:
    """Fail before any work when ``target`` cannot be written (a directory, a missing or
    read-only folder)."""
    if target is None:
        return
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        fail(f"{option} {target}: a directory; give a file name")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        fail(f"{option} {target}: cannot write there ({folder} is not a writable folder)")


def check_outputs(seeds: list[Path], atom_file: Path | None, html_file: Path | None) -> None:
    """Fail before any work for a seed file that is not there or an output that cannot be
    written (``update --watch`` checks them before it fetches)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.fetch import is_zotero_local

    for path in seeds:
        if not is_zotero_local(path) and not path.is_file():
            fail(f"{path}: no such seed file (a BibTeX, RIS or ids file)")
    _check_target("--atom", atom_file)
    _check_target("--html", html_file)


def _write(option: str, target: Path, data: bytes) -> None:
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.io import atomic_path

    try:
        with atomic_path(target) as tmp:
            tmp.write_bytes(data)
    except OSError as error:
        fail(f"{option} {target}: cannot write it: {error.strerror or error}")


def run_watch(corpus: Path, seeds: list[Path], negative: list[Path] | None,
              since: str | None, atom_file: Path | None, html_file: Path | None, k: int,
              model: str | None, backend: str | None, base_url: str | None,
              as_json: bool, zotero: dict[str, Any] | None = None,
              include_non_papers: bool = False) -> None:
    """Watch ``corpus`` for the library in ``seeds``; print the new papers (or "nothing new
    since DATE"), write the feed files, write them into a Zotero collection (``zotero``:
    :func:`openmsd.cli.zotero.send_to_zotero`'s ``name``, ``library``, ``key``, ``url``,
    ``dry_run``), then store the watch (not on a dry run)."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.corpus import Corpus, CorpusError
    from openmsd.fetch import FetchError, read_seeds
    from openmsd.present import atom, digest_html, nothing_new, results_table, results_view
    from openmsd.rank import RankerChoiceError, UnknownScorerError, dense_key
    from openmsd.search import PaperNotFoundError, library_seeds, record_watch, watch_library

    check_outputs([*seeds, *(negative or [])], atom_file, html_file)
    start = _since(since)
    try:
        target = Corpus(corpus)
        target.check()
        wanted = [s for f in seeds for s in read_seeds(f, warn)]
        positive, missing = library_seeds(target, wanted)
        negatives, missing_neg = library_seeds(target, [s for f in negative or []
                                                        for s in read_seeds(f, warn)])
        for name in missing + missing_neg:
            err.print(f"  not in the corpus: {name}", highlight=False, markup=False)
        if not positive:
            fail(f"{', '.join(map(str, seeds))}: none of its {len(wanted)} seeds is a paper of "
                 f"{corpus}" + (" (the file lists no seed)" if not wanted else ""))
        found = watch_library(target, positive, negatives, dense_key(target, model, backend), k,
                              start, record=False,
                              include_non_papers=include_non_papers)
    except (CorpusError, FileNotFoundError, PaperNotFoundError, FetchError,
            UnknownScorerError, RankerChoiceError) as error:
        fail(str(error))
    title = f"New for a library of {len(positive)} papers in {target.root.name}"
    if zotero and zotero.get("name"):
        about = f"{', '.join(map(str, seeds))} ({len(positive)} papers)"
        send_to_zotero(target, found.results, zotero["name"], about,
                       f"new in {target.root.name}, related to {about}", zotero["library"],
                       zotero["key"], zotero["url"], zotero["dry_run"], as_json)
        if zotero["dry_run"]:
            return
    if atom_file:
        _write("--atom", atom_file, atom(found, title, base_url))
    if html_file:
        _write("--html", html_file, digest_html(found, title, base_url).encode())
    record_watch(target, found)
    if found.unranked:
        err.print(f"[yellow]note[/]: {len(found.unranked)} new papers have no vector (no title "
                  "or abstract?) and are not ranked", highlight=False)
    if as_json:
        emit(found.as_dict(), True)
    elif not found.new:
        out.print(f"{corpus}: {nothing_new(found)}", highlight=False, markup=False,
                  soft_wrap=True)
    else:
        since_text = found.since.strftime("%Y-%m-%d %H:%M UTC") if found.since else "the start"
        err.print(f"{found.new} new papers since {since_text}; the first {len(found.results)} "
                  f"ranked for these {len(positive)} papers", highlight=False)
        emit(found.results, False, results_table if piped() else results_view)
    say_left_out(found.left_out)
    for option, written in (("atom feed", atom_file), ("HTML digest", html_file)):
        if written:
            err.print(f"{option} -> {written}", highlight=False, markup=False)


SeedsOpt = Annotated[list[Path], typer.Option(
    help="The library: BibTeX, RIS, ids one a line, or zotero:local or "
         "zotero:local/COLLECTION (the running Zotero desktop, through its local API).")]
SinceOpt = Annotated[str | None, typer.Option(
    help="YYYY-MM-DD: the papers that entered the corpus since then (default: since the "
         "previous watch of these seeds; every paper the first time).")]
AtomOpt = Annotated[Path | None, typer.Option("--atom", help="Write an Atom feed here.")]
HtmlOpt = Annotated[Path | None, typer.Option("--html", help="Write an HTML digest here.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    help="Link entries to the paper pages of 'openmsd serve' at this address (default: "
         "their DOI).")]


@app.command("watch")
def watch_command(
    corpus: CorpusArg,
    seeds: SeedsOpt,
    negative: NegativeOpt = None,
    since: SinceOpt = None,
    atom_file: AtomOpt = None,
    html_file: HtmlOpt = None,
    k: Annotated[int, typer.Option("-k", min=1, help="New papers listed at most.")] = WATCH_K,
    model: Annotated[str | None, typer.Option(help="The dense model whose index ranks.")]
    = None,
    backend: BackendOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    to_zotero: ToZoteroOpt = None,
    zotero_library: ZoteroLibraryOpt = None,
    zotero_key: ZoteroKeyOpt = None,
    zotero_url: ZoteroUrlOpt = None,
    dry_run: DryRunOpt = False,
    include_non_papers: IncludeNonPapersOpt = False,
) -> None:
    """The papers that entered the corpus since the last watch of this library (or
    --since), ranked for the whole library across languages, with why; as a table, an Atom
    feed, an HTML digest and (--to-zotero) a Zotero collection."""
    if dry_run and not to_zotero:
        fail("--dry-run goes with --to-zotero")
    run_watch(corpus, seeds, negative, since, atom_file, html_file, k, model, backend,
              base_url, json, {"name": to_zotero, "library": zotero_library, "key": zotero_key,
                               "url": zotero_url, "dry_run": dry_run},
              include_non_papers)
