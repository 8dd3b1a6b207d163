"""A small real corpus for citrec tests: three unarXive papers (full text, contexts, references
linked to outside identifiers) and a tiny MP-BERT4CR model trained on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA


@pytest.fixture(scope="session")
def unarxive_corpus(tmp_path_factory) -> Path:
    from openmsd.ingest import ingest

    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    root = tmp_path_factory.mktemp("citrec")
    lines = (SHARED_DATA / "unarxive-sample" / "arXiv_src_2212_086.jsonl").read_bytes()
    sample = root / "three.jsonl"
    sample.write_bytes(b"\n".join(lines.splitlines()[:3]) + b"\n")
    ingest([sample], root / "corpus")
    return root / "corpus"


@pytest.fixture(scope="session")
def citrec_model(tiny_model, unarxive_corpus, tmp_path_factory) -> tuple[Path, dict]:
    from openmsd.experiment import train_model
    from openmsd.train import CitrecConfig

    out = tmp_path_factory.mktemp("citrec-model") / "model"
    config = CitrecConfig(corpus=str(unarxive_corpus), out=str(out), base=str(tiny_model),
                          outside_references=True, max_steps=4, batch_size=2,
                          manuscript_supplemental=3, citation_supplemental=2, seed=3)
    return out, train_model(config, progress=False)
