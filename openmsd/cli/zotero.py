"""``--to-zotero``: the results of ``openmsd related`` and ``openmsd watch`` written back into a
Zotero library as a collection (:mod:`openmsd.export.zotero`), or listed with ``--dry-run``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from openmsd.cli.output import emit, err, fail

if TYPE_CHECKING:
    from openmsd.corpus import Corpus

__all__ = ["AUTO", "DryRunOpt", "ToZoteroOpt", "ZoteroKeyOpt", "ZoteroLibraryOpt",
           "ZoteroUrlOpt", "send_to_zotero"]

AUTO = "auto"
"""``--to-zotero auto``: the collection ``openmsd: related to …`` (``openmsd: new for …``)."""

ToZoteroOpt = Annotated[str | None, typer.Option(
    "--to-zotero", metavar="COLLECTION",
    help="Write the results into this collection of your Zotero library (created, or "
         "extended), each with its DOI, abstract, language and a note saying why; 'auto': "
         "'openmsd: related to ...'. Papers already in the library are skipped.")]
ZoteroLibraryOpt = Annotated[str | None, typer.Option(
    envvar="ZOTERO_LIBRARY", show_envvar=True,
    help="With --to-zotero: user:ID (your user ID, zotero.org/settings/keys) or group:ID.")]
ZoteroKeyOpt = Annotated[str | None, typer.Option(
    envvar="ZOTERO_API_KEY", show_envvar=True,
    help="With --to-zotero: a Zotero API key with write access.")]
ZoteroUrlOpt = Annotated[str | None, typer.Option(hidden=True, help="The Zotero web API.")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="With --to-zotero: list what would be written; write nothing.")]


def send_to_zotero(corpus: Corpus, results: list[Any], name: str, about: str, why_for: str,
                   library: str | None, key: str | None, url: str | None, dry_run: bool,
                   as_json: bool) -> None:
    """Write ``results`` (related or library results, best first) into the collection
    ``name`` (``auto``: ``openmsd: related to ABOUT``), each note saying ``why_for`` and the
    result's evidence; print what was written (and skipped) on stderr, or with ``dry_run``
    what would be, on stdout."""
    # lazy: a command loads its own code only (openmsd --help start time)
    from openmsd.export import (
        ZoteroError,
        ZoteroPaper,
        collection_name,
        write_table,
        write_to_zotero,
    )
    from openmsd.search import papers_by_id

    if not library:
        fail("--to-zotero needs --zotero-library user:ID or group:ID (or $ZOTERO_LIBRARY)")
    records = {r["paper_id"]: r for r in papers_by_id(corpus, [r.paper_id for r in results])}
    papers = []
    for result in results:
        record = records.get(result.paper_id, {})
        papers.append(ZoteroPaper(
            result.paper_id, record.get("title") or result.title, record.get("doi"),
            record.get("abstract"), record.get("language"), record.get("year"),
            record.get("venue"), list(record.get("authors") or []),
            list(result.why) or ["similar title and abstract"]))
    try:
        target = collection_name(None if name == AUTO else name, about)
        done = write_to_zotero(papers, target, library, key, why_for, url, dry_run,
                               lambda message: err.print(message, highlight=False,
                                                         markup=False))
    except ZoteroError as error:
        fail(str(error))
    if dry_run:
        head = (f"would write {len(done.written)} papers into "
                + ("a new" if done.new_collection else "the") + f" collection {target!r}")
        err.print(head, highlight=False, markup=False)
        emit(done.as_dict(), as_json, write_table)
        return
    for paper, reason in done.skipped:
        err.print(f"  skipped {paper.doi or paper.paper_id}: {reason}", highlight=False,
                  markup=False)
    err.print(f"{len(done.written)} papers -> Zotero {library}, collection {target!r}"
              + (" (new)" if done.new_collection else "")
              + (f"; {len(done.skipped)} already in the library" if done.skipped else ""),
              highlight=False, markup=False)

