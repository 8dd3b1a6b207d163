"""OpenAlex's daily budget in US dollars (since February 13, 2026): what a call costs, what
the answers say is left, and when a crawl must stop.

OpenAlex's documentation ("Authentication & Pricing", developers.openalex.org/api-reference/
authentication) says: a free API key in the ``api_key`` parameter gives $1 a day, no key
$0.10 (since June 2026); singletons (``/works/W1``, ``/works/doi:...``) are free, a list or
filter call costs $0.0001, a search $0.001; every answer carries ``X-RateLimit-Limit-USD``,
``X-RateLimit-Remaining-USD`` and ``X-RateLimit-Cost-USD``; a spent budget answers 429 with
``X-RateLimit-Cost-Required-USD`` over what is left and a ``Retry-After`` running to midnight
UTC, a per-second limit answers 429 with budget left and a ``Retry-After`` of a second or so.

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

__all__ = ["FREE_KEY_USD", "KEYLESS_USD", "KEY_HELP", "PRICES", "Budget", "BudgetSpent",
           "CostCap", "call_kind", "price", "reset_text", "spent_answer"]

PRICES = {"singleton": 0.0, "list": 0.0001, "search": 0.001}
KEY_HELP = ("get a free API key at https://openalex.org/settings/api ($1 a day of calls) and "
            "set OPENALEX_API_KEY (or pass --api-key)")
LIMIT = "X-RateLimit-Limit-USD"
REMAINING = "X-RateLimit-Remaining-USD"
COST = "X-RateLimit-Cost-USD"
PREPAID = "X-RateLimit-Prepaid-Remaining-USD"
COST_REQUIRED = "X-RateLimit-Cost-Required-USD"  # on a 429: what the refused call would cost
RESET = "X-RateLimit-Reset"  # seconds until the daily budget resets (midnight UTC)
# The daily budgets OpenAlex publishes (developers.openalex.org, "Authentication & Pricing";
# the keyless one since June 2026): the dry run's figure until an answer says otherwise.
KEYLESS_USD = 0.10
FREE_KEY_USD = 1.0


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


def _reset_seconds(headers: Mapping[str, str]) -> float | None:
    """``X-RateLimit-Reset``: the seconds until the daily budget resets (the API proxy sends it
    with every answer); None when absent or unreadable."""
    value = (headers.get(RESET) or "").strip()
    return float(value) if value.isdigit() else None


def reset_text(headers: Mapping[str, str] | None = None) -> str:
    """When the daily budget comes back: midnight UTC, in the answer's ``X-RateLimit-Reset``
    seconds (else its ``Retry-After``, else counted here; OpenAlex's budget is daily and its
    proxy resets it at 00:00 UTC)."""
    headers = headers or {}
    wait = _reset_seconds(headers)
    if wait is None:
        wait = _retry_after(headers)
    if wait is None:
        now = datetime.now(UTC)
        midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        wait = (midnight - now).total_seconds()
    when = datetime.now(UTC) + timedelta(seconds=wait + 30)  # to the nearest minute
    return (f"the daily budget resets at {when:%H:%M} UTC on {when:%Y-%m-%d} "
            f"(in {_duration(wait)})")


def spent_answer(headers: Mapping[str, str], brief: float) -> str | None:
    """For a 429: why waiting will not help, or None for a busy second worth waiting
    ``Retry-After`` out.

    The ``X-RateLimit-*-USD`` headers tell the two apart: a spent budget leaves less than the
    call costs (``X-RateLimit-Cost-Required-USD``, else any cost) in the daily budget and the
    prepaid balance together; a per-second limit leaves budget. A wait over ``brief`` seconds
    (a spent budget's ``Retry-After`` runs to midnight UTC: up to a day) is never slept on."""
    remaining = _number(headers.get(REMAINING))
    left = None if remaining is None else remaining + (_number(headers.get(PREPAID)) or 0.0)
    required = _number(headers.get(COST_REQUIRED))
    wait = _retry_after(headers)
    if left is not None and (left <= 0 or (required is not None and left + 1e-12 < required)):
        limit = _number(headers.get(LIMIT))
        of = f" of ${limit:g} a day" if limit is not None else ""
        cost = f", the call costs ${required:g}" if required else ""
        return f"a 429 answer with ${left:.4f} left{of}{cost}; {reset_text(headers)}"
    if wait is not None and wait > brief:
        return (f"a 429 answer asking to wait {_duration(wait)} (over the {brief:g} s a "
                f"per-second limit takes); {reset_text(headers)}")
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
