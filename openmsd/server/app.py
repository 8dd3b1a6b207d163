"""The FastAPI application: the JSON API and the web page from one process.

``create_app(corpus, models)`` loads the corpus and the models' indexes (failing at once, with
the command to run, when one is missing) and returns the app; ``serve`` runs it with uvicorn,
on loopback unless told otherwise. Request bodies are limited to ``MAX_BODY`` bytes and must
arrive within ``BODY_TIMEOUT_S`` seconds (408); JSON API bodies must say they are JSON (415).
Responses carry a content security policy that allows only the app's own scripts and styles;
errors are answered without stack traces (they go to the server log).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from openmsd.artifact import ArtifactError
from openmsd.corpus import Corpus
from openmsd.server import api, feeds, pages
from openmsd.server.connections import uvicorn_options
from openmsd.server.resources import THREADS_ENV, Resources, indexed_models

MAX_BODY = 256 * 1024
#: Open connections whose requests :class:`LimitsAndHeaders` counts at most (then it starts over).
CONNECTIONS_COUNTED = 4096
BODY_TIMEOUT_S = 10.0
STATIC = Path(__file__).parent / "static"
HEADERS = [
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
log = logging.getLogger("openmsd.server")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class LimitsAndHeaders:
    """ASGI middleware: refuse request bodies over ``max_body`` bytes (413), bodies not
    received within ``body_timeout_s`` seconds (408) and API bodies that are not JSON (415);
    add the security headers to every response; with ``keep_alive_requests`` N > 0, close
    a connection after its N-th request (``Connection: close``, nginx's ``keepalive_requests``:
    :func:`serve`'s workers then take connections, and so requests, in turn)."""

    def __init__(self, app: Any, max_body: int = MAX_BODY,
                 body_timeout_s: float = BODY_TIMEOUT_S, keep_alive_requests: int = 0):
        self.app, self.max_body, self.body_timeout_s = app, max_body, body_timeout_s
        self.keep_alive_requests = keep_alive_requests
        self._served: dict[Any, int] = {}  # requests so far per open connection (client address)

    def _closing(self, scope: Scope) -> bool:
        """Whether this request is its connection's last (counted per client address)."""
        if self.keep_alive_requests <= 0:
            return False
        client = scope.get("client")
        served = self._served.pop(client, 0) + 1
        if served >= self.keep_alive_requests:
            return True
        if len(self._served) >= CONNECTIONS_COUNTED:  # connections the clients closed
            self._served.clear()
        self._served[client] = served
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        headers = [*HEADERS, (b"connection", b"close")] if self._closing(scope) else HEADERS

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await self._too_large(scope, receive, send_with_headers)
            return
        if scope["method"] in ("POST", "PUT", "PATCH"):
            kind = dict(scope["headers"]).get(b"content-type", b"").split(b";")[0].strip()
            if scope["path"].startswith("/api/") and kind.lower() != b"application/json":
                await self._refuse(scope, receive, send_with_headers, 415,
                                   "expected a JSON body (Content-Type: application/json), "
                                   f"got {kind.decode('latin-1') or 'no Content-Type'}")
                return
            chunks, size = [], 0
            while True:  # read the whole (bounded) body first, then replay it to the app
                try:
                    message = await asyncio.wait_for(receive(), self.body_timeout_s)
                except TimeoutError:
                    await self._refuse(scope, receive, send_with_headers, 408,
                                       f"request body not received within "
                                       f"{self.body_timeout_s:g} s")
                    return
                if message["type"] == "http.disconnect":
                    return
                size += len(message.get("body", b""))
                if size > self.max_body:
                    await self._too_large(scope, receive, send_with_headers)
                    return
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            body, sent = b"".join(chunks), False

            async def replay() -> dict[str, Any]:
                nonlocal sent
                if sent:
                    return await receive()
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._refuse(scope, receive, send, 413,
                           f"request body over {self.max_body:,} bytes")

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, detail: str
                      ) -> None:
        headers = {"connection": "close"} if status == 408 else None
        await JSONResponse({"detail": detail}, status, headers=headers)(scope, receive, send)


