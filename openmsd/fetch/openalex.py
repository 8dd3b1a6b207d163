"""The OpenAlex client: pyalex's query builder, pointed at any API URL, on a polite session.

pyalex (0.21) builds URLs for ``https://api.openalex.org`` only, retries on ``https://``
only, with no timeout, and sends its key as an ``Authorization`` header. :class:`OpenAlex`
keeps pyalex's ``Works`` queries (filters, search, cursor paging) but rebases their URL on
``api_url`` (a mirror, a test server) and sends them through
:func:`openmsd.fetch.session.polite_session`: the key as ``api_key`` on every request,
429 / ``Retry-After`` / 5xx backoff, an overall deadline per request, a size limit, and the
rate-limit headers counted in :attr:`OpenAlex.budget`.

>>> client = OpenAlex("http://127.0.0.1:9/v1")
>>> client.works().filter(cites="W1").url
'http://127.0.0.1:9/v1/works?filter=cites:W1'
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pyalex
import requests

from openmsd.fetch.budget import KEY_HELP, Budget, BudgetSpent, price
from openmsd.fetch.errors import PlanRequired, QueryTooLong
from openmsd.fetch.ids import seed_path, work_id
from openmsd.fetch.session import (
    BadAnswer,
    CutAnswer,
    FetchError,
    NetworkError,
    Polite,
    ResponseTooLarge,
    polite_session,
    public_url,
)

__all__ = ["DEFAULT_API", "SEARCH_MAX", "OpenAlex", "Page", "fit_search", "seed_path",
           "work_id"]

DEFAULT_API = "https://api.openalex.org"
# OpenAlex refuses a search (or search.semantic) value over this many characters from a key not
# on a paid plan: 400 "Search query too long" (its API proxy's search-volume gate, 2026).
SEARCH_MAX = 1500


def fit_search(text: str, limit: int = SEARCH_MAX) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` characters at a word boundary (whitespace squeezed),
    and whether it was cut.

    >>> fit_search("parsing French   text", 12)
    ('parsing', True)
    >>> fit_search("short", 12)
    ('short', False)
    """
    squeezed = " ".join(text.split())
    if len(squeezed) <= limit:
        return squeezed, False
    cut = squeezed[:limit + 1]
    head = cut.rsplit(" ", 1)[0] if " " in cut else squeezed[:limit]
    return head[:limit].rstrip(), True


class Page(list):
    """One page of works (dicts) with the cursor of the next page (None on the last)."""

    def __init__(self, works: list[dict[str, Any]], next_cursor: str | None, count: int | None):
        super().__init__(works)
        self.next_cursor = next_cursor
        self.count = count


