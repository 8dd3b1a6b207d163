"""A local HTTP server on loopback that answers as the public OpenAlex, Crossref and Zotero web
APIs document: OpenAlex ``/works/{id}`` (301 for a merged id, 404 with
``{"error", "message"}``), ``/works?filter=...&search=...&cursor=...&per-page=...`` with
``meta.next_cursor`` (null with empty results at the end), works with
``abstract_inverted_index``; Crossref ``/works/{doi}`` (``{"status": "ok", "message-type":
"work", "message": {...}}``, 404 ``Resource not found.``); Zotero ``/users/{id}/collections/
{key}/items/top`` (a JSON array, ``Total-Results`` and ``Link`` paging, 403 for a wrong key).

OpenAlex answers as documented since February 13, 2026 ("Authentication & Pricing",
developers.openalex.org): the key in the ``api_key`` parameter (an ``Authorization`` header is
not read), a daily budget in USD per key (``World.keys``) or without one
(``World.keyless_usd``); singletons free, list calls $0.0001, searches $0.001; every answer
carries ``X-RateLimit-Limit-USD``, ``X-RateLimit-Remaining-USD`` and ``X-RateLimit-Cost-USD``;
a call the budget left cannot pay is a 429 (with ``Retry-After`` and ``X-RateLimit-Reset``, the
seconds to midnight UTC, and ``X-RateLimit-Cost-Required-USD``), an unknown key a 401.

As OpenAlex's API proxy answers in 2026: the date filters ``from_updated_date``,
``to_updated_date``, ``from_created_date``, ``to_created_date`` (and sorting by them) are for
paid plans (``World.paid_keys``): any other key, or none, gets a 429 ``{"error": "Plan upgrade
required", "message": ...}`` without budget headers, before any billing; a ``search`` or
``search.semantic`` value over 1,500 characters from a key not on a paid plan is a 400
``{"error": "Search query too long", ...}``; works flagged ``is_xpac`` (repositories, DataCite)
are left out of lists unless ``include_xpac=true``.

Faults are scripted: ``world.fault("/openalex/works?", 429, headers={"Retry-After": "1"})``
answers the next request whose path contains the pattern with that status, once;
``mode="trickle"`` sends its body one byte every ``pause`` seconds, ``mode="truncate"`` sends
half of it and closes the connection.
"""

from __future__ import annotations

import base64
import json
import math
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

OPENALEX = "/openalex"
CROSSREF = "/crossref"
ZOTERO = "/zotero"
ZOTERO_KEY = "zotero-test-key"
OPENALEX_KEY = "openalex-test-key"
OPENALEX_PAID_KEY = "openalex-paid-test-key"
SEARCH_CAP = 1500  # characters of a search value a key not on a paid plan may send
PAID_FILTER = re.compile(r"(?:from_|to_)?(?:updated|created)_date(?::[><]?\d{4}-\d{2}-\d{2})?")
PRICES = {"singleton": 0.0, "list": 0.0001, "search": 0.001}


def inverted_index(text: str) -> dict[str, list[int]]:
    """OpenAlex's ``abstract_inverted_index`` of a text."""
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def openalex_work(number: int, title: str, abstract: str | None, year: int, language: str,
                  authors: list[str], references: list[int], venue: str | None = None,
                  updated: str = "2026-01-15", published: str | None = None,
                  work_type: str = "article", xpac: bool = False) -> dict[str, Any]:
    """A Work object as the OpenAlex API documents it (``published``: its publication date,
    by default June 1 of ``year``; ``xpac``: a work of the expansion pack)."""
    wid = f"https://openalex.org/W{number}"
    doi = f"https://doi.org/10.5555/test.{number}"
    return {
        "id": wid, "doi": doi, "title": title, "display_name": title,
        "publication_year": year, "publication_date": published or f"{year}-06-01",
        "language": language, "type": work_type, "is_xpac": xpac,
        "ids": {"openalex": wid, "doi": doi},
        "primary_location": {"source": {"id": "https://openalex.org/S1",
                                        "display_name": venue or "Test Venue"}},
        "authorships": [{"author_position": "first" if i == 0 else "middle",
                         "author": {"id": f"https://openalex.org/A{number}{i}",
                                    "display_name": name}}
                        for i, name in enumerate(authors)],
        "abstract_inverted_index": inverted_index(abstract) if abstract else None,
        "referenced_works": [f"https://openalex.org/W{r}" for r in references],
        "referenced_works_count": len(references), "cited_by_count": 0,
        "updated_date": f"{updated}T00:00:00.000000", "created_date": f"{year}-06-02",
    }


