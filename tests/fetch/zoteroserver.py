"""A local HTTP server on loopback that answers as the Zotero web API (v3) documents it, reads
and writes, at its root, and as the Zotero desktop's local API (its read paths) under ``/api``.

Web API: ``/keys/{key}`` (the key's access: ``user.library``, ``user.write``); ``/users/{id}/
items``, ``/items/top``, ``/collections``, ``/collections/{key}/items/top`` (JSON arrays,
``Total-Results``, ``Link: rel="next"`` paging, ``Last-Modified-Version``); ``/items/new?
itemType=`` (item templates); ``POST /users/{id}/items`` and ``/collections`` (at most 50
objects; ``If-Unmodified-Since-Version``: 412 when the library has changed since; an answer
``{"successful", "success", "unchanged", "failed"}`` by index, each failure with its code and
message; a key without write access: 403); ``DELETE /users/{id}/items?itemKey=`` and
``/collections?collectionKey=``, or one object by its key (versioned). A key is sent as
``Zotero-API-Key`` or ``Authorization: Bearer``.

Local API: the same read paths under ``/api/users/0/`` without a key; 403 when the library's
``local_enabled`` is off (Zotero's setting "Allow other applications on this computer to
communicate with Zotero").

Faults are scripted: ``library.fault("POST", "/items", 429, {"Backoff": "0"})`` answers the
next matching request (``after=N``: the one after N more) with that status, once;
``stale=True`` is another client's write just before it (the library version moves on, and
``added`` items appear), for a 412.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

USER = 42
WRITE_KEY = "zotero-write-key"
READ_KEY = "zotero-read-key"
ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
MAX_WRITE = 50
TEMPLATES: dict[str, dict[str, Any]] = {
    "journalArticle": {
        "itemType": "journalArticle", "title": "",
        "creators": [{"creatorType": "author", "firstName": "", "lastName": ""}],
        "abstractNote": "", "publicationTitle": "", "volume": "", "issue": "", "pages": "",
        "date": "", "series": "", "seriesTitle": "", "seriesText": "",
        "journalAbbreviation": "", "language": "", "DOI": "", "ISSN": "", "shortTitle": "",
        "url": "", "accessDate": "", "archive": "", "archiveLocation": "",
        "libraryCatalog": "", "callNumber": "", "rights": "", "extra": "", "tags": [],
        "collections": [], "relations": {}},
    "note": {"itemType": "note", "note": "", "tags": [], "collections": [], "relations": {}},
}
KEYS_OK = {"key", "version", "parentItem", "dateAdded", "dateModified", "deleted"}


def new_key() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(8))


@dataclass
class Library:
    """One user library: items and collections by key, its version, the keys that may read
    (and write) it, scripted faults, and a log of the requests."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    version: int = 10
    keys: dict[str, bool] = field(default_factory=lambda: {WRITE_KEY: True, READ_KEY: False})
    local_enabled: bool = True
    faults: list[dict[str, Any]] = field(default_factory=list)
    log: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_item(self, title: str, doi: str | None = None, collections: list[str] = (),
                 **fields: Any) -> str:
        """Put a journal article in the library (as another client would); its key."""
        key = new_key()
        self.version += 1
        data = {**TEMPLATES["journalArticle"], "key": key, "version": self.version,
                "title": title, "DOI": doi or "", "collections": list(collections), **fields}
        self.items[key] = {"key": key, "version": self.version, "data": data}
        return key

    def add_collection(self, name: str, parent: str | None = None) -> str:
        key = new_key()
        self.version += 1
        self.collections[key] = {"key": key, "version": self.version, "data": {
            "key": key, "version": self.version, "name": name,
            "parentCollection": parent or False, "relations": {}}}
        return key

    def fault(self, method: str, pattern: str, status: int,
              headers: dict[str, str] | None = None, stale: bool = False,
              added: list[tuple[str, str | None]] = (), after: int = 0) -> None:
        """Answer the next ``method`` request whose path contains ``pattern``, after
        ``after`` such requests went through, with ``status``."""
        self.faults.append({"method": method, "pattern": pattern, "status": status,
                            "headers": headers or {}, "stale": stale, "added": list(added),
                            "after": after})

    def take_fault(self, method: str, path: str) -> dict[str, Any] | None:
        for i, fault in enumerate(self.faults):
            if fault["method"] == method and fault["pattern"] in path:
                if fault["after"]:
                    fault["after"] -= 1
                    return None
                return self.faults.pop(i)
        return None

    def in_collection(self, key: str) -> list[dict[str, Any]]:
        return [i for i in self.items.values() if key in i["data"].get("collections", [])]


