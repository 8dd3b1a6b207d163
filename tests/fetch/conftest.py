"""A local OpenAlex / Crossref / Zotero server for the fetch tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openmsd.fetch import Polite
from tests.fetch.apiserver import (
    OPENALEX_KEY,
    OPENALEX_PAID_KEY,
    Server,
    World,
    crossref_work,
    openalex_work,
    serve,
)

FAST = Polite(retries=3, backoff=0.01, backoff_max=0.05, timeout=5, api_key=OPENALEX_KEY)
FAST_PAID = Polite(retries=3, backoff=0.01, backoff_max=0.05, timeout=5,
                   api_key=OPENALEX_PAID_KEY)  # a key on a paid plan: date filters allowed


def small_world() -> World:
    """Twelve works: 1001-1003 seeds, references and citers around them, one without an
    abstract (1005), one merged id (W999 -> W1001)."""
    world = World()
    texts = {
        1001: ("Analyse syntaxique robuste du français", "fr", [1004, 1005, 1006]),
        1002: ("Neural machine translation for low resource languages", "en", [1006, 1007]),
        1003: ("Traducción automática neuronal del español", "es", [1007]),
        1004: ("Grammaires d'arbres adjoints", "fr", []),
        1005: ("A treebank of French", "en", []),
        1006: ("Attention is what you need", "en", [1008]),
        1007: ("Subword units for translation", "en", []),
        1008: ("Long short-term memory", "en", []),
        1009: ("Parsing French with neural networks", "en", [1001]),
        1010: ("Évaluation de la traduction automatique", "fr", [1002, 1001]),
        1011: ("Un corpus arboré", "fr", [1004]),
        1012: ("Semantic parsing survey", "en", [1009]),
    }
    for number, (title, language, refs) in texts.items():
        abstract = None if number == 1005 else f"{title} : résumé de l'article numéro {number}."
        world.add(openalex_work(number, title, abstract, 2000 + number % 20, language,
                                ["Murphy Fd", "Anne Abeillé"], refs))
    world.merged["W999"] = "W1001"
    world.crossref["10.5555/test.1005"] = crossref_work(
        "10.5555/test.1005", "A treebank of French", "The French Treebank, described.",
        ["10.5555/test.1004"])
    return world


@pytest.fixture
def api() -> Iterator[Server]:
    yield from serve(small_world())


@pytest.fixture(autouse=True)
def _crossref_mailto(monkeypatch: pytest.MonkeyPatch) -> None:
    """Crossref asks every client for a mailto (a test without one deletes it)."""
    monkeypatch.setenv("CROSSREF_MAILTO", "tests@example.org")
