"""One implementation, two engines: DuckDB and Spark (local mode) give identical outputs."""

from __future__ import annotations

import shutil

import pyarrow.dataset as ds

from openmsd.corpus import Corpus
from openmsd.relations import connect, derive, relations_dir
from tests.relations.conftest import SMALL

OUTPUTS = ("dc", "cc", "bc", "splits", "pairs", "specter", "scincl")


def sorted_rows(path) -> list[tuple]:
    table = ds.dataset(str(path), format="parquet").to_table()
    return sorted(tuple(row.values()) for row in table.to_pylist())


def test_duckdb_and_spark_derive_identical_relations(taln_corpus, tmp_path, spark):
    results = {}
    for name in ("duckdb", "spark"):
        corpus = Corpus(shutil.copytree(taln_corpus, tmp_path / name))
        engine = connect(name, spark=spark if name == "spark" else None)
        results[name] = (corpus, derive(corpus, engine, SMALL))
    (duck, duck_manifest), (spark_corpus, spark_manifest) = results["duckdb"], results["spark"]
    assert duck_manifest["counts"] == spark_manifest["counts"]
    assert duck_manifest["citation_problems"] == spark_manifest["citation_problems"]
    assert (relations_dir(spark_corpus) / "cc.parquet").is_dir()  # Spark writes part files
    for name in OUTPUTS:
        duck_rows = sorted_rows(relations_dir(duck) / f"{name}.parquet")
        spark_rows = sorted_rows(relations_dir(spark_corpus) / f"{name}.parquet")
        assert duck_rows == spark_rows, name
        assert duck_rows or name in ("specter", "scincl")


def test_the_spark_job_writes_the_same_tables(taln_corpus, tmp_path, spark):
    from openmsd import spark_job

    corpus = Corpus(taln_corpus)
    result = spark_job.main(["relations", "--papers", str(corpus.table_path("papers")),
                             "--citations", str(corpus.table_path("citations")),
                             "--out", str(tmp_path / "relations"), "--top-languages", "2",
                             "--idt", "0.15", "--odt", "0.15", "--dev", "0.1"])
    reference = derive(Corpus(shutil.copytree(taln_corpus, tmp_path / "c")), connect("duckdb"),
                       SMALL)
    assert result["counts"] == reference["counts"]
    assert sorted_rows(tmp_path / "relations" / "pairs.parquet") == sorted_rows(
        relations_dir(Corpus(tmp_path / "c")) / "pairs.parquet")
