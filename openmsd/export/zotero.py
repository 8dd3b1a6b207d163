"""Results back into a Zotero library, through the Zotero web API (pyzotero, a key that can
write): a collection created or extended with the result papers as items, each with its DOI,
title, abstract, language, year, venue and authors, and a child note saying why it is related.

* Papers already in the library, matched by DOI or by title, are skipped (and listed).
* Objects are written in batches of the API's limit (:data:`MAX_WRITE`: a paper's item and its
  note travel in the same batch, under keys made here), each with ``If-Unmodified-Since-Version``:
  when another client wrote meanwhile (412), the library is read again, papers that arrived are
  skipped, and the batch is sent again; a 429 waits for its ``Backoff`` / ``Retry-After``.
* When a batch fails, what this run wrote (items, notes and a collection it created) is deleted
  again: nothing is left half-written; :class:`ZoteroError` says what failed.
* ``dry_run`` reads the library and lists what would be written, writing nothing.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.table import Table
from rich.text import Text

from openmsd.export.names import clean, split_name
from openmsd.identifiers import normalize_doi, normalize_title

__all__ = ["MAX_WRITE", "ZoteroError", "ZoteroPaper", "ZoteroWrite", "collection_name",
           "write_table", "write_to_zotero"]

MAX_WRITE = 50
"""Objects one write request may carry (the Zotero web API's limit)."""
ATTEMPTS = 5
"""Tries of one batch (after a stale version or a 429) before giving up."""
KEY_CHARACTERS = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
"""The characters of a Zotero object key (eight of them)."""
MAX_NAME = 255
WEB_API = "https://api.zotero.org"
KEYS_PAGE = "https://www.zotero.org/settings/keys"


class ZoteroError(RuntimeError):
    """A write to Zotero that cannot be done: a key without write access, a library that
    cannot be read, a batch refused (what was written is deleted again)."""


@dataclass
class ZoteroPaper:
    """A paper to write: its corpus id and record, and why it is related (``evidence``)."""

    paper_id: str
    title: str | None
    doi: str | None = None
    abstract: str | None = None
    language: str | None = None
    year: int | None = None
    venue: str | None = None
    authors: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)


@dataclass
class ZoteroWrite:
    """What a write did (or, with ``dry_run``, would do): the collection (its key once there),
    the papers written and those skipped with why, and the requests' count."""

    library: str
    collection: str
    collection_key: str | None
    new_collection: bool
    written: list[ZoteroPaper]
    skipped: list[tuple[ZoteroPaper, str]]
    dry_run: bool
    requests: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"library": self.library, "collection": self.collection,
                "collection_key": self.collection_key, "new_collection": self.new_collection,
                "dry_run": self.dry_run,
                "written": [{"paper_id": p.paper_id, "doi": p.doi, "title": p.title,
                             "language": p.language, "evidence": p.evidence}
                            for p in self.written],
                "skipped": [{"paper_id": p.paper_id, "doi": p.doi, "title": p.title,
                             "reason": why} for p, why in self.skipped]}


def write_table(data: dict[str, Any]) -> Table:
    """A write (:meth:`ZoteroWrite.as_dict`) as a table: one row a paper, its action (write or
    skip), language, DOI, title and why (the evidence, or why it is skipped); every cell
    literal text."""
    table = Table(box=None, padding=(0, 1), show_edge=False)
    for column in ("action", "lang", "doi", "title", "why"):
        table.add_column(column, overflow="fold")
    for row in data["written"]:
        table.add_row("write", Text(row["language"] or "?"), Text(row["doi"] or ""),
                      Text(row["title"] or ""), Text("; ".join(row["evidence"])))
    for row in data["skipped"]:
        table.add_row("skip", "", Text(row["doi"] or ""), Text(row["title"] or ""),
                      Text(row["reason"]))
    return table


def collection_name(name: str | None, about: str) -> str:
    """The collection to write to: ``name`` without control or bidi characters, else
    ``openmsd: related to ABOUT``; at most 255 characters. ``ZoteroError`` when nothing is
    left of the name.

    >>> collection_name(None, "Campylocentrum Benth.")
    'openmsd: related to Campylocentrum Benth.'
    >>> collection_name("Reading\\u202e list/2026", "x")
    'Reading list/2026'
    """
    if name is None:
        return clean(f"openmsd: related to {about}")[:MAX_NAME].rstrip()
    cleaned = clean(name)
    if not cleaned:
        raise ZoteroError(f"--to-zotero {name!r}: an empty collection name (control and "
                          "bidirectional characters are removed)")
    return cleaned[:MAX_NAME].rstrip()


