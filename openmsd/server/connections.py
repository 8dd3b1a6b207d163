"""The server's connections: how long a client may take to send a request's headers, how
long an idle connection is kept, how large headers may grow.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) but not the time a
request's headers take to arrive: a client that sends half a header line and then nothing held
its connection (and its slot) forever. :func:`header_deadline` gives uvicorn's HTTP protocol
(httptools where installed, else h11) a deadline per request: from a connection's first byte,
or a kept-alive connection's first byte after a response, the headers must be complete within
``seconds``, else the connection is closed. A body that stalls is answered 408 by
:class:`openmsd.server.app.LimitsAndHeaders`.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HEADER_TIMEOUT_S", "KEEP_ALIVE_S", "MAX_HEADER_BYTES", "HeaderDeadline",
           "header_deadline", "uvicorn_options"]

HEADER_TIMEOUT_S = 10.0
"""Seconds a request's headers may take to arrive."""
KEEP_ALIVE_S = 5
"""Seconds an idle kept-alive connection is kept (uvicorn's ``timeout_keep_alive``)."""
MAX_HEADER_BYTES = 64 * 1024
"""The most bytes of headers h11 buffers before refusing the request (httptools: 80 KiB)."""


def _base() -> type[asyncio.Protocol]:
    try:
        # optional: the serve extra
        import httptools  # noqa: F401
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol  # optional: the serve extra

        return H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # optional: the serve extra

    return HttpToolsProtocol


def header_deadline(seconds: float = HEADER_TIMEOUT_S) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class, closing a connection whose request headers are not
    complete ``seconds`` after the request's first byte."""
    base: Any = _base()

    class HeaderDeadline(base):  # type: ignore[misc, valid-type]
        _deadline: asyncio.TimerHandle | None = None
        _waiting_after: Any = None  # the request before the one whose headers are awaited

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            idle = self.cycle is None or self.cycle.response_complete
            if idle and (self._deadline is None or self._waiting_after is not self.cycle):
                self._arm()  # the first bytes of the next request on this connection
            super().data_received(data)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._waiting_after = self.cycle
            self._deadline = self.loop.call_later(seconds, self._expire)

        def _expire(self) -> None:
            self._deadline = None
            if self.cycle is self._waiting_after and not self.transport.is_closing():
                self.transport.close()  # no new request began: its headers never came

    HeaderDeadline.__name__ = f"HeaderDeadline{base.__name__}"
    return HeaderDeadline


def uvicorn_options(header_timeout_s: float = HEADER_TIMEOUT_S) -> dict[str, Any]:
    """The options every uvicorn server of openmsd runs with (``uvicorn.run`` /
    ``uvicorn.Config``): the header deadline, the idle keep-alive, h11's header limit."""
    return {"http": header_deadline(header_timeout_s), "timeout_keep_alive": KEEP_ALIVE_S,
            "h11_max_incomplete_event_size": MAX_HEADER_BYTES}


HeaderDeadline = header_deadline()
"""The protocol class with the default deadline, by name for uvicorn's worker processes
(``http="openmsd.server.connections:HeaderDeadline"``)."""
