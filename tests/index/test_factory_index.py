"""``index build --factory``: an IVF-PQ index built batch by batch with on-disk inverted lists,
its nprobe calibrated and stored, searched with filters, equal to exact search at full nprobe,
refused with FAISS's message for a bad factory, and crash-safe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.corpus import Corpus
from openmsd.crashpoint import ENV
from openmsd.index import FactoryParams, build_index, index_dir, load_index
from openmsd.index.factory_index import (
    IVFDATA_FILE,
    VECTORS_FILE,
    FactorySettings,
    RowFile,
    build_factory,
    open_vectors,
    search_factory,
)
from openmsd.index.vector_index import FACTORY_KEY
from openmsd.ingest import ingest
from openmsd.models import current_hashes
from openmsd.search import related_papers
from openmsd.vectors import vector_schema, vectors_dir

MODEL = "muse-v3"
N, DIM = 1200, 32
PARAMS = FactoryParams("IVF16,PQ8", train=1000, calibration=100, shard_rows=500, rerank=50,
                       target_recall=0.9)


def _papers(path: Path) -> Path:
    languages = ["en", "fr", "pt"]
    path.write_bytes(b"".join(orjson.dumps({
        "id": f"p{i:04d}", "title": f"Paper number {i} on topic {i % 37}", "year": 1990 + i % 30,
        "language": languages[i % 3], "abstract": f"An abstract about subject {i}."}) + b"\n"
        for i in range(N)))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Corpus:
    """A corpus of N papers whose ``MODEL`` vectors are clustered points (in two parts)."""
    root = tmp_path_factory.mktemp("factory")
    corpus = Corpus(root / "corpus")
    ingest([_papers(root / "papers.jsonl")], corpus.root)
    hashes = current_hashes(corpus, MODEL)
    ids = sorted(hashes)
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((40, DIM)).astype(np.float32)
    vectors = centres[rng.integers(40, size=len(ids))] + 0.6 * rng.standard_normal(
        (len(ids), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    directory = vectors_dir(corpus, MODEL)
    directory.mkdir(parents=True)
    for part, rows in enumerate((slice(0, 700), slice(700, None))):
        pq.write_table(pa.table({"paper_id": ids[rows], "text_hash": [hashes[i] for i in ids[rows]],
                                 "vector": pa.FixedSizeListArray.from_arrays(
                                     vectors[rows].reshape(-1), DIM)}, schema=vector_schema(DIM)),
                       directory / f"part-{part:05d}.parquet")
    build_index(corpus, MODEL, factory=PARAMS)
    return corpus


def test_the_factory_index_is_on_disk_and_its_nprobe_is_stored(built: Corpus) -> None:
    index = load_index(built, MODEL)
    directory = index_dir(built, MODEL).resolve()
    assert index.index.ntotal == N and (directory / IVFDATA_FILE).stat().st_size > 0
    settings = index.settings
    assert settings is not None and settings.factory == "IVF16,PQ8"
    assert settings.recall >= 0.9 and 1 <= settings.nprobe <= 16
    assert settings.curve[f"{settings.nprobe}/{settings.rerank}"] == round(settings.recall, 4)
    assert settings.calibration_rows == 100
    stored = pq.read_schema(directory / "papers.parquet").metadata[FACTORY_KEY]
    assert orjson.loads(stored)["nprobe"] == settings.nprobe
    # the exact vector of a row, not its PQ code
    row = index.row("p0007")
    assert np.isclose(np.linalg.norm(index.vector(row)), 1.0, atol=1e-5)


def test_at_full_nprobe_it_finds_what_exact_search_finds(built: Corpus, tmp_path: Path) -> None:
    index = load_index(built, MODEL)
    index.settings.nprobe = 16
    flat = index.vectors
    queries = np.asarray(flat[:50])
    exact = np.argsort(-(queries @ np.asarray(flat).T), axis=1)[:, :10]
    found = index.search(queries, 10)
    for hits, want in zip(found, exact, strict=True):
        assert [index.row(paper_id) for paper_id, _ in hits] == want.tolist()


def test_filters_keep_working(built: Corpus) -> None:
    index = load_index(built, MODEL)
    meta = {r["paper_id"]: r for r in index.papers.to_pylist()}
    queries = np.asarray(index.vectors[:20])
    for languages, years in ((["fr"], None), (None, (2000, 2004)), (["pt"], (2010, 2010))):
        results = index.search(queries, 10, languages, years)
        allowed = [p for p, r in meta.items()
                   if (not languages or r["language"] in languages)
                   and (not years or years[0] <= r["year"] <= years[1])]
        for hits in results:
            assert len(hits) == min(10, len(allowed))
            assert {p for p, _ in hits} <= set(allowed)
    hits = related_papers(built, "p0003", MODEL, k=5, languages=["en"])
    assert len(hits) == 5 and "p0003" not in {h.paper_id for h in hits}


def test_auto_rebuild_keeps_the_factory(built: Corpus) -> None:
    rebuilt, added = build_index(built, MODEL)
    assert added == N and rebuilt.settings.factory == "IVF16,PQ8"
    assert load_index(built, MODEL).settings.factory == "IVF16,PQ8"


def test_a_factory_faiss_cannot_build_is_refused(built: Corpus) -> None:
    before = index_dir(built, MODEL).resolve()
    result = CliRunner().invoke(app, ["index", "build", str(built.root), "--model", MODEL,
                                      "--factory", "IVF16,PQ7"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "multiple of the number of subquantizers" in result.output
    assert "IVF65536,PQ48" in result.output  # the examples
    assert index_dir(built, MODEL).resolve() == before


@pytest.mark.parametrize("point", ["index.factory_trained", "index.between_writes"])
def test_a_killed_factory_build_leaves_the_old_index(built: Corpus, point: str) -> None:
    before = load_index(built, MODEL)
    code = ("import sys; from openmsd.cli import app; "
            "sys.argv = ['openmsd', *sys.argv[1:]]; app()")
    killed = subprocess.run([sys.executable, "-c", code, "index", "build", str(built.root),
                             "--model", MODEL, "--factory", "IVF8,PQ4", "--train", "800"],
                            env={**os.environ, ENV: point}, capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    after = load_index(built, MODEL)
    assert after.settings.factory == "IVF16,PQ8" and after.ids == before.ids
    assert after.search(np.asarray(after.vectors[:1]), 3)[0][0][0] == after.ids[0]


def test_calibration_deepens_the_reranking_when_nprobe_stops_helping(built: Corpus) -> None:
    coarse = FactoryParams("IVF16,PQ4", train=1000, calibration=100, rerank=10,
                           target_recall=0.999)
    try:
        settings = build_index(built, MODEL, factory=coarse)[0].settings
        reranks = {int(key.split("/")[1]) for key in settings.curve}
        assert reranks > {10} and max(reranks) <= 80
        assert settings.recall == max(settings.curve.values())
    finally:
        build_index(built, MODEL, factory=PARAMS)


def test_a_build_in_tiny_batches_and_shards_equals_the_one_batch_build(tmp_path: Path) -> None:
    """The bounded-memory path (the sample kept across batches, one shard at a time on disk)
    builds the same index as one batch in one shard: same training, codes and calibration."""
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((30, DIM)).astype(np.float32)
    vectors = centres[rng.integers(30, size=N)] + 0.5 * rng.standard_normal(
        (N, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = pa.table({"paper_id": [f"p{i:04d}" for i in range(N)]})

    def build(batch: int, shard_rows: int, name: str):
        def batches():
            for start in range(0, N, batch):
                yield rows.slice(start, batch), vectors[start:start + batch]
        target = tmp_path / name
        target.mkdir()
        params = FactoryParams("IVF16,PQ8", train=900, calibration=100, shard_rows=shard_rows,
                               rerank=50, target_recall=0.9)
        index, papers, settings = build_factory(batches, params, target)
        return index, papers, settings, open_vectors(target, DIM)

    one = build(N, N, "one")
    tiny = build(37, 200, "tiny")
    assert tiny[1].equals(one[1]) and np.array_equal(tiny[3], one[3])
    some = np.array([5, 0, 1199, 77])
    assert np.array_equal(RowFile(tmp_path / "tiny" / VECTORS_FILE, DIM)[some], vectors[some])
    assert tiny[2] == one[2]
    full = FactorySettings("IVF16,PQ8", 16, 0, 1.0, 10, 0, 0)  # all lists, PQ scores only
    assert [np.array_equal(a, b) for a, b in zip(
        search_factory(tiny[0], vectors[:200], 10, full, None),
        search_factory(one[0], vectors[:200], 10, full, None), strict=True)] == [True, True]
