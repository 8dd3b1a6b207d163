"""``openmsd fetch crossref``: Crossref works (habanero) for DOIs, as the Crossref JSON the
ingest reader reads (``{"items": [work, ...]}``): the reference lists and abstracts OpenAlex
lacks. habanero (2.9) neither retries nor exposes its HTTP client, so 429 (its
``Retry-After``) and 5xx answers are retried here around each call, with exponential backoff,
and each call gets its overall deadline (``polite.timeout``) here too: a call still running
then is abandoned to a daemon thread and reported as a :class:`NetworkError`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import orjson
from habanero import Crossref, RequestError

from openmsd.fetch.crawler import iter_works
from openmsd.fetch.session import RETRY_STATUS, FetchError, NetworkError, Polite
from openmsd.identifiers import normalize_doi

__all__ = ["CROSSREF_API", "CrossrefReport", "dois_lacking", "fetch_crossref"]

CROSSREF_API = "https://api.crossref.org"


@dataclass
class CrossrefReport:
    """What a Crossref fetch did."""

    works: int = 0
    requests: int = 0
    seconds: float = 0.0
    unresolved: list[dict[str, str]] = field(default_factory=list)
    out: str = ""


def dois_lacking(works_file: Path) -> list[str]:
    """DOIs of the works of an OpenAlex fetch output that lack an abstract or references."""
    out = []
    for work in iter_works(works_file):
        doi = normalize_doi(work.get("doi"))
        if doi and (not work.get("abstract_inverted_index") or not work.get("referenced_works")):
            out.append(doi)
    return out


def _retry_after(response: httpx2.Response, attempt: int, polite: Polite) -> float:
    value = response.headers.get("Retry-After", "")
    if value.strip().isdigit():
        return min(float(value), polite.backoff_max)
    return min(polite.backoff * 2 ** attempt, polite.backoff_max)


def _bounded(call: Callable[[], Any], seconds: float, url: str) -> Any:
    """``call()``, or :class:`NetworkError` when it has not returned within ``seconds``."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # handed to the caller below
            box["error"] = error

    worker = threading.Thread(target=run, name="crossref-call", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise NetworkError(f"{url}: no complete answer within {seconds:g} s (--timeout); the "
                           "server is too slow or stalled")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _work(client: Crossref, doi: str, polite: Polite, report: CrossrefReport) -> Any:
    """The Crossref ``message`` of ``doi``; None when Crossref does not know it."""
    for attempt in range(polite.retries + 1):
        report.requests += 1
        try:
            answer = _bounded(lambda: client.works(ids=doi), polite.timeout,
                              f"{client.base_url}/works/{doi}")
        except httpx2.HTTPStatusError as error:
            status = error.response.status_code
            if status == 404:
                return None
            if status in RETRY_STATUS and attempt < polite.retries:
                time.sleep(_retry_after(error.response, attempt, polite))
                continue
            if status in (401, 403):
                raise FetchError(f"{client.base_url}: {status} refused: is the key right?"
                                 ) from None
            raise FetchError(f"{client.base_url}/works/{doi}: HTTP {status}") from None
        except RequestError as error:
            if error.status_code == 404:
                return None
            raise FetchError(f"{client.base_url}/works/{doi}: {error}") from None
        except NetworkError:
            raise
        except (httpx2.TransportError, RuntimeError) as error:
            raise FetchError(f"{client.base_url}: unreachable ({error})") from None
        except ValueError as error:
            raise FetchError(f"{client.base_url}/works/{doi}: the answer is not JSON ({error})"
                             ) from None
        if not isinstance(answer, dict) or not isinstance(answer.get("message"), dict):
            raise FetchError(f"{client.base_url}/works/{doi}: expected "
                             '{"status": "ok", "message": {...}}')
        return answer["message"]
    return None


def fetch_crossref(dois: Iterable[str], out: Path, api_url: str = CROSSREF_API,
                   polite: Polite | None = None,
                   tick: Callable[[int], None] | None = None) -> CrossrefReport:
    """Fetch each DOI's Crossref work into ``out`` (``{"items": [...]}``, written atomically);
    unknown DOIs, and works over ``polite.max_bytes`` (refused), are listed in the report."""
    polite = polite or Polite()
    client = Crossref(base_url=api_url.rstrip("/"), mailto=polite.mailto,
                      ua_string=polite.user_agent, timeout=int(polite.timeout))
    report = CrossrefReport(out=str(out))
    began = time.perf_counter()
    items = []
    for raw in dict.fromkeys(dois):
        doi = normalize_doi(raw)
        if doi is None:
            report.unresolved.append({"doi": raw, "reason": "not a DOI"})
            continue
        work = _work(client, doi, polite, report)
        if work is None:
            report.unresolved.append({"doi": doi, "reason": "not found in Crossref"})
            continue
        size = len(orjson.dumps(work))
        if size > polite.max_bytes:  # habanero has read it whole: refused, not kept
            report.unresolved.append({"doi": doi, "reason": f"answer of {size:,} bytes is over "
                                                            f"the limit of {polite.max_bytes:,}"})
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