class OpenAlex:
    """An OpenAlex API at ``api_url``; ``api_key`` (else ``polite.api_key``) goes in the
    ``api_key`` parameter of every request; ``max_cost`` (USD) caps what this client may
    spend (:class:`~openmsd.fetch.budget.CostCap` before a call that would pass it)."""

    def __init__(self, api_url: str = DEFAULT_API, polite: Polite | None = None,
                 api_key: str | None = None, max_cost: float | None = None):
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError(f"--api-url {api_url!r}: expected an http(s) URL")
        if max_cost is not None and not 0 <= max_cost < float("inf"):
            raise FetchError(f"--max-cost {max_cost:g}: expected 0 or more (USD)")
        self.api_url = api_url.rstrip("/")
        self.polite = replace(polite or Polite(), api_key=api_key or (polite or Polite()).api_key)
        self.budget = Budget(keyed=bool(self.polite.api_key), max_cost=max_cost)
        self.session = polite_session(self.polite, self.budget)
        self.requests = 0
        base, session, client = parts, self.session, self

        class Works(pyalex.Works):  # pyalex names the endpoint after the class: keep "Works"
            xpac = False

            @property
            def url(self) -> str:
                own = urlsplit(super().url)
                query = own.query
                if self.xpac and own.path.rstrip("/") == "/works":  # lists only
                    query = f"{query}&include_xpac=true" if query else "include_xpac=true"
                return urlunsplit((base.scheme, base.netloc, base.path.rstrip("/") + own.path,
                                   query, ""))

            def _get_from_url(self, url: str, session_: Any = None) -> Any:
                client.requests += 1
                return super()._get_from_url(url, session)

        self._works = Works

    def works(self, include_xpac: bool = False) -> pyalex.Works:
        """A new pyalex ``Works`` query on this API (``.filter``, ``.search``, ...); with
        ``include_xpac``, its lists take in the works OpenAlex keeps outside its core."""
        query = self._works()
        query.xpac = include_xpac
        return query

    def date_filter_refusal(self, since: str) -> str | None:
        """Whether this key may filter by updated date: None when one page of
        ``filter=from_updated_date:SINCE`` is answered (a list call), else the API's refusal
        ("Plan upgrade required": OpenAlex keeps its date filters for paid plans; or an API
        that does not take the filter at all)."""
        try:
            self.page(self.works().filter(from_updated_date=since), per_page=1)
        except (PlanRequired, BadAnswer) as error:  # a mirror may not know the filter at all
            return str(error)
        return None

    def work(self, key: str) -> dict[str, Any] | None:
        """The work at ``/works/{key}`` (free; redirects of merged ids followed); None on
        404."""
        url = f"{self.api_url}/works/{quote(key, safe=':/')}"
        try:
            return dict(self._call(lambda: self._works()[key], url))
        except _NotFound:
            return None

    def affords(self, query: pyalex.Works) -> bool:
        """Whether the budget and ``max_cost`` allow one call of ``query``."""
        return self.budget.affords(price(query.url))

    def page(self, query: pyalex.Works, cursor: str = "*", per_page: int = 100) -> Page:
        """One cursor page of ``query`` (:class:`~openmsd.fetch.budget.CostCap` or
        :class:`~openmsd.fetch.budget.BudgetSpent` before a call the budget cannot pay)."""
        url = query.url
        self.budget.reserve(url)
        try:
            result = self._call(lambda: query.get(per_page=per_page, cursor=cursor), url)
        except _NotFound:  # a list of works is never missing: the URL is not OpenAlex's API
            raise BadAnswer(f"{public_url(url)}: HTTP 404 (not found): is {self.api_url} an "
                            "OpenAlex API (--api-url)?") from None
        meta = result.meta or {}
        if "next_cursor" not in meta:
            raise BadAnswer(f"{public_url(url)}: answer without meta.next_cursor")
        return Page([dict(w) for w in result], meta.get("next_cursor"), meta.get("count"))

    def pages(self, query: pyalex.Works, cursor: str = "*",
              per_page: int = 100) -> Iterator[Page]:
        """Every page of ``query`` from ``cursor`` on."""
        while cursor:
            page = self.page(query, cursor, per_page)
            yield page
            if not page:
                return
            cursor = page.next_cursor

    def _call(self, call: Any, url: str) -> Any:
        """Run a pyalex call to ``url``; a body cut off is tried again (``retries``: urllib3
        retries everything before the body), every other failure becomes one
        :class:`FetchError` naming the URL (never the key)."""
        for attempt in range(self.polite.retries + 1):
            try:
                return self._once(call, url)
            except CutAnswer:
                if attempt == self.polite.retries:
                    raise
                time.sleep(min(self.polite.backoff * 2 ** attempt, self.polite.backoff_max))
        raise AssertionError("unreachable")

    def _once(self, call: Any, url: str) -> Any:
        where = public_url(url)
        try:
            return call()
        except BudgetSpent as error:
            raise BudgetSpent(self.budget.spent_message(str(error))) from None
        except PlanRequired as error:
            raise PlanRequired(f"{where}: refused, {error}") from None
        except requests.HTTPError as error:
            status = error.response.status_code if error.response is not None else None
            if status == 404:
                raise _NotFound(where) from None
            text = _error_text(error)
            if "upgrade required" in text.lower() or (status == 403 and "plan" in text.lower()):
                raise PlanRequired(f"{where}: refused, {text}") from None
            if status == 400 and "too long" in text.lower():
                raise QueryTooLong(f"{where}: refused, {text}") from None
            if status in (401, 403):
                raise FetchError(self._refused(status, text)) from None
            raise BadAnswer(f"{where}: HTTP {status} ({text})") from None
        except requests.exceptions.RetryError as error:
            raise BadAnswer(f"{where}: still failing after {self.polite.retries} retries "
                            f"({_reason(error)})") from None
        except requests.exceptions.JSONDecodeError as error:
            raise BadAnswer(f"{where}: the answer is not JSON ({error})") from None
        except requests.exceptions.ConnectTimeout:
            raise NetworkError(f"{where}: unreachable (no connection within the timeout)"
                               ) from None
        except (requests.exceptions.ReadTimeout, requests.exceptions.ChunkedEncodingError,
                requests.exceptions.ContentDecodingError) as error:
            raise NetworkError(f"{where}: the answer stalled or broke off ({_reason(error)})"
                               ) from None
        except requests.ConnectionError as error:
            reason = _reason(error)
            if "NewConnectionError" in reason or "Failed to resolve" in reason or \
                    "Connection refused" in reason:
                raise NetworkError(f"{self.api_url}: unreachable ({reason})") from None
            raise NetworkError(f"{where}: the connection broke off ({reason})") from None
        except ResponseTooLarge as error:
            raise BadAnswer(str(error)) from None
        except requests.RequestException as error:
            raise BadAnswer(f"{where}: {error}") from None
        except pyalex.api.QueryError as error:
            if "API key" in str(error):  # pyalex's answer to a 401
                raise FetchError(self._refused(401, str(error))) from None
            raise BadAnswer(f"{where}: the API refused the query ({error})") from None
        except (ValueError, KeyError, TypeError) as error:
            raise BadAnswer(f"{where}: unexpected answer ({error})") from None

    def _refused(self, status: int, text: str) -> str:
        if status == 403:
            return (f"{self.api_url}: 403 forbidden ({text}); OpenAlex answers 403 to requests "
                    "that come too fast (wait, then run the same command again) and to a key "
                    "without access to what was asked")
        if self.polite.api_key:
            return (f"{self.api_url}: {status} refused ({text}): the API key is wrong; check "
                    "OPENALEX_API_KEY or --api-key against openalex.org/settings/api")
        return f"{self.api_url}: {status} refused ({text}): OpenAlex wants an API key; {KEY_HELP}"


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
    return _POOL.sub("", _KEY.sub("api_key=...", str(reason)))[:200]


_KEY = re.compile(r"api_key=[^&\s)]*")
_POOL = re.compile(r"\b\w*Connection(?:Pool)?\(host='[^']*', port=\d+\): ")
