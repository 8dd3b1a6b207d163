"""The errors of a fetch (no API client needed to catch them)."""

from __future__ import annotations

__all__ = ["BadAnswer", "FetchError"]


class FetchError(RuntimeError):
    """A fetch that cannot go on: unreachable API, refused key, unreadable seed file."""


class BadAnswer(FetchError):
    """One answer that cannot be used (malformed, too large, an error after every retry):
    the item it was for is reported, the fetch may go on."""
