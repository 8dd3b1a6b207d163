"""The HTTP session every OpenAlex request of :mod:`openmsd.fetch` goes through (requests +
urllib3).

One :class:`Polite` configuration gives a :class:`requests.Session` that

* sends the API key as the ``api_key`` query parameter of every request (OpenAlex's
  documented way since February 2026; the retired ``mailto`` is not sent);
* retries 5xx answers and a per-second 429 with exponential backoff, honouring
  ``Retry-After`` (urllib3's :class:`Retry`), but stops at once on a 429 that says the daily
  budget is spent or asks a wait over :data:`BRIEF_WAIT` seconds
  (:class:`~openmsd.fetch.budget.BudgetSpent`: a spent budget's ``Retry-After`` runs to
  midnight UTC and is never slept on), and on one that says "Plan upgrade required"
  (:class:`~openmsd.fetch.errors.PlanRequired`);
* gives each request an overall deadline (``timeout`` seconds from the first byte sent to the
  last byte of the body, retries included): a server that trickles its answer is cut off
  (:class:`DeadlineExceeded`), not waited on read after read;
* refuses an answer larger than ``max_bytes`` (:class:`ResponseTooLarge`);
* turns a stalled or truncated body into one :class:`NetworkError` naming the URL;
* hands the rate-limit headers of every answer to a :class:`~openmsd.fetch.budget.Budget`.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ProtocolError, ReadTimeoutError
from urllib3.util import Retry

from openmsd.fetch.budget import Budget, BudgetSpent, spent_answer
from openmsd.fetch.errors import BadAnswer, FetchError, NetworkError, PlanRequired

__all__ = ["BRIEF_WAIT", "RETRY_STATUS", "BadAnswer", "CutAnswer", "DeadlineExceeded",
           "FetchError", "NetworkError", "PlanRequired", "Polite", "ResponseTooLarge",
           "polite_session", "public_url"]

RETRY_STATUS = (429, 500, 502, 503, 504)
CONNECT_TIMEOUT = 10.0
BRIEF_WAIT = 10.0  # seconds of Retry-After a per-second 429 may ask; a longer wait stops


class ResponseTooLarge(requests.RequestException):
    """An answer over the size limit."""


class DeadlineExceeded(NetworkError):
    """A request whose answer was not complete within its deadline."""


class CutAnswer(NetworkError):
    """An answer whose body stalled or broke off after its headers (worth one more try)."""


@dataclass(frozen=True)
class Polite:
    """How a client talks to an API: its key, how it retries, how long it waits, what it
    accepts. ``mailto`` identifies the client to Crossref (OpenAlex retired it)."""

    mailto: str | None = None
    retries: int = 5
    backoff: float = 0.5
    backoff_max: float = 60.0
    timeout: float = 60.0
    max_bytes: int = 64 << 20
    user_agent: str = "openmsd-fetch/0.1"
    api_key: str | None = None


def public_url(url: str) -> str:
    """``url`` without its ``api_key`` parameter (for messages: a key is never printed).

    >>> public_url("http://h/works?filter=a:b&api_key=secret")
    'http://h/works?filter=a:b'
    """
    parts = urlsplit(url)
    if "api_key" not in parts.query:
        return url
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if k != "api_key"], safe=":|,*")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


# --- the deadline: a timer that cuts the socket of the request under way --------------------

_local = threading.local()


class _Deadline:
    """``seconds`` for one request: when they pass, the socket in use is shut down (a blocked
    read returns at once) and no further attempt may start."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = self.cancelled = False
        self._connection: HTTPConnection | None = None
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        _WATCHDOG.add(self, time.monotonic() + self.seconds)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            self._connection = self._socket = None

    def watch(self, connection: HTTPConnection) -> None:
        """Called as ``connection`` sends a request (the first or a retry)."""
        with self._lock:
            if self.expired:
                raise DeadlineExceeded("deadline passed")
            self._connection, self._socket = connection, None

    def sent(self, connection: HTTPConnection) -> None:
        """Called once ``connection`` has sent its request: its socket is kept, since the
        connection lets go of it when the answer says ``Connection: close`` (or is HTTP/1.0)
        while the body is still read from it."""
        with self._lock:
            if self._connection is connection:
                self._socket = connection.sock

    def fire(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.expired = True
            sock = getattr(self._connection, "sock", None) or self._socket
        if sock is not None:  # socket.shutdown, not the SSL wrapper's: SSL state untouched
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Watchdog:
    """One thread for every deadline of the process: it sleeps until the nearest and fires
    those that were not cancelled (a thread per request would cost more than the request)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._count = 0

    def add(self, deadline: _Deadline, when: float) -> None:
        with self._wake:
            self._count += 1
            heapq.heappush(self._heap, (when, self._count, deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="fetch-deadlines",
                                                daemon=True)
                self._thread.start()
            elif self._heap[0][2] is deadline:
                self._wake.notify()

    def _run(self) -> None:
        while True:
            due = []
            with self._wake:
                while self._heap and (self._heap[0][2].cancelled
                                      or self._heap[0][0] <= time.monotonic()):
                    due.append(heapq.heappop(self._heap)[2])
                if not due:
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(wait)
            for deadline in due:
                deadline.fire()


_WATCHDOG = _Watchdog()


class _Watched:
    """A connection whose requests the thread's current deadline watches (HTTP or HTTPS)."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        deadline = getattr(_local, "deadline", None)
        if deadline is not None:
            deadline.watch(self)
        super().request(*args, **kwargs)  # type: ignore[misc]
        if deadline is not None:
            deadline.sent(self)


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


# --- retries that know a spent budget from a busy second ------------------------------------

class _BudgetRetry(Retry):
    """urllib3's retries, except two 429s that waiting cannot help: one that says the daily
    budget is spent or asks to wait longer than ``brief`` seconds raises
    :class:`BudgetSpent` at once; one whose body says "Plan upgrade required" (OpenAlex's
    answer to a paid-only filter on a free key, sent without budget headers) raises
    :class:`PlanRequired` at once."""

    brief: float = BRIEF_WAIT

    def increment(self, method: str | None = None, url: str | None = None,
                  response: Any = None, error: Exception | None = None, _pool: Any = None,
                  _stacktrace: Any = None) -> Retry:
        if response is not None and response.status == 429:
            spent = spent_answer(response.headers, self.brief)
            if spent is not None:
                response.drain_conn()
                raise BudgetSpent(spent)
            if (refused := _plan_refusal(response)) is not None:
                raise PlanRequired(refused)
        return super().increment(method, url, response, error, _pool, _stacktrace)


def _plan_refusal(response: Any) -> str | None:
    """The message of a "Plan upgrade required" answer, or None for any other."""
    if any(name.lower().startswith("x-ratelimit") for name in response.headers):
        return None  # a budget or rate answer
    try:
        body = response.read(8192, decode_content=True)
    except (ProtocolError, OSError, ReadTimeoutError):
        return None
    finally:
        response.drain_conn()
    if b"upgrade required" not in body.lower():
        return None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body.decode("utf-8", "replace")[:300]
    if not isinstance(data, dict):
        return None
    return str(data.get("message") or data.get("error"))[:300]


class _PoliteAdapter(HTTPAdapter):
    """Deadline, size limit, body read inside the deadline, rate-limit headers recorded."""

    def __init__(self, polite: Polite, budget: Budget | None, **kwargs: Any):
        self.polite, self.budget = polite, budget
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool,
                                                   "https": _WatchedHTTPSPool}

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        seconds = self.polite.timeout
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = (min(CONNECT_TIMEOUT, seconds), seconds)
        url = public_url(request.url or "")
        deadline = _Deadline(seconds)
        _local.deadline = deadline
        deadline.start()
        try:
            response = super().send(request, **kwargs)
            _read_body(response, self.polite.max_bytes, url, seconds)
        except DeadlineExceeded:
            raise DeadlineExceeded(_late(url, seconds)) from None
        except (requests.RequestException, NetworkError):
            if deadline.expired:
                raise DeadlineExceeded(_late(url, seconds)) from None
            raise
        finally:
            deadline.cancel()
            _local.deadline = None
        if self.budget is not None:
            self.budget.record(response.headers, url)
        return response


