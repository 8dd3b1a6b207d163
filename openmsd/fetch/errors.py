"""The errors of a fetch (no API client needed to catch them)."""

from __future__ import annotations

__all__ = ["BadAnswer", "FetchError", "NetworkError", "PlanRequired", "QueryTooLong"]


class FetchError(RuntimeError):
    """A fetch that cannot go on: unreachable API, refused key, unreadable seed file."""


class BadAnswer(FetchError):
    """One answer that cannot be used (malformed, too large, an error after every retry):
    the item it was for is reported, the fetch may go on."""


class NetworkError(FetchError):
    """A request that failed on the wire after its retries (stalled, cut off, too slow): the
    fetch stops, its progress kept for the next run."""


class PlanRequired(FetchError):
    """The API keeps what was asked (a date filter, a sort) for paid plans: running the same
    request again cannot help."""


class QueryTooLong(FetchError):
    """A search text the API refuses for its length: running it again cannot help."""
