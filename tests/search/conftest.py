"""The search tests' corpus: the sample's SciELO articles embedded with muse-v3 and indexed."""

from pathlib import Path

import pytest

from openmsd.cli import SAMPLE
from openmsd.corpus import Corpus
from openmsd.index import build_index
from openmsd.ingest import ingest
from openmsd.models import embed_corpus, load_model

MODEL = "muse-v3"


@pytest.fixture(scope="module")
def encoder():
    return load_model(MODEL)


@pytest.fixture(scope="module")
def indexed_root(tmp_path_factory, encoder) -> Path:
    """A corpus directory of the sample's SciELO articles with vectors and an index of MODEL."""
    root = tmp_path_factory.mktemp("search") / "c"
    ingest([SAMPLE / "scielo-jats"], root)
    corpus = Corpus(root)
    embed_corpus(corpus, encoder, MODEL)
    build_index(corpus, MODEL)
    return root
