"""The relations tests use the session's TALN corpus (``taln_corpus`` in tests/conftest.py)."""

from tests.conftest import SMALL

__all__ = ["SMALL"]