def crossref_work(doi: str, title: str, abstract: str | None,
                  references: list[str]) -> dict[str, Any]:
    """A Crossref work message as the REST API documents it."""
    return {"DOI": doi, "type": "journal-article", "title": [title],
            "abstract": f"<jats:p>{abstract}</jats:p>" if abstract else None,
            "author": [{"given": "Ana", "family": "Silva", "sequence": "first"}],
            "issued": {"date-parts": [[2020, 1]]}, "container-title": ["Test Journal"],
            "reference": [{"key": f"ref{i}", "DOI": d} for i, d in enumerate(references)],
            "reference-count": len(references)}


@dataclass
class World:
    """What the server knows, the faults it will answer with, and the requests it saw."""

    works: dict[str, dict[str, Any]] = field(default_factory=dict)
    merged: dict[str, str] = field(default_factory=dict)
    crossref: dict[str, dict[str, Any]] = field(default_factory=dict)
    zotero: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    faults: list[tuple[str, int, dict[str, str], bytes, str, float]] = field(
        default_factory=list)
    log: list[str] = field(default_factory=list)
    delay: float = 0.0  # seconds before each answer (a slow API)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    keys: dict[str, float] = field(default_factory=lambda: {OPENALEX_KEY: 1.0,
                                                            OPENALEX_PAID_KEY: 100.0})
    paid_keys: set[str] = field(default_factory=lambda: {OPENALEX_PAID_KEY})
    keyless_usd: float = 0.10
    spent: dict[str, float] = field(default_factory=dict)  # by key ("" without one)
    max_per_page: int = 100  # the documented range is 1-100 (200 before 2026)
    cited_by: dict[str, int] | None = None  # counts of citers, rebuilt after add()

    def add(self, work: dict[str, Any]) -> None:
        self.works[work["id"].rsplit("/", 1)[-1]] = work
        self.cited_by = None

    def fault(self, pattern: str, status: int, body: bytes | None = None,
              headers: dict[str, str] | None = None, mode: str = "",
              pause: float = 0.0) -> None:
        if body is None:
            body = json.dumps({"error": "Server error", "message": f"status {status}"}).encode()
        self.faults.append((pattern, status, headers or {}, body, mode, pause))

    def take_fault(self, path: str) -> tuple[int, dict[str, str], bytes, str, float] | None:
        with self.lock:
            for i, (pattern, status, headers, body, mode, pause) in enumerate(self.faults):
                if pattern in path:
                    del self.faults[i]
                    return status, headers, body, mode, pause
        return None

    def charge(self, key: str | None, kind: str) -> tuple[int, dict[str, str]]:
        """Bill one call: (status, rate-limit headers); 401 for an unknown key, 429 when the
        budget left cannot pay it."""
        if key is not None and key not in self.keys:
            return 401, {}
        limit = self.keys[key] if key is not None else self.keyless_usd
        cost = PRICES[kind]
        with self.lock:
            spent = self.spent.get(key or "", 0.0)
            if cost > limit - spent + 1e-12:
                status, required, cost = 429, cost, 0.0
            else:
                status, required = 200, 0.0
                spent = self.spent[key or ""] = spent + cost
        headers = {"X-RateLimit-Limit-USD": f"{limit:.4f}",
                   "X-RateLimit-Remaining-USD": f"{max(0.0, limit - spent):.4f}",
                   "X-RateLimit-Cost-USD": f"{cost:.4f}"}
        if status == 429:
            midnight = str(_seconds_to_midnight())
            headers = {**headers, "X-RateLimit-Cost-Required-USD": f"{required:.4f}",
                       "X-RateLimit-Prepaid-Remaining-USD": "0", "Retry-After": midnight,
                       "X-RateLimit-Reset": midnight}
            del headers["X-RateLimit-Cost-USD"]
        return status, headers

    def plan_refusal(self, key: str | None, query: dict[str, list[str]]) -> dict[str, str] | None:
        """The body of a "Plan upgrade required" answer when ``query`` uses a paid-only date
        filter or sort and ``key`` is not on a paid plan; None otherwise."""
        if key in self.paid_keys:
            return None
        for name, what in (("filter", "The \"{}\" filter"), ("sort", "Sorting by \"{}\"")):
            for value in query.get(name, []):
                if found := PAID_FILTER.search(value):
                    return {"error": "Plan upgrade required",
                            "message": f"{what.format(found.group(0))} requires a Premium, "
                                       "Institutional, or Partner plan. See "
                                       "https://openalex.org/pricing for details."}
        return None

    def too_long(self, key: str | None, query: dict[str, list[str]]) -> dict[str, str] | None:
        """The body of a "Search query too long" answer, or None."""
        if key in self.paid_keys:
            return None
        longest = max((len(v) for name in ("search", "search.semantic")
                       for v in query.get(name, [])), default=0)
        if longest <= SEARCH_CAP:
            return None
        return {"error": "Search query too long", "error_source": "openalex-api-proxy",
                "message": f"Your search is too long ({longest} characters; the limit is "
                           f"{SEARCH_CAP}). Get an API key on a paid plan for large searches, "
                           "or split the text into several shorter requests."}

    def counted(self, work: dict[str, Any]) -> dict[str, Any]:
        """``work`` with its ``cited_by_count``: the works here that reference it."""
        if self.cited_by is None:
            self.cited_by = {w: len(c) for w, c in self.citers().items()}
        return {**work, "cited_by_count": self.cited_by.get(work["id"].rsplit("/", 1)[-1], 0)}

    def citers(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for wid, work in self.works.items():
            for ref in work["referenced_works"]:
                out.setdefault(ref.rsplit("/", 1)[-1], []).append(wid)
        return out


def _seconds_to_midnight() -> int:
    now = datetime.now(UTC)
    midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return math.ceil((midnight - now).total_seconds())


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str) -> int:
    if cursor == "*":
        return 0
    return int(base64.urlsafe_b64decode(cursor.encode()).decode().split(":")[1])