class _Handler(BaseHTTPRequestHandler):
    library: Library
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def send(self, status: int, body: Any = None, headers: dict[str, str] | None = None
             ) -> None:
        data = b"" if body is None else (body.encode() if isinstance(body, str)
                                         else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(body, str)
                         else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Zotero-API-Version", "3")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def key(self) -> str | None:
        return (self.headers.get("Zotero-API-Key")
                or self.headers.get("Authorization", "").removeprefix("Bearer ") or None)

    def body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def begin(self, method: str) -> tuple[str, dict[str, str]] | None:
        """Log the request and answer a scripted fault; the path and query otherwise."""
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        library = self.library
        with library.lock:
            library.log.append((method, self.path, dict(self.headers)))
            fault = library.take_fault(method, parts.path)
            if fault and fault["stale"]:  # another client wrote meanwhile
                for title, doi in fault["added"]:
                    library.add_item(title, doi)
                library.version += 1
        if fault:
            if method != "GET" and self.headers.get("Content-Length"):
                self.body()
            self.send(fault["status"], "Library has been modified since specified version"
                      if fault["status"] == 412 else "Too many requests"
                      if fault["status"] == 429 else "error",
                      {"Last-Modified-Version": str(library.version), **fault["headers"]})
            return None
        return parts.path, query

    # reads -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        begun = self.begin("GET")
        if begun is None:
            return
        path, query = begun
        library = self.library
        if path.startswith("/api/"):  # the desktop's local API: no key, on or off
            if not library.local_enabled:
                self.send(403, "Local API is not enabled")
                return
            match = re.fullmatch(r"/api/users/0(/.*)", path)
            if not match:
                self.send(404, "Not found")
                return
            self.listing(match.group(1), query, "/api/users/0")
            return
        if path.startswith("/keys/"):
            key = path.split("/")[2]
            key = self.key() if key == "current" else key
            if key not in library.keys:
                self.send(403, "Invalid key")
                return
            write = library.keys[key]
            self.send(200, {"key": key, "userID": USER, "username": "tester",
                            "access": {"user": {"library": True, "files": write,
                                                "notes": True, "write": write}}})
            return
        if path == "/items/new":
            template = TEMPLATES.get(query.get("itemType", ""))
            if template is None:
                self.send(400, "Invalid item type")
                return
            self.send(200, template)
            return
        if path == "/itemFields":
            fields = {f for t in TEMPLATES.values() for f in t if f not in ("creators",)}
            self.send(200, [{"field": f, "localized": f} for f in sorted(fields)])
            return
        if self.key() not in library.keys:
            self.send(403, "Forbidden")
            return
        match = re.fullmatch(rf"/users/{USER}(/.*)", path)
        if not match:
            self.send(404, "Not found")
            return
        self.listing(match.group(1), query, f"/users/{USER}")

    def listing(self, rest: str, query: dict[str, str], prefix: str) -> None:
        library = self.library
        with library.lock:
            items = list(library.items.values())
            collections = list(library.collections.values())
            version = library.version
        if rest == "/items":
            rows = items
        elif rest == "/items/top":
            rows = [i for i in items if not i["data"].get("parentItem")]
        elif rest == "/collections":
            rows = collections
        elif match := re.fullmatch(r"/collections/(\w+)/items(/top)?", rest):
            if match.group(1) not in library.collections:
                self.send(404, "Collection not found")
                return
            rows = [i for i in items if match.group(1) in i["data"].get("collections", [])]
        else:
            self.send(404, "Not found")
            return
        start, limit = int(query.get("start", 0)), min(int(query.get("limit", 25)), 100)
        chunk = rows[start:start + limit]
        headers = {"Total-Results": str(len(rows)), "Last-Modified-Version": str(version)}
        if start + limit < len(rows):
            headers["Link"] = (f'<http://{self.headers["Host"]}{prefix}{rest}?start='
                               f'{start + limit}&limit={limit}>; rel="next"')
        self.send(200, chunk, headers)

    # writes ------------------------------------------------------------------------------

    def writable(self) -> bool:
        """Whether the request may write (else answered): a write key, a current version."""
        library = self.library
        if self.key() not in library.keys:
            self.send(403, "Forbidden")
            return False
        if not library.keys[self.key()]:
            self.send(403, "Write access denied")
            return False
        stated = self.headers.get("If-Unmodified-Since-Version")
        if stated is not None and int(stated) != library.version:
            self.send(412, "Library has been modified since specified version",
                      {"Last-Modified-Version": str(library.version)})
            return False
        return True

    def do_POST(self) -> None:
        begun = self.begin("POST")
        if begun is None:
            return
        path, _ = begun
        body = self.body()
        library = self.library
        with library.lock:
            if not self.writable():
                return
            if not isinstance(body, list):
                self.send(400, "Uploaded data must be a JSON array")
                return
            if len(body) > MAX_WRITE:
                self.send(413, f"Only {MAX_WRITE} objects can be written at a time")
                return
            if path == f"/users/{USER}/items":
                answer = self.write(body, self.item_problem, library.items)
            elif path == f"/users/{USER}/collections":
                answer = self.write(body, self.collection_problem, library.collections)
            else:
                self.send(404, "Not found")
                return
            self.send(200, answer, {"Last-Modified-Version": str(library.version)})

    def write(self, objects: list[dict[str, Any]], problem: Any,
              store: dict[str, dict[str, Any]]) -> dict[str, Any]:
        library = self.library
        answer: dict[str, Any] = {"successful": {}, "success": {}, "unchanged": {},
                                  "failed": {}}
        version = library.version + 1
        wrote = False
        for index, data in enumerate(objects):
            key = data.get("key") or new_key()
            wrong = problem(data)
            if wrong:
                answer["failed"][str(index)] = {"key": key, "code": wrong[0],
                                                "message": wrong[1]}
                continue
            stored = {**data, "key": key, "version": version}
            store[key] = {"key": key, "version": version, "data": stored}
            answer["successful"][str(index)] = store[key]
            answer["success"][str(index)] = key
            wrote = True
        if wrote:
            library.version = version
        return answer

    def item_problem(self, data: dict[str, Any]) -> tuple[int, str] | None:
        library = self.library
        template = TEMPLATES.get(data.get("itemType", ""))
        if template is None:
            return 400, f"Invalid item type '{data.get('itemType')}'"
        unknown = set(data) - set(template) - KEYS_OK
        if unknown:
            return 400, f"Invalid property '{sorted(unknown)[0]}'"
        if data["itemType"] == "note":
            if data.get("parentItem") not in library.items:
                return 400, f"Parent item {data.get('parentItem')} not found"
            if data.get("collections"):
                return 400, "Child items cannot be assigned to collections"
        elif not (data.get("title") or "").strip():
            return 400, "An item needs a title"
        for collection in data.get("collections", []):
            if collection not in library.collections:
                return 409, f"Collection {collection} doesn't exist"
        return None

    def collection_problem(self, data: dict[str, Any]) -> tuple[int, str] | None:
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            return 400, "Collection name cannot be empty"
        if len(name) > 255:
            return 413, "Collection name too long"
        parent = data.get("parentCollection")
        if parent and parent not in self.library.collections:
            return 409, f"Parent collection {parent} doesn't exist"
        return None

    def do_DELETE(self) -> None:
        begun = self.begin("DELETE")
        if begun is None:
            return
        path, query = begun
        library = self.library
        with library.lock:
            if not self.writable():
                return
            one = re.fullmatch(rf"/users/{USER}/(items|collections)/(\w+)", path)
            if one:  # one object by its key
                path, query = f"/users/{USER}/{one.group(1)}", {
                    "itemKey" if one.group(1) == "items" else "collectionKey": one.group(2)}
            if path == f"/users/{USER}/items":
                store, keys = library.items, query.get("itemKey", "")
            elif path == f"/users/{USER}/collections":
                store, keys = library.collections, query.get("collectionKey", "")
            else:
                self.send(404, "Not found")
                return
            wanted = [k for k in keys.split(",") if k]
            if len(wanted) > MAX_WRITE:
                self.send(413, f"Only {MAX_WRITE} objects can be deleted at a time")
                return
            for key in wanted:
                store.pop(key, None)
                if store is library.collections:
                    for item in library.items.values():
                        if key in item["data"].get("collections", []):
                            item["data"]["collections"].remove(key)
            library.version += 1
            self.send(204, None, {"Last-Modified-Version": str(library.version)})


@dataclass
class ZoteroServer:
    """A running server: ``url`` is the web API's base, ``local`` the local API's."""

    url: str
    library: Library

    @property
    def local(self) -> str:
        return self.url + "/api"


def serve(library: Library) -> Iterator[ZoteroServer]:
    """Run a server for ``library`` on a free loopback port until the generator is closed."""
    handler = type("Handler", (_Handler,), {"library": library})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield ZoteroServer(f"http://127.0.0.1:{httpd.server_address[1]}", library)
    finally:
        httpd.shutdown()
        httpd.server_close()
