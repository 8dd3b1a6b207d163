"""The OpenAlex client: pyalex's query builder, pointed at any API URL, on a polite session.

pyalex (0.21) builds URLs for ``https://api.openalex.org`` only and retries on ``https://``
only, with no timeout. :func:`works_query` returns a pyalex ``Works`` query bound to a
:class:`OpenAlex` client: same filters, search and cursor paging, but its URL is rebased on
``api_url`` (a mirror, a test server) and its requests go through
:func:`openmsd.fetch.session.polite_session` (429 / ``Retry-After`` / 5xx backoff, size limit).

>>> client = OpenAlex("http://127.0.0.1:9/v1")
>>> client.works().filter(cites="W1").url
'http://127.0.0.1:9/v1/works?filter=cites:W1'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pyalex
import requests

from openmsd.fetch.ids import seed_path, work_id
from openmsd.fetch.session import BadAnswer, FetchError, Polite, polite_session

__all__ = ["DEFAULT_API", "OpenAlex", "Page", "seed_path", "work_id"]

DEFAULT_API = "https://api.openalex.org"
class Page(list):
    """One page of works (dicts) with the cursor of the next page (None on the last)."""

    def __init__(self, works: list[dict[str, Any]], next_cursor: str | None, count: int | None):
        super().__init__(works)
        self.next_cursor = next_cursor
        self.count = count


class OpenAlex:
    """An OpenAlex API at ``api_url``, reached politely; ``api_key`` for premium features."""

    def __init__(self, api_url: str = DEFAULT_API, polite: Polite | None = None,
                 api_key: str | None = None):
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError(f"--api-url {api_url!r}: expected an http(s) URL")
        self.api_url = api_url.rstrip("/")
        self.polite = polite or Polite()
        self.session = polite_session(self.polite)
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"
        # pyalex adds its configured identity to every request: make it ours.
        pyalex.config.email = self.polite.mailto
        pyalex.config.api_key = api_key
        pyalex.config.user_agent = self.session.headers["User-Agent"]
        self.requests = 0
        base, session, client = parts, self.session, self

        class Works(pyalex.Works):  # pyalex names the endpoint after the class: keep "Works"
            @property
            def url(self) -> str:
                own = urlsplit(super().url)
                return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + own.path,
                                   own.query, ""))

            def _get_from_url(self, url: str, session_: Any = None) -> Any:
                client.requests += 1
                return super()._get_from_url(url, session)

        self._works = Works

    def works(self) -> pyalex.Works:
        """A new pyalex ``Works`` query on this API (``.filter``, ``.search``, ...)."""
        return self._works()

    def work(self, key: str) -> dict[str, Any] | None:
        """The work at ``/works/{key}`` (redirects of merged ids followed); None on 404."""
        try:
            return dict(self._call(lambda: self._works()[key], f"works/{key}"))
        except _NotFound:
            return None

    def page(self, query: pyalex.Works, cursor: str = "*", per_page: int = 200) -> Page:
        """One cursor page of ``query``."""
        result = self._call(lambda: query.get(per_page=per_page, cursor=cursor), query.url)
        meta = result.meta or {}
        if "next_cursor" not in meta:
            raise BadAnswer(f"{query.url}: answer without meta.next_cursor")
        return Page([dict(w) for w in result], meta.get("next_cursor"), meta.get("count"))

    def pages(self, query: pyalex.Works, cursor: str = "*",
              per_page: int = 200) -> Iterator[Page]:
        """Every page of ``query`` from ``cursor`` on."""
        while cursor:
            page = self.page(query, cursor, per_page)
            yield page
            if not page:
                return
            cursor = page.next_cursor

    def _call(self, call: Any, what: str) -> Any:
        """Run a pyalex call, turning transport failures into :class:`FetchError`."""
        try:
            return call()
        except requests.HTTPError as error:
            status = error.response.status_code if error.response is not None else None
            if status == 404:
                raise _NotFound(what) from None
            if status in (401, 403):
                raise FetchError(f"{self.api_url}: {status} refused ({_error_text(error)}); "
                                 "is the API key right?") from None
            raise BadAnswer(f"{self.api_url}/{what}: HTTP {status} ({_error_text(error)})"
                             ) from None
        except requests.exceptions.RetryError as error:
            raise BadAnswer(f"{self.api_url}/{what}: still failing after "
                             f"{self.polite.retries} retries ({_reason(error)})") from None
        except requests.exceptions.JSONDecodeError as error:
            raise BadAnswer(f"{self.api_url}/{what}: the answer is not JSON ({error})"
                             ) from None
        except requests.ConnectionError as error:
            raise FetchError(f"{self.api_url}: unreachable ({_reason(error)})") from None
        except requests.RequestException as error:
            raise BadAnswer(f"{self.api_url}/{what}: {error}") from None
        except pyalex.api.QueryError as error:
            if "API key" in str(error):  # pyalex's answer to a 401
                raise FetchError(f"{self.api_url}: 401 refused ({error}); is the API key "
                                 "right?") from None
            raise BadAnswer(f"{self.api_url}/{what}: the API refused the query ({error})"
                            ) from None
        except (ValueError, KeyError, TypeError) as error:
            raise BadAnswer(f"{self.api_url}/{what}: unexpected answer ({error})") from None


class _NotFound(LookupError):
    pass


def _error_text(error: requests.HTTPError) -> str:
    try:
        body = error.response.json()
        return str(body.get("message") or body.get("error") or body)[:200]
    except (ValueError, AttributeError):
        return (error.response.text if error.response is not None else "")[:200]


def _reason(error: Exception) -> str:
    reason = error.args[0] if error.args else error
    reason = getattr(reason, "reason", reason)
    return str(reason)[:200]