def check_base_url(base_url: str | None) -> str | None:
    """``base_url`` without its trailing slash; ``ValueError`` unless it is an absolute
    ``http``/``https`` URL without query or fragment.

    >>> check_base_url("https://papers.example.org/openmsd/")
    'https://papers.example.org/openmsd'
    """
    if base_url is None:
        return None
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query \
            or parts.fragment:
        raise ValueError(f"--base-url {base_url!r}: expected an http(s) URL such as "
                         "https://papers.example.org")
    return base_url.rstrip("/")


def _wants_json(request: Request) -> bool:
    path = request.url.path
    return path.startswith("/api/") or path in ("/healthz", "/openapi.json")


def _field_errors(error: RequestValidationError) -> list[dict[str, Any]]:
    """Validation errors naming the field, without echoing the (possibly large) input."""
    return [{"loc": list(e.get("loc", [])), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in error.errors()]


def create_app(corpus: str | Path, models: list[str], watch_s: float | None = 2.0,
               max_body: int = MAX_BODY, backend: str | None = None,
               keep_alive_requests: int = 0, base_url: str | None = None) -> FastAPI:
    """The app over ``corpus`` serving ``models`` (the first is the default), their queries
    encoded with ``backend`` (by default the one each model's vectors were made with); the
    indexes are polled every ``watch_s`` seconds for rebuilds (never when None); a connection
    is closed after ``keep_alive_requests`` requests (0: kept open). ``base_url`` is where
    the server is reached (``https://papers.example.org``): the absolute links it writes (the
    Atom feed's) start with it, never with the Host header a client sends; without it they are
    relative, or the DOI's."""
    resources = Resources(corpus, models, backend)
    for model in resources.models:
        resources.encoder(model)  # loaded now: the first request should not wait for it
    resources.warm()  # and the per-build structures the requests read
    gc.collect()  # what loading left in reference cycles (a large corpus: gigabytes)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if watch_s:
            resources.watch(watch_s)
        yield
        resources.close()

    app = FastAPI(title="openmsd", version="0.1.0", lifespan=lifespan,
                  description="Related papers across languages, free-text search and "
                  "citation recommendation over an openmsd corpus.",
                  docs_url=None, redoc_url=None)  # their pages load scripts from a CDN
    app.state.resources = resources
    app.state.base_url = check_base_url(base_url)
    app.add_middleware(LimitsAndHeaders, max_body=max_body,
                       keep_alive_requests=keep_alive_requests)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(feeds.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        headers = getattr(error, "headers", None)
        detail = error.detail
        if error.status_code == 405:  # say which method, with an example request
            detail = api.wrong_method(request.method, request.url.path,
                                      (headers or {}).get("Allow", "another method"),
                                      request.app.state.base_url or "")
        if _wants_json(request):
            return JSONResponse({"detail": detail}, error.status_code, headers=headers)
        return pages.error_page(request, error.status_code, detail)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": _field_errors(error)}, 422)
        return pages.error_page(request, 422, _field_errors(error))

    @app.exception_handler(ArtifactError)
    async def damaged(request: Request, error: ArtifactError) -> Response:
        # a damaged ranker.json or adapter: unavailable until rebuilt, the file named
        log.error("error serving %s: %s", request.url.path, error)
        if _wants_json(request):
            return JSONResponse({"detail": str(error)}, 503)
        return pages.error_page(request, 503, str(error))

    @app.exception_handler(Exception)
    async def crashed(request: Request, error: Exception) -> Response:
        log.exception("error serving %s", request.url.path)
        if _wants_json(request):
            return JSONResponse({"detail": "internal error (logged on the server)"}, 500)
        return pages.error_page(request, 500, "internal error (logged on the server)")

    return app


SERVE_ENV = "OPENMSD_SERVE"
"""What each worker process of ``serve(workers=N)`` serves: JSON ``{corpus, models, backend,
keep_alive_requests}``."""
#: Seconds uvicorn's supervisor waits for a ``--workers`` process to answer its health check.
WORKER_PATIENCE = 600
#: Requests per connection with several workers (:func:`serve`).
WORKER_KEEP_ALIVE_REQUESTS = 1


def app_from_env() -> FastAPI:
    """The app of one worker process of :func:`serve`, from ``$OPENMSD_SERVE``."""
    spec = json.loads(os.environ[SERVE_ENV])
    return create_app(spec["corpus"], spec["models"], backend=spec["backend"],
                      keep_alive_requests=spec.get("keep_alive_requests", 0),
                      base_url=spec.get("base_url"))


def check_served(corpus: str | Path, models: list[str]) -> None:
    """Raise the errors a worker would meet at start, in the parent: a corpus that is not one
    (:class:`CorpusError`), no model named, or a model without an index (``ValueError``)."""
    Corpus(corpus).check()
    if not models:
        raise ValueError("serve: name at least one model")
    missing = sorted(set(models) - set(indexed_models(corpus)))
    if missing:
        raise ValueError(f"serve: no index for {', '.join(missing)} in {corpus}: run "
                         f"'openmsd index build {corpus} --model {missing[0]}' first")


def serve(corpus: str | Path, models: list[str], host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "info", backend: str | None = None, workers: int = 1,
          keep_alive_requests: int | None = None, base_url: str | None = None) -> None:
    """Run the app with uvicorn until interrupted. FAISS searches on one thread: concurrent
    requests are the parallelism (an OpenMP team per one-query search only oversubscribes the
    cores; ``OMP_NUM_THREADS=1`` does the same for BLAS, as the load test runs). The query
    encoders run on one thread too, unless ``$OPENMSD_THREADS`` says otherwise: concurrent
    queries are batched, and a second thread per batch of short queries (ONNX Runtime's
    intra-op pool, muse-v3's BLAS) costs 2-4x the CPU per query on a busy machine
    (``benchmarks/query_encoding.py``). ``workers`` > 1 runs that many processes on one port,
    each with its own index, encoders and rebuild watcher: one Python process answers at most
    about one core's worth of requests (the GIL), so on a busy server use one per core.
    uvicorn's supervisor runs them, and waits up to :data:`WORKER_PATIENCE` seconds for a
    worker's health check (a 100,000-paper worker loads for minutes, holding the
    GIL in long calls; at uvicorn's default of 5 s it was killed and restarted in a loop).

    With several workers a connection is closed after :data:`WORKER_KEEP_ALIVE_REQUESTS`
    requests (``keep_alive_requests`` None; one worker: never; 0: never). The workers take
    connections from one shared socket and a kept-alive connection stays on the worker that
    accepted it: 20 steady clients split unevenly (5 and 15 in one run, the 15 waiting three
    times as long). A new connection goes to the worker whose event loop polls first (not one
    busy with a request), so closing connections balances the requests; it costs a connect
    per request (~1.2 ms of server CPU on loopback, docs/server.md)."""
    import faiss  # lazy: faiss takes ~0.3 s to import
    import uvicorn  # optional: the serve extra

    if workers < 1:
        raise ValueError(f"serve: --workers must be at least 1, got {workers}")
    check_base_url(base_url)
    if base_url is None and host not in ("0.0.0.0", "::"):  # where it listens, as it is
        base_url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    faiss.omp_set_num_threads(1)
    os.environ.setdefault(THREADS_ENV, "1")
    if keep_alive_requests is None:
        keep_alive_requests = 0 if workers == 1 else WORKER_KEEP_ALIVE_REQUESTS
    if workers == 1:
        uvicorn.run(create_app(corpus, models, backend=backend,
                               keep_alive_requests=keep_alive_requests, base_url=base_url),
                    host=host, port=port, log_level=log_level, access_log=False,
                    **uvicorn_options())
        return
    check_served(corpus, models)
    _check_port(host, port)
    os.environ[SERVE_ENV] = json.dumps({"corpus": str(corpus), "models": list(models),
                                        "backend": backend, "base_url": base_url,
                                        "keep_alive_requests": keep_alive_requests})
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the workers' FAISS and BLAS, as above
    uvicorn.run("openmsd.server.app:app_from_env", factory=True, workers=workers, host=host,
                port=port, log_level=log_level, access_log=False,
                timeout_worker_healthcheck=WORKER_PATIENCE,
                **{**uvicorn_options(), "http": "openmsd.server.connections:HeaderDeadline"})


def _check_port(host: str, port: int) -> None:
    """A ``ValueError`` naming the address when it cannot be bound (in use, not local)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            raise ValueError(f"serve: cannot listen on {host}:{port}: {error.strerror}") from None
