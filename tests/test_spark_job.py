"""The one Spark job file: spark-submit runs it as a script, found by its module's path."""

from __future__ import annotations

import subprocess
import sys

import pytest

from openmsd import spark_job


def _run_file(*args: str) -> subprocess.CompletedProcess[str]:
    """The job file run as spark-submit runs it: a script, by the path the docs print."""
    return subprocess.run([sys.executable, spark_job.__file__, *args], capture_output=True,
                          text=True, timeout=120)


def test_the_job_file_runs_as_a_script_and_offers_every_job():
    shown = _run_file("--help")
    assert shown.returncode == 0, shown.stderr
    assert "{ingest,relations,embed}" in shown.stdout
    for command, option in (("ingest", "--out"), ("relations", "--citations"),
                            ("embed", "--vectors")):
        help_text = _run_file(command, "--help")
        assert help_text.returncode == 0 and option in help_text.stdout, help_text.stderr


@pytest.mark.parametrize("argv", [[], ["relations", "--papers", "p.parquet"],
                                  ["ingest", "--out", "o"], ["nope"]])
def test_a_job_without_what_it_needs_stops_before_spark_starts(argv, capsys):
    with pytest.raises(SystemExit) as stopped:
        spark_job.main(argv)
    assert stopped.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_the_relations_job_takes_the_relations_defaults():
    from openmsd.relations import DEFAULT_MAX_GROUP, SplitConfig

    args = spark_job.parser().parse_args(["relations", "--papers", "p", "--citations", "c",
                                          "--out", "o"])
    split = SplitConfig()
    assert args.max_group is None  # DEFAULT_MAX_GROUP, read when the job runs
    assert DEFAULT_MAX_GROUP == 256
    assert (args.top_languages, args.idt, args.odt, args.dev, args.seed) == \
        (split.top_languages, split.idt, split.odt, split.dev, split.seed)


def test_the_embed_job_runs_the_model_default_backend_unless_told():
    from openmsd.models import default_backend
    from openmsd.spark_job import parser

    told = parser().parse_args(["embed", "papers.parquet", "--vectors", "v"])
    assert told.backend is None  # embed_on_spark then takes the model's default
    assert default_backend(told.model) != "onnx"  # e5: int8 per token, not per batch
