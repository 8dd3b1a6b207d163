"""OpenAlex's daily budget in US dollars (since February 13, 2026): what a call costs, what
the answers say is left, and when a crawl must stop.

OpenAlex's documentation ("Authentication & Pricing", developers.openalex.org/api-reference/
authentication) says: a free API key in the ``api_key`` parameter gives $1 a day, no key a
few cents; singletons (``/works/W1``, ``/works/doi:...``) are free, a list or filter call costs
$0.0001, a search $0.001; every answer carries ``X-RateLimit-Limit-USD``,
``X-RateLimit-Remaining-USD`` and ``X-RateLimit-Cost-USD``; a spent budget answers 429.

>>> call_kind("https://api.openalex.org/works/doi:10.1/x"), price("http://h/works?filter=a:b")
('singleton', 0.0001)
>>> call_kind("http://h/works?filter=title.search:parsing")
'search'
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

from openmsd.fetch.errors import FetchError

__all__ = ["KEY_HELP", "PRICES", "Budget", "BudgetSpent", "CostCap", "call_kind", "price",
           "reset_text", "spent_answer"]

PRICES = {"singleton": 0.0, "list": 0.0001, "search": 0.001}
KEY_HELP = ("get a free API key at https://openalex.org/settings/api ($1 a day of calls) and "
            "set OPENALEX_API_KEY (or pass --api-key)")
LIMIT = "X-RateLimit-Limit-USD"
REMAINING = "X-RateLimit-Remaining-USD"
COST = "X-RateLimit-Cost-USD"
PREPAID = "X-RateLimit-Prepaid-Remaining-USD"


class BudgetSpent(FetchError):
    """The daily budget is spent: a 429 that says so, or too little left for the next call."""


class CostCap(FetchError):
    """The next call would pass ``--max-cost``."""


def call_kind(url: str) -> str:
    """``singleton``, ``list`` or ``search``: how OpenAlex bills the call to ``url``."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    after = segments[segments.index("works") + 1:] if "works" in segments else []
    # /works/W1, /works/doi:10.1/x (a DOI holds a slash), /works/https://doi.org/10.1/x
    if len(after) == 1 or (after and after[0].lower().startswith(("doi:", "https:", "http:"))):
        return "singleton"
    query = parse_qs(parts.query)
    if any(k == "search" or k.startswith("search.") for k in query) or any(
            ".search:" in value for value in query.get("filter", [])):
        return "search"
    return "list"


def price(url: str) -> float:
    """What a call to ``url`` costs, in USD, by OpenAlex's published prices."""
    return PRICES[call_kind(url)]


def _number(value: str | None) -> float | None:
    """A budget header's amount in USD: a finite number of at least 0, else None (a header
    that says ``nan``, ``inf`` or ``-5`` is read as absent, not as an amount).

    >>> _number("0.0001"), _number("nan"), _number("-5"), _number("1e400"), _number("abc")
    (0.0001, None, None, None, None)
    """
    try:
        number = float(value) if value not in (None, "") else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) and number >= 0 else None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{max(minutes, 1)} min"


def reset_text(headers: Mapping[str, str] | None = None) -> str:
    """When the budget comes back: the answer's ``Retry-After`` when it has one, else the
    next midnight UTC (the documentation gives a daily budget without naming the hour)."""
    wait = _retry_after(headers or {})
    if wait is not None:
        return f"the API asks to wait {_duration(wait)}"
    now = datetime.now(UTC)
    midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    wait = (midnight - now).total_seconds()
    return f"the daily budget resets at 00:00 UTC (in {_duration(wait)})"


def spent_answer(headers: Mapping[str, str], deadline: float) -> str | None:
    """For a 429: why waiting will not help (the budget is spent, or the API asks to wait
    longer than ``deadline`` seconds), or None for a busy second worth retrying."""
    remaining = _number(headers.get(REMAINING))
    wait = _retry_after(headers)
    if remaining is not None and remaining <= 0:
        limit = _number(headers.get(LIMIT))
        of = f" of ${limit:g} a day" if limit is not None else ""
        return f"a 429 answer with $0 left{of}; {reset_text(headers)}"
    if wait is not None and wait > deadline:
        return f"a 429 answer (rate limited); {reset_text(headers)}"
    return None


@dataclass
class Budget:
    """What one run spent, what the answers say is left, and the cap it must stay under.

    ``record`` reads the rate-limit headers of every answer; ``reserve`` raises
    :class:`CostCap` or :class:`BudgetSpent` before a call that would pass the cap or the
    budget left."""

    keyed: bool = False
    max_cost: float | None = None
    limit_usd: float | None = None
    remaining_usd: float | None = None
    prepaid_usd: float | None = None
    spent_usd: float = 0.0
    calls: int = 0
    billed_calls: int = 0

    def record(self, headers: Mapping[str, str], url: str) -> None:
        """Count one answer to ``url``: its cost (the header, else the published price)."""
        self.calls += 1
        cost = _number(headers.get(COST))
        if cost is None and _number(headers.get(REMAINING)) is None:
            cost = price(url)  # an API that sends no budget headers: the published price
        if cost:
            self.spent_usd += cost
            self.billed_calls += 1
        for name, attribute in ((LIMIT, "limit_usd"), (REMAINING, "remaining_usd"),
                                (PREPAID, "prepaid_usd")):
            value = _number(headers.get(name))
            if value is not None:
                setattr(self, attribute, value)

    def left(self) -> float | None:
        """USD left today (daily budget plus prepaid balance), when an answer said."""
        if self.remaining_usd is None:
            return None
        return self.remaining_usd + (self.prepaid_usd or 0.0)

    def affords(self, cost: float) -> bool:
        """Whether a call of ``cost`` stays under the cap and within the budget left."""
        if cost <= 0:
            return True
        if self.max_cost is not None and self.spent_usd + cost > self.max_cost + 1e-12:
            return False
        left = self.left()
        return left is None or left + 1e-12 >= cost

    def reserve(self, url: str) -> None:
        """Raise before a call to ``url`` that would pass ``--max-cost`` or the budget."""
        cost = price(url)
        if self.affords(cost):
            return
        if self.max_cost is not None and self.spent_usd + cost > self.max_cost + 1e-12:
            raise CostCap(f"stopped before --max-cost ${self.max_cost:g}: this run spent "
                          f"${self.spent_usd:.4f} on {self.billed_calls:,} billed calls, the "
                          f"next ({call_kind(url)}, ${cost:g}) would pass it")
        raise BudgetSpent(self.spent_message(f"${self.left():.4f} left, the next "
                                             f"{call_kind(url)} call costs ${cost:g}; "
                                             f"{reset_text()}"))

    def spent_message(self, why: str) -> str:
        """The one line for a spent budget: why, when it resets, how to get more."""
        limit = f" (${self.limit_usd:g} a day)" if self.limit_usd is not None else ""
        if self.keyed:
            return (f"the OpenAlex budget of this key is spent{limit}: {why}; for more, "
                    "see OpenAlex's paid plans")
        return f"the keyless OpenAlex budget is spent{limit}: {why}; {KEY_HELP}"

    def summary(self) -> dict[str, float | int | None]:
        """For the report: spent this run, billed calls, the day's limit and what is left."""
        return {"cost_usd": round(self.spent_usd, 6), "billed_calls": self.billed_calls,
                "budget_limit_usd": self.limit_usd, "budget_remaining_usd": self.left()}