def _late(url: str, seconds: float) -> str:
    return (f"{url}: no complete answer within {seconds:g} s (--timeout); the server is "
            "too slow or stalled")


def _read_body(response: requests.Response, max_bytes: int, url: str, seconds: float) -> None:
    """Read the whole body now (inside the deadline), bounded by ``max_bytes``."""
    length = response.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > max_bytes:
        response.close()
        raise ResponseTooLarge(f"{url}: answer of {int(length):,} bytes is over the limit of "
                               f"{max_bytes:,}")
    if response.raw is None or isinstance(response.raw, io.BytesIO):
        return
    try:
        body = response.raw.read(max_bytes + 1, decode_content=True)
    except ReadTimeoutError:
        response.close()
        raise CutAnswer(f"{url}: the answer stalled (no data for {seconds:g} s)") from None
    except (ProtocolError, OSError) as error:
        response.close()
        raise CutAnswer(f"{url}: the answer broke off ({_short(error)})") from None
    if len(body) > max_bytes:
        response.close()
        raise ResponseTooLarge(f"{url}: answer over the limit of {max_bytes:,} bytes")
    response.raw.release_conn()
    response.raw = io.BytesIO(body)


def _short(error: BaseException) -> str:
    return str(error.args[0] if error.args else error)[:160]


class _KeySession(requests.Session):
    """A session whose key travels only as ``api_key``: a client library's own ``auth``
    (pyalex 0.21 puts its key in an ``Authorization`` header, which OpenAlex does not
    document) is not applied."""

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.pop("auth", None)
        return super().request(method, url, *args, **kwargs)


def polite_session(polite: Polite, budget: Budget | None = None) -> requests.Session:
    """A session that sends the key, retries, backs off, bounds time and size, and records
    the rate-limit headers in ``budget``."""
    policy = type("BudgetRetry", (_BudgetRetry,), {"brief": min(polite.timeout, BRIEF_WAIT)})
    retry = policy(total=polite.retries, connect=polite.retries, read=polite.retries,
                         status=polite.retries, backoff_factor=polite.backoff,
                         backoff_max=polite.backoff_max, status_forcelist=RETRY_STATUS,
                         respect_retry_after_header=True, allowed_methods={"GET"},
                         raise_on_status=True)
    adapter = _PoliteAdapter(polite, budget, max_retries=retry)
    session = _KeySession()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = polite.user_agent
    if polite.api_key:
        session.params = {"api_key": polite.api_key}
    return session
