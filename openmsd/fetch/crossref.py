"""``openmsd fetch crossref``: Crossref works for DOIs, as the Crossref JSON the ingest reader
reads (``{"items": [work, ...]}``): the reference lists and abstracts OpenAlex lacks.

Plain HTTP on the session every fetch uses (:func:`openmsd.fetch.session.polite_session`:
429 / 5xx retried with backoff and a short ``Retry-After`` honoured, an overall deadline per
request, a size limit). As Crossref's REST API documents ("Access and authentication", read
November 2026): the ``mailto`` parameter is sent with every request (its polite pool, with
higher limits than the public one since December 2025); a Metadata Plus token goes in the
``Crossref-Plus-API-Token: Bearer TOKEN`` header (habanero 2.9 stores a token and never sends
it); requests are spaced to the limit each answer states in ``x-rate-limit-limit`` per
``x-rate-limit-interval``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import orjson
import requests

from openmsd.fetch.budget import BudgetSpent
from openmsd.fetch.crawler import iter_works
from openmsd.fetch.session import (
    BadAnswer,
    FetchError,
    NetworkError,
    Polite,
    ResponseTooLarge,
    polite_session,
    public_url,
)
from openmsd.identifiers import normalize_doi

__all__ = ["CROSSREF_API", "CrossrefReport", "Pacer", "dois_lacking", "fetch_crossref"]

CROSSREF_API = "https://api.crossref.org"
PLUS_HEADER = "Crossref-Plus-API-Token"
MAILTO = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass
class CrossrefReport:
    """What a Crossref fetch did."""

    works: int = 0
    requests: int = 0
    seconds: float = 0.0
    unresolved: list[dict[str, str]] = field(default_factory=list)
    out: str = ""
    pool: str | None = None  # the pool Crossref served from (x-api-pool: public, polite, plus)


class Pacer:
    """Requests spaced to the limit Crossref's answers state (``x-rate-limit-limit`` requests
    per ``x-rate-limit-interval``, e.g. ``50`` per ``1s``)."""

    def __init__(self) -> None:
        self.gap = 0.0
        self.last = 0.0

    def wait(self) -> None:
        """Sleep until the next request may go."""
        pause = self.last + self.gap - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        self.last = time.monotonic()

    def read(self, headers: Mapping[str, str]) -> None:
        """Take the limit an answer states.

        >>> pacer = Pacer(); pacer.read({"x-rate-limit-limit": "5", "x-rate-limit-interval": "1s"})
        >>> pacer.gap
        0.2
        """
        limit, interval = headers.get("x-rate-limit-limit"), headers.get("x-rate-limit-interval")
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*", interval or "")
        if not (limit and limit.strip().isdigit() and int(limit) > 0 and match):
            return
        seconds = float(match[1]) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[match[2]]
        self.gap = seconds / int(limit)


def check_mailto(mailto: str | None) -> str:
    """``mailto`` when it is an e-mail address; :class:`FetchError` naming the option else."""
    if not mailto:
        raise FetchError("fetch crossref: give --mailto YOUR@EMAIL (or set CROSSREF_MAILTO): "
                         "Crossref asks for one with every request, and serves those who give "
                         "one from its faster polite pool")
    if not MAILTO.match(mailto):
        raise FetchError(f"--mailto {mailto!r}: expected an e-mail address")
    return mailto


def dois_lacking(works_file: Path) -> list[str]:
    """DOIs of the works of an OpenAlex fetch output that lack an abstract or references."""
    out = []
    for work in iter_works(works_file):
        doi = normalize_doi(work.get("doi"))
        if doi and (not work.get("abstract_inverted_index") or not work.get("referenced_works")):
            out.append(doi)
    return out


def _work(session: requests.Session, api: str, doi: str, mailto: str, pacer: Pacer,
          report: CrossrefReport) -> dict[str, Any] | None:
    """The Crossref ``message`` of ``doi``; None when Crossref does not know it."""
    url = f"{api}/works/{quote(doi, safe='/')}"
    pacer.wait()
    report.requests += 1
    try:
        answer = session.get(url, params={"mailto": mailto})
    except BudgetSpent as error:
        raise FetchError(f"{url}: Crossref refused more requests now ({error}); run the same "
                         "command later") from None
    except ResponseTooLarge:
        raise
    except NetworkError:
        raise
    except requests.exceptions.RetryError as error:
        raise FetchError(f"{url}: still failing after the retries ({error.args[0]})"[:300]
                         ) from None
    except requests.ConnectionError as error:
        raise NetworkError(f"{api}: unreachable ({str(error)[:200]})") from None
    except requests.RequestException as error:
        raise FetchError(f"{url}: {str(error)[:200]}") from None
    pacer.read(answer.headers)
    report.pool = answer.headers.get("x-api-pool", report.pool)
    if answer.status_code == 404:
        return None
    if answer.status_code in (401, 403):
        raise FetchError(f"{api}: {answer.status_code} refused: is the Metadata Plus token "
                         "right? (--plus-token, CROSSREF_PLUS_TOKEN)")
    if answer.status_code != 200:
        raise FetchError(f"{url}: HTTP {answer.status_code}")
    try:
        data = answer.json()
    except ValueError as error:
        raise FetchError(f"{url}: the answer is not JSON ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        raise FetchError(f'{url}: expected {{"status": "ok", "message": {{...}}}}')
    return data["message"]


def fetch_crossref(dois: Iterable[str], out: Path, api_url: str = CROSSREF_API,
                   polite: Polite | None = None,
                   tick: Callable[[int], None] | None = None,
                   plus_token: str | None = None) -> CrossrefReport:
    """Fetch each DOI's Crossref work into ``out`` (``{"items": [...]}``, written atomically);
    unknown DOIs, and works over ``polite.max_bytes`` (refused), are listed in the report.
    ``polite.mailto`` is required (:func:`check_mailto`); ``plus_token`` (else
    ``CROSSREF_PLUS_TOKEN``) goes in the Metadata Plus header."""
    polite = polite or Polite()
    mailto = check_mailto(polite.mailto or os.environ.get("CROSSREF_MAILTO"))
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise FetchError(f"--api-url {api_url!r}: expected an http(s) URL")
    api = api_url.rstrip("/")
    session = polite_session(replace(polite, api_key=None,
                                     user_agent=f"{polite.user_agent} (mailto:{mailto})"))
    token = plus_token or os.environ.get("CROSSREF_PLUS_TOKEN")
    if token:
        session.headers[PLUS_HEADER] = f"Bearer {token}"
    report = CrossrefReport(out=str(out))
    pacer = Pacer()
    began = time.perf_counter()
    items = []
    for raw in dict.fromkeys(dois):
        doi = normalize_doi(raw)
        if doi is None:
            report.unresolved.append({"doi": raw, "reason": "not a DOI"})
            continue
        try:
            work = _work(session, api, doi, mailto, pacer, report)
        except (ResponseTooLarge, BadAnswer) as error:
            report.unresolved.append({"doi": doi, "reason": public_url(str(error))})
            continue
        if work is None:
            report.unresolved.append({"doi": doi, "reason": "not found in Crossref"})
            continue
        items.append(work)
        if tick:
            tick(1)
    report.works, report.seconds = len(items), round(time.perf_counter() - began, 3)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(orjson.dumps({"items": items}))
    os.replace(tmp, out)
    return report
