"""A small corpus in four languages for the enrichment tests: French papers with and without
their authors' English version, a Spanish one without, an English one, one with no abstract;
built fresh per test (tests write summaries into it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from openmsd.ingest import ingest

PAPERS = [
    {"id": "fr-parse", "title": "Analyse syntaxique en dépendances du français",
     "abstract": "Nous présentons un analyseur syntaxique statistique en dépendances pour le "
                 "français, entraîné sur un corpus arboré de phrases journalistiques.",
     "year": 2009, "translations": {"en": {
         "title": "Dependency parsing of French",
         "abstract": "We present a statistical dependency parser for French, trained on a "
                     "treebank of newspaper sentences, and evaluate it on three corpora."}}},
    {"id": "fr-mt", "title": "Traduction automatique statistique à base de segments",
     "abstract": "Cet article décrit un système de traduction automatique statistique du "
                 "français vers l'anglais fondé sur des segments.", "year": 2008},
    {"id": "fr-title", "title": "Un étiqueteur morphosyntaxique pour le français parlé",
     "abstract": "", "year": 2010,
     "translations": {"en": {"title": "A part-of-speech tagger for spoken French"}}},
    {"id": "es-parse", "title": "Análisis sintáctico de dependencias para el español",
     "abstract": "Presentamos un analizador sintáctico de dependencias para el español "
                 "entrenado sobre un corpus anotado de noticias.", "year": 2012},
    {"id": "en-parse", "title": "A fast transition-based dependency parser",
     "abstract": "We describe a transition-based dependency parser trained on treebanks with "
                 "a neural network classifier.", "year": 2014},
]


@pytest.fixture(scope="session")
def built_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("enrich")
    papers = root / "papers.jsonl"
    papers.write_bytes(b"\n".join(orjson.dumps(p) for p in PAPERS) + b"\n")
    ingest([papers], root / "corpus", None, False)
    return root / "corpus"


@pytest.fixture
def corpus_dir(built_corpus: Path, tmp_path: Path) -> Path:
    """A fresh copy of the corpus for one test."""
    target = tmp_path / "corpus"
    shutil.copytree(built_corpus, target)
    return target


def has_apertium() -> bool:
    return shutil.which("apertium") is not None and Path(
        "/usr/share/apertium/modes/spa-eng.mode").exists()


needs_apertium = pytest.mark.skipif(not has_apertium(), reason="Debian apertium + "
                                    "apertium-eng-spa not installed (.ci/run installs them)")
