"""The HTTP session every API client of :mod:`openmsd.fetch` uses (requests + urllib3).

One :class:`Polite` configuration gives a :class:`requests.Session` that retries 429 and
5xx answers with exponential backoff, honouring ``Retry-After`` (urllib3's :class:`Retry`),
identifies itself (``mailto`` parameter and ``From`` header: OpenAlex's polite pool), times
out, and refuses an answer larger than ``max_bytes`` (:class:`ResponseTooLarge`).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from openmsd.fetch.errors import BadAnswer, FetchError

__all__ = ["RETRY_STATUS", "BadAnswer", "FetchError", "Polite", "ResponseTooLarge",
           "polite_session"]

RETRY_STATUS = (429, 500, 502, 503, 504)


class ResponseTooLarge(requests.RequestException):
    """An answer over the size limit."""


@dataclass(frozen=True)
class Polite:
    """How a client talks to an API: who it is, how it retries, what it accepts."""

    mailto: str | None = None
    retries: int = 5
    backoff: float = 0.5
    backoff_max: float = 60.0
    timeout: float = 30.0
    max_bytes: int = 64 << 20
    user_agent: str = "openmsd-fetch/0.1"


class _TimeoutAdapter(HTTPAdapter):
    """An adapter that puts a default timeout on every request."""

    def __init__(self, timeout: float, **kwargs: Any):
        self.timeout = timeout
        super().__init__(**kwargs)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout
        return super().send(request, **kwargs)


def _size_limit(max_bytes: int):
    def hook(response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
        length = response.headers.get("Content-Length")
        if length and length.isdigit() and int(length) > max_bytes:
            response.close()
            raise ResponseTooLarge(f"{response.url}: answer of {int(length):,} bytes is over "
                                   f"the limit of {max_bytes:,}")
        if response.raw is None or isinstance(response.raw, io.BytesIO):
            return response
        body = response.raw.read(max_bytes + 1, decode_content=True)
        if len(body) > max_bytes:
            response.close()
            raise ResponseTooLarge(f"{response.url}: answer over the limit of {max_bytes:,} "
                                   "bytes")
        response.raw.release_conn()
        response.raw = io.BytesIO(body)
        return response
    return hook


def polite_session(polite: Polite) -> requests.Session:
    """A session that retries, backs off, identifies itself and bounds answer sizes."""
    retry = Retry(total=polite.retries, connect=polite.retries, read=polite.retries,
                  status=polite.retries, backoff_factor=polite.backoff,
                  backoff_max=polite.backoff_max, status_forcelist=RETRY_STATUS,
                  respect_retry_after_header=True, allowed_methods={"GET"},
                  raise_on_status=True)
    adapter = _TimeoutAdapter(polite.timeout, max_retries=retry)
    session = requests.Session()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = (f"{polite.user_agent} (mailto:{polite.mailto})"
                                     if polite.mailto else polite.user_agent)
    if polite.mailto:
        session.headers["From"] = polite.mailto
        session.params = {"mailto": polite.mailto}
    session.hooks["response"].append(_size_limit(polite.max_bytes))
    return session