def _key() -> str:
    return "".join(secrets.choice(KEY_CHARACTERS) for _ in range(8))


def _note(paper: ZoteroPaper, why_for: str) -> str:
    """The note's HTML: why the paper is related, one line per piece of evidence."""
    lines = "".join(f"<li>{html.escape(e)}</li>" for e in paper.evidence) or \
        "<li>similar title and abstract</li>"
    return (f"<p><strong>openmsd</strong>: {html.escape(why_for)}</p><ul>{lines}</ul>"
            f"<p>openmsd paper id: {html.escape(paper.paper_id)}</p>")


def _item(paper: ZoteroPaper, template: dict[str, Any], collection: str) -> dict[str, Any]:
    """A journal article item of ``paper`` from the API's ``template``."""
    item = {**template, "title": clean(paper.title or paper.doi or paper.paper_id),
            "collections": [collection]}
    fields = {"abstractNote": paper.abstract, "DOI": normalize_doi(paper.doi),
              "language": paper.language, "date": str(paper.year) if paper.year else None,
              "publicationTitle": paper.venue, "extra": f"openmsd: {paper.paper_id}"}
    item |= {name: clean(value) for name, value in fields.items()
             if value and name in template}
    if "creators" in template:
        item["creators"] = [{"creatorType": "author", "lastName": last, "firstName": first}
                            for last, first in map(split_name, paper.authors) if last]
    return item


class _Writer:
    """One write to one library with one pyzotero client."""

    def __init__(self, client: Any, library: str, tell: Callable[[str], None]):
        self.client, self.library, self.tell = client, library, tell
        self.requests = 0

    def call(self, what: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)`` with 429s waited out (pyzotero records the
        ``Backoff``/``Retry-After`` and waits before its next request)."""
        # optional: the fetch extra; pyzotero takes ~0.2 s to import
        from pyzotero import errors as zotero_errors

        for _ in range(ATTEMPTS):
            self.requests += 1
            try:
                answer = method(*args, **kwargs)
            except zotero_errors.PreConditionFailedError:
                raise
            except zotero_errors.TooManyRetriesError:
                continue
            except ValueError:  # a 429's text body, read as JSON by pyzotero
                if self.status() == 429:
                    self.tell("rate-limited: waiting for the API's Backoff")
                    continue
                raise
            if self.status() == 429:
                self.tell("rate-limited: waiting for the API's Backoff")
                continue
            return answer
        raise ZoteroError(f"{self.library}: {what}: still rate-limited after {ATTEMPTS} "
                          "tries; try again later")

    def status(self) -> int | None:
        request = getattr(self.client, "request", None)
        return getattr(request, "status_code", None)

    def version(self) -> int:
        return int(self.call("reading the library version", self.client.last_modified_version))

    def written_version(self) -> int:
        """The library version a write answered with."""
        return int(self.client.request.headers["Last-Modified-Version"])

    def check_write(self) -> None:
        """``ZoteroError`` naming the permission when the key cannot write this library."""
        kind, _, number = self.library.partition(":")
        try:
            info = self.call("reading the key's permissions", self.client.key_info)
        except Exception as error:
            raise ZoteroError(f"{self.library}: the Zotero API refused the key ({said(error)}); "
                              f"check it at {KEYS_PAGE}") from None
        access = (info or {}).get("access", {})
        if kind == "user":
            can = bool(access.get("user", {}).get("write"))
        else:
            groups = access.get("groups", {})
            can = bool(groups.get(number, groups.get("all", {})).get("write"))
        if not can:
            where = "Personal Library" if kind == "user" else f"group {number}"
            raise ZoteroError(f"{self.library}: the key has no write access: give it "
                              f"'Allow write access' ({where}) at {KEYS_PAGE}")

    def held(self) -> tuple[set[str], set[str]]:
        """The DOIs and titles (normalised) of the library's items."""
        items = self.call("reading the library", lambda: self.client.everything(
            self.client.items()))
        dois, titles = set(), set()
        for item in items:
            data = item.get("data", item)
            if data.get("itemType") in ("note", "attachment", "annotation"):
                continue
            doi = normalize_doi(data.get("DOI"))
            if not doi and (found := re.search(r"(?im)^DOI:\s*(\S+)", data.get("extra") or "")):
                doi = normalize_doi(found.group(1))
            if doi:
                dois.add(doi)
            if normalize_title(data.get("title")):
                titles.add(normalize_title(data.get("title")))
        return dois, titles

    def collection(self, name: str) -> str | None:
        """The key of the library's collection named ``name`` (None: none)."""
        found = self.call("reading the collections", lambda: self.client.everything(
            self.client.collections()))
        for entry in found:
            data = entry.get("data", entry)
            if clean(data.get("name") or "") == name:
                return data["key"]
        return None

    def delete(self, keys: list[str], collection: str | None) -> None:
        """Delete the items ``keys`` and the ``collection`` this run wrote."""
        for start in range(0, len(keys), MAX_WRITE):
            chunk = [{"key": k} for k in keys[start:start + MAX_WRITE]]
            self.call("deleting what was written", self.client.delete_item, chunk,
                      last_modified=self.version())
        if collection is not None:
            self.call("deleting the collection", self.client.delete_collection,
                      [{"key": collection}], last_modified=self.version())


