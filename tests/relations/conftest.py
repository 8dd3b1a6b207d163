"""A TALN corpus shared by the relations tests (built once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openmsd.ingest.pipeline import ingest
from openmsd.relations.build import RelationsConfig
from openmsd.relations.split import SplitConfig

# A 1,500-paper corpus with ~600 linked papers: few in-distribution languages, larger test shares.
SMALL = RelationsConfig(split=SplitConfig(top_languages=2, idt=0.15, odt=0.15, dev=0.1))


@pytest.fixture(scope="session")
def taln_corpus(tmp_path_factory) -> Path:
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    out = tmp_path_factory.mktemp("taln-relations") / "corpus"
    ingest([SHARED_DATA / "taln" / "papers.jsonl", SHARED_DATA / "taln" / "parscit"], out)
    return out
