"""``ingest --engine spark``: the same corpus as the single-process ingest, row for row."""

from __future__ import annotations

import gzip
import random
import shutil
from pathlib import Path

import orjson
import pyarrow.dataset as ds
import pytest

from openmsd.corpus import TABLES, Corpus
from openmsd.crashpoint import ENV, ONCE
from openmsd.ingest import ingest, ingest_on_spark, input_files
from openmsd.report import IngestError

WORDS = ["parsing", "treebank", "corpus", "traduction", "analyse", "syntax", "lexicon",
         "semantic", "alignment", "morphology"]


def openalex_snapshot(root: Path, files: int = 3, per_file: int = 60) -> Path:
    """``data/works/updated_date=*/part_000.gz``: works citing works in any file, one bad line."""
    rng = random.Random(0)
    total = files * per_file
    base = root / "data" / "works"
    for index in range(files):
        path = base / f"updated_date=2024-0{index + 1}-01" / "part_000.gz"
        path.parent.mkdir(parents=True)
        with gzip.open(path, "wb") as out:
            for n in range(index * per_file, (index + 1) * per_file):
                words = [rng.choice(WORDS) for _ in range(30)]
                index_ = {}
                for position, word in enumerate(words):
                    index_.setdefault(word, []).append(position)
                work = {"id": f"https://openalex.org/W{100 + n}",
                        "doi": f"https://doi.org/10.5555/t.{n % (total - 5)}",  # shared DOIs
                        "title": " ".join(words[:8]), "publication_year": 2000 + n % 20,
                        "language": "en", "abstract_inverted_index": index_,
                        "referenced_works": [
                            f"https://openalex.org/W{100 + rng.randrange(total + 20)}"
                            for _ in range(5)]}
                out.write(orjson.dumps(work) + b"\n")
            if index == 1:
                out.write(b"{not json\n")
    return base


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, shared_data_module) -> list[Path]:
    root = tmp_path_factory.mktemp("inputs")
    parscit = root / "parscit"
    parscit.mkdir()
    for path in sorted((shared_data_module / "taln" / "parscit").iterdir())[:12]:
        shutil.copy(path, parscit / path.name)
    return [shared_data_module / "taln" / "papers.jsonl", parscit,
            openalex_snapshot(root / "openalex")]


def rows(path: Path) -> list[dict]:
    return ds.dataset(str(path), format="parquet").to_table().to_pylist()


def test_spark_ingest_gives_the_single_process_corpus_row_for_row(inputs, tmp_path, spark):
    single = ingest(inputs, tmp_path / "single")
    many = ingest_on_spark(inputs, tmp_path / "spark", spark=spark)
    assert many.build["counts"] == single.build["counts"]
    assert single.build["counts"]["citations"] > 100
    assert single.build["counts"]["references.title"] > 0  # TALN's ParsCit titles resolved
    for name in TABLES:
        assert (tmp_path / "spark" / f"{name}.parquet").is_file()  # DuckDB's layout
        assert rows(tmp_path / "spark" / f"{name}.parquet") == \
            rows(tmp_path / "single" / f"{name}.parquet"), name
    # the bad-input report, collected from every task: the malformed OpenAlex line with its
    # file and line, the shared DOIs, as the single process reports them
    assert sorted((p.where, p.reason) for p in many.problems) == \
        sorted((p.where, p.reason) for p in single.problems)
    bad = [p for p in many.problems if p.reason.startswith("malformed JSON")]
    assert [(Path(p.file).parent.name, p.where) for p in bad] == \
        [("updated_date=2024-02-01", "line 61")]
    manifest = orjson.loads((tmp_path / "spark" / "manifest.json").read_bytes())
    assert manifest["engine"] == "spark"
    assert len(manifest["inputs"]) == 1 + 12 + 3  # one task per file
    assert not (tmp_path / "spark" / "_work").exists()
    assert Corpus(tmp_path / "spark").check()["build"] == many.build  # every reader reads it


def test_the_snapshot_layout_is_read_as_it_comes(inputs):
    files = [file for _, file in input_files([inputs[2]])]
    assert [Path(f).parent.name for f in files] == \
        [f"updated_date=2024-0{i}-01" for i in (1, 2, 3)]
    uri = input_files([f"file://{inputs[2]}"])
    assert uri == [(0, f"file://{f}") for f in files]


def test_strict_mode_names_the_bad_line_from_the_task(inputs, tmp_path, spark):
    with pytest.raises(IngestError, match=r"part_000.gz: line 61: malformed JSON"):
        ingest_on_spark([inputs[2]], tmp_path / "strict", strict=True, spark=spark)
    assert not (tmp_path / "strict" / "manifest.json").exists()


def test_a_missing_input_is_refused_before_spark_runs(tmp_path):
    with pytest.raises(IngestError, match="no such file"):
        ingest_on_spark([tmp_path / "nope.jsonl"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_task_killed_once_is_retried_and_its_half_written_part_never_read(inputs, tmp_path,
                                                                           spark):
    """The first task to finish writing its staged part is killed (SIGKILL) before the part is
    renamed into place; Spark retries it and the corpus is the single process's, row for row."""
    single = ingest([inputs[2]], tmp_path / "single")
    once = tmp_path / "once"
    once.mkdir()
    environment = spark.sparkContext.environment  # the Python workers' environment
    environment.update({ENV: "ingest.staged", ONCE: str(once)})
    try:
        many = ingest_on_spark([inputs[2]], tmp_path / "spark", spark=spark)
    finally:
        environment.pop(ENV)
        environment.pop(ONCE)
    assert (once / "ingest.staged").exists()  # a task was killed there
    staged = tmp_path / "spark" / "staged"  # where the DuckDB ingest keeps its parts
    assert sorted(p.name[:5] for p in staged.iterdir()) == ["0000-", "0001-", "0002-"]
    # the killed attempt's half-written part was never read, and is gone with the work files
    assert not (tmp_path / "spark" / "_staged").exists()
    assert many.build["counts"] == single.build["counts"]
    for name in TABLES:
        assert rows(tmp_path / "spark" / f"{name}.parquet") == \
            rows(tmp_path / "single" / f"{name}.parquet"), name