def said(error: BaseException) -> str:
    """An API error in one line: ``HTTP 412: the answer's text``, else the error's text.

    >>> said(RuntimeError("\\nCode: 500\\nURL: http://x/items\\nMethod: POST\\nResponse: error"))
    'HTTP 500: error'
    """
    text = str(error)
    code = re.search(r"Code: (\d+)", text)
    if code:
        answer = re.search(r"Response: (.*)", text, re.DOTALL)
        detail = " ".join((answer.group(1) if answer else "").split())[:200]
        return f"HTTP {code.group(1)}" + (f": {detail}" if detail else "")
    return " ".join(text.split())[:300] or type(error).__name__


def _skip_reason(paper: ZoteroPaper, dois: set[str], titles: set[str]) -> str | None:
    doi = normalize_doi(paper.doi)
    if doi and doi in dois:
        return "in the library (same DOI)"
    if normalize_title(paper.title) and normalize_title(paper.title) in titles:
        return "in the library (same title)"
    return None


def write_to_zotero(papers: list[ZoteroPaper], collection: str, library: str,
                    api_key: str | None, why_for: str, api_url: str | None = None,
                    dry_run: bool = False, tell: Callable[[str], None] = lambda _: None,
                    ) -> ZoteroWrite:
    """Write ``papers`` into the collection named ``collection`` (created when the library
    has none of that name) of Zotero library ``library`` (``user:ID`` or ``group:ID``), with
    ``api_key`` through the web API (``api_url``, default api.zotero.org); each item's note
    says ``why_for`` and the paper's evidence. ``dry_run``: read, list, write nothing.
    ``tell`` hears about waits and retries."""
    # optional: the fetch extra; pyzotero takes ~0.2 s to import
    from pyzotero import errors as zotero_errors
    from pyzotero import zotero

    kind, _, number = library.partition(":")
    if kind not in ("user", "group") or not number.isdigit():
        raise ZoteroError(f"--zotero-library {library!r}: expected user:ID or group:ID (your "
                          f"user ID is at {KEYS_PAGE})")
    if not api_key:
        raise ZoteroError(f"{library}: no Zotero API key: set ZOTERO_API_KEY or pass "
                          f"--zotero-key (a key with write access, from {KEYS_PAGE})")
    client = zotero.Zotero(number, kind, api_key)
    client.endpoint = (api_url or WEB_API).rstrip("/")
    writer = _Writer(client, library, tell)
    try:
        if not dry_run:
            writer.check_write()
        dois, titles = writer.held()
        existing = writer.collection(collection)
    except ZoteroError:
        raise
    except zotero_errors.UserNotAuthorisedError:
        raise ZoteroError(f"{library}: the Zotero API refused the key (403): can it read "
                          f"this library? ({KEYS_PAGE})") from None
    except Exception as error:
        raise ZoteroError(f"{library}: cannot read the library ({said(error)})") from None
    todo, skipped = [], []
    for paper in dict((p.paper_id, p) for p in papers).values():
        reason = _skip_reason(paper, dois, titles)
        if reason:
            skipped.append((paper, reason))
        else:
            todo.append(paper)
    report = ZoteroWrite(library, collection, existing, existing is None, todo, skipped,
                         dry_run)
    if dry_run or not todo:
        report.requests = writer.requests
        return report
    created: list[str] = []
    new_collection: str | None = None
    try:
        version = writer.version()
        if existing is None:
            new_collection, version = _create_collection(writer, collection, version)
            report.collection_key = new_collection
        written = _write_items(writer, todo, report.collection_key or "", why_for, version,
                               created, skipped)
        report.written = written
    except Exception as error:
        undone = _undo(writer, created, new_collection)
        reason = str(error) if isinstance(error, ZoteroError) else f"{library}: {said(error)}"
        raise ZoteroError(f"{reason}; {undone}") from None
    report.requests = writer.requests
    return report