def _kind(rest: str, query: dict[str, str]) -> str:
    """How OpenAlex bills a call: ``singleton``, ``list`` or ``search``."""
    if rest.startswith("/"):
        return "singleton"
    if "search" in query or ".search:" in query.get("filter", ""):
        return "search"
    return "list"


def _filters(value: str) -> dict[str, str]:
    out = {}
    for part in re.split(r",(?=[a-z_.]+:)", value):
        key, _, val = part.partition(":")
        out[key] = val
    return out


class _Handler(BaseHTTPRequestHandler):
    world: World
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def send(self, status: int, body: bytes, content_type: str = "application/json",
             headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        headers = {**getattr(self, "budget", {}), **(headers or {})}
        self.send(status, json.dumps(data).encode(), headers=headers)

    def send_faulty(self, status: int, body: bytes, headers: dict[str, str], mode: str,
                    pause: float) -> None:
        """Headers with the whole body's Content-Length, then the body trickled or cut."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        try:
            if mode == "truncate":
                self.wfile.write(body[:len(body) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            for byte in body:  # trickle
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(pause)
        except OSError:  # the client gave up
            return

    def do_GET(self) -> None:
        world = self.world
        self.budget: dict[str, str] = {}
        if world.delay:
            time.sleep(world.delay)
        with world.lock:
            world.log.append(self.path)
            world.headers.append(dict(self.headers))
        if fault := world.take_fault(self.path):
            status, headers, body, mode, pause = fault
            if mode:
                self.send_faulty(status, body, headers, mode, pause)
            else:
                self.send(status, body, headers=headers)
            return
        parts = urlsplit(self.path)
        every = parse_qs(parts.query)
        query = {k: v[0] for k, v in every.items()}
        path = parts.path
        if path.startswith(OPENALEX + "/works"):
            rest = path[len(OPENALEX + "/works"):]
            key = query.get("api_key")
            if key is None or key in world.keys:  # a wrong key is a 401 first
                if refusal := world.plan_refusal(key, every):
                    self.send_json(429, refusal, headers={"Cache-Control": "no-store"})
                    return
                if refusal := world.too_long(key, every):
                    self.send_json(400, refusal)
                    return
            status, budget = world.charge(query.get("api_key"), _kind(rest, query))
            if status == 401:
                self.send_json(401, {"error": "Invalid API key",
                                     "message": "The API key you provided is not valid."})
                return
            if status == 429:
                self.send_json(429, {"error": "Rate limit exceeded",
                                     "message": "Daily budget exhausted."}, headers=budget)
                return
            self.budget = budget
            self.openalex(rest, query)
        elif path.startswith(CROSSREF + "/works/"):
            self.crossref(unquote(path[len(CROSSREF + "/works/"):]))
        elif path.startswith(ZOTERO + "/"):
            self.zotero(path[len(ZOTERO):], query)
        else:
            self.send_json(404, {"error": "Not Found", "message": f"no route {path}"})

    def openalex(self, rest: str, query: dict[str, str]) -> None:
        world = self.world
        if rest.startswith("/"):
            key = unquote(rest[1:])
            if key in world.merged:
                self.send(301, b"", headers={
                    "Location": f"{OPENALEX}/works/{world.merged[key]}"})
                return
            work = world.works.get(key.upper())
            if work is None and key.lower().startswith("doi:"):
                doi = "https://doi.org/" + key[4:].lower()
                work = next((w for w in world.works.values() if w["doi"] == doi), None)
            if work is None:
                self.send_json(404, {"error": "Not Found",
                                     "message": f"Work {key} not found"})
                return
            self.send_json(200, world.counted(work))
            return
        filters = _filters(query.get("filter", ""))
        known = {"openalex_id", "cites", "from_updated_date", "to_updated_date",
                 "from_created_date", "to_created_date", "from_publication_date",
                 "to_publication_date", "language", "publication_year", "title.search", "doi",
                 "type", "is_xpac", ""}
        if set(filters) - known:
            self.send_json(400, {"error": "Invalid query parameters error.",
                                 "message": f"{sorted(set(filters) - known)} is not a valid "
                                            "field"})
            return
        ids = sorted(world.works, key=lambda w: int(w[1:]))
        if query.get("include_xpac") != "true":
            ids = [w for w in ids if not world.works[w].get("is_xpac")]
        if "is_xpac" in filters:
            ids = [w for w in ids if bool(world.works[w].get("is_xpac"))
                   == (filters["is_xpac"] == "true")]
        if "type" in filters:
            ids = [w for w in ids if world.works[w]["type"] in filters["type"].split("|")]
        if "openalex_id" in filters:
            wanted = {w.rsplit("/", 1)[-1].upper() for w in filters["openalex_id"].split("|")}
            ids = [w for w in ids if w in wanted]
        if "cites" in filters:
            citers = world.citers()
            wanted = {c for w in filters["cites"].split("|") for c in citers.get(w.upper(), [])}
            ids = [w for w in ids if w in wanted]
        if "from_updated_date" in filters:
            ids = [w for w in ids if world.works[w]["updated_date"][:10]
                   >= filters["from_updated_date"]]
        for name, keep in (("from_publication_date", lambda d, v: d >= v),
                           ("to_publication_date", lambda d, v: d <= v),
                           ("from_created_date", lambda d, v: d >= v)):
            if name in filters:
                field_ = "created_date" if "created" in name else "publication_date"
                ids = [w for w in ids if keep(world.works[w][field_][:10], filters[name])]
        if "language" in filters:
            ids = [w for w in ids if world.works[w]["language"] == filters["language"]]
        if "publication_year" in filters:
            low, _, high = filters["publication_year"].partition("-")
            ids = [w for w in ids if int(low) <= world.works[w]["publication_year"]
                   <= int(high or low)]
        words = (query.get("search") or filters.get("title.search") or "").lower().split()
        if words:
            ids = [w for w in ids if any(word in (world.works[w]["title"] or "").lower()
                                         for word in words)]
        per_page = int(query.get("per_page") or query.get("per-page") or 25)
        if not 1 <= per_page <= self.world.max_per_page:
            self.send_json(400, {"error": "Invalid query parameters error.",
                                 "message": f"per_page is {per_page}: expected 1 to "
                                            f"{self.world.max_per_page}"})
            return
        offset = _offset(query.get("cursor", "*"))
        chunk = ids[offset:offset + per_page]
        meta = {"count": len(ids), "db_response_time_ms": 3, "page": None,
                "per_page": per_page, "groups_count": None,
                "next_cursor": _cursor(offset + per_page) if chunk else None}
        self.send_json(200, {"meta": meta, "results": [world.counted(world.works[w])
                                                       for w in chunk],
                             "group_by": []})

    def crossref(self, doi: str) -> None:
        work = self.world.crossref.get(doi.lower())
        if work is None:
            self.send(404, b"Resource not found.", "text/plain")
            return
        self.send_json(200, {"status": "ok", "message-type": "work",
                             "message-version": "1.0.0", "message": work})

    def zotero(self, rest: str, query: dict[str, str]) -> None:
        keys = {self.headers.get("Zotero-API-Key"),
                self.headers.get("Authorization", "").removeprefix("Bearer ")}
        if ZOTERO_KEY not in keys:  # the web API takes the key in either header
            self.send(403, b"Forbidden", "text/plain")
            return
        match = re.fullmatch(r"/(users|groups)/(\d+)(?:/collections/(\w+))?/items/top", rest)
        name = f"{match.group(1)}/{match.group(2)}/{match.group(3)}" if match else ""
        if name not in self.world.zotero:
            self.send(404, b"Not found", "text/plain")
            return
        items = self.world.zotero[name]
        start, limit = int(query.get("start", 0)), int(query.get("limit", 25))
        chunk = items[start:start + limit]
        headers = {"Total-Results": str(len(items)), "Zotero-API-Version": "3",
                   "Last-Modified-Version": "10"}
        base = f"http://{self.headers['Host']}{ZOTERO}{rest}"
        if start + limit < len(items):
            headers["Link"] = (f'<{base}?start={start + limit}&limit={limit}>; rel="next", '
                               f'<{base}?start={(len(items) - 1) // limit * limit}'
                               f'&limit={limit}>; rel="last"')
        self.send_json(200, chunk, headers=headers)


@dataclass
class Server:
    """A running server: ``url`` is ``http://127.0.0.1:PORT``."""

    url: str
    world: World
    httpd: ThreadingHTTPServer

    @property
    def openalex(self) -> str:
        return self.url + OPENALEX

    @property
    def crossref(self) -> str:
        return self.url + CROSSREF

    @property
    def zotero(self) -> str:
        return self.url + ZOTERO


def serve(world: World) -> Iterator[Server]:
    """Run a server for ``world`` on a free loopback port until the generator is closed."""
    handler = type("Handler", (_Handler,), {"world": world})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", world, httpd)
    finally:
        httpd.shutdown()
        httpd.server_close()


def zotero_item(key: str, title: str, doi: str | None) -> dict[str, Any]:
    """An item of the Zotero web API (format=json)."""
    return {"key": key, "version": 5, "library": {"type": "user", "id": 1},
            "meta": {"numChildren": 0},
            "data": {"key": key, "version": 5, "itemType": "journalArticle", "title": title,
                     "DOI": doi or "", "url": "", "extra": "", "creators": []}}


def taln_world(papers_file: Path, limit: int | None = None) -> World:
    """A world of OpenAlex works from the TALN papers (their real titles, abstracts, years,
    authors); each paper references a few earlier ones (a fixed pattern), since the TALN
    metadata has no resolved citation ids."""
    world = World()
    rows = [json.loads(line) for line in papers_file.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = rows[:limit] if limit else rows
    for i, row in enumerate(rows):
        number = 1000 + i
        english = (row.get("translations") or {}).get("en") or {}
        title = row.get("title") or english.get("title") or ""
        abstract = row.get("abstract") or english.get("abstract") or None
        language = "fr" if row.get("title") else "en"
        refs = sorted({1000 + j for j in (i - 1, i - 2, i // 2, i // 3) if 0 <= j < i})
        world.add(openalex_work(number, title, abstract, int(row.get("year") or 2000),
                                language, list(row.get("authors") or [])[:5], refs,
                                row.get("venue")))
    return world


def quote_key(key: str) -> str:
    return quote(key, safe="")