def _create_collection(writer: _Writer, name: str, version: int) -> tuple[str, int]:
    """Create the collection ``name``; its key and the library version after."""
    # optional: the fetch extra; pyzotero takes ~0.2 s to import
    from pyzotero import errors as zotero_errors

    for _ in range(ATTEMPTS):
        try:
            answer = writer.call("creating the collection", writer.client.create_collections,
                                 [{"name": name}], last_modified=version)
        except zotero_errors.PreConditionFailedError:
            writer.tell("the library changed meanwhile: reading it again")
            existing = writer.collection(name)
            if existing is not None:
                raise ZoteroError(f"{writer.library}: collection {name!r} was created "
                                  "meanwhile by another client; run again to extend it") from None
            version = writer.version()
            continue
        failed = answer.get("failed") or {}
        if failed:
            first = next(iter(failed.values()))
            raise ZoteroError(f"{writer.library}: collection {name!r} refused: "
                              f"{first.get('message')} ({first.get('code')})")
        return next(iter(answer["success"].values())), writer.written_version()
    raise ZoteroError(f"{writer.library}: the library kept changing; try again")


def _write_items(writer: _Writer, papers: list[ZoteroPaper], collection: str, why_for: str,
                 version: int, created: list[str],
                 skipped: list[tuple[ZoteroPaper, str]]) -> list[ZoteroPaper]:
    """Write each paper's item and note, :data:`MAX_WRITE` objects a batch; the papers
    written. Keys written are appended to ``created`` as they are."""
    # optional: the fetch extra; pyzotero takes ~0.2 s to import
    from pyzotero import errors as zotero_errors

    template = writer.call("reading the item template", writer.client.item_template,
                           "journalArticle")
    template = {k: v for k, v in template.items() if k not in ("key", "version")}
    pending = list(papers)
    written: list[ZoteroPaper] = []
    per_batch = MAX_WRITE // 2
    while pending:
        batch, attempts = pending[:per_batch], 0
        while True:
            objects = []
            for paper in batch:
                key = _key()
                objects += [{**_item(paper, template, collection), "key": key},
                            {"itemType": "note", "note": _note(paper, why_for),
                             "parentItem": key, "tags": [], "collections": [],
                             "relations": {}}]
            try:
                answer = writer.call("writing items", writer.client.create_items, objects,
                                     last_modified=version)
            except zotero_errors.PreConditionFailedError:
                attempts += 1
                if attempts >= ATTEMPTS:
                    raise ZoteroError(f"{writer.library}: the library kept changing; "
                                      "try again") from None
                writer.tell("the library changed meanwhile: reading it again")
                version = writer.version()
                dois, titles = writer.held()
                kept = []
                for paper in batch:
                    reason = _skip_reason(paper, dois, titles)
                    if reason:
                        skipped.append((paper, reason))
                    else:
                        kept.append(paper)
                batch = kept
                if not batch:
                    break
                continue
            created.extend(answer.get("success", {}).values())
            failed = answer.get("failed") or {}
            if failed:
                index, first = next(iter(failed.items()))
                paper = batch[int(index) // 2]
                raise ZoteroError(f"{writer.library}: Zotero refused {paper.paper_id} "
                                  f"({first.get('code')}: {first.get('message')})")
            version = writer.written_version()
            written += batch
            break
        pending = pending[per_batch:]
    return written


def _undo(writer: _Writer, created: list[str], collection: str | None) -> str:
    """Delete what this run wrote; what a message says about it."""
    if not created and collection is None:
        return "nothing was written"
    try:
        writer.delete(created, collection)
    except Exception as error:
        return (f"deleting what was written failed too ({said(error)}): items "
                f"{', '.join(created)} remain")
    return (f"what was written ({len(created)} objects"
            + (", a new collection" if collection else "") + ") was deleted again")
