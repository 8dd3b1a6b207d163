"""openmsd's Spark jobs in one file: ``spark-submit`` it on a cluster with a command,
``ingest``, ``relations`` or ``embed``.

``ingest`` and ``embed`` run the readers, language identification and the encoders in the
executors' Python workers, so the executors need openmsd and its dependencies (ship an
environment with ``--archives``; see ``docs/scale.md``). ``relations`` compiles its Ibis
expressions to Spark SQL on the driver, so only the driver needs openmsd; executors run plain
Spark SQL (see ``docs/relations.md``). Inputs and outputs may be object-store URIs::

    JOB="$(python -c 'import openmsd.spark_job as j; print(j.__file__)')"
    spark-submit --master yarn --archives openmsd-env.tar.gz#env \\
      --conf spark.pyspark.python=./env/bin/python \\
      "$JOB" ingest s3a://openalex/data/works --out s3a://bucket/corpus
    spark-submit --master yarn --deploy-mode client "$JOB" relations \\
      --papers s3a://bucket/corpus/papers.parquet \\
      --citations s3a://bucket/corpus/citations.parquet --out s3a://bucket/corpus/relations
    spark-submit ... "$JOB" embed s3a://bucket/corpus/papers.parquet \\
      --vectors s3a://bucket/corpus/vectors --model e5-small-multilingual
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

__all__ = ["main", "parser"]

def parser() -> argparse.ArgumentParser:
    """The job's command line: one sub-command per job."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    ingest = commands.add_parser("ingest", help="inputs (paths or URIs) into a corpus")
    ingest.add_argument("inputs", nargs="+")
    ingest.add_argument("--out", required=True, help="corpus directory or URI")
    ingest.add_argument("--format", default=None)
    ingest.add_argument("--strict", action="store_true")
    ingest.add_argument("--since", default=None, help="YYYY-MM-DD: of a local OpenAlex "
                        "snapshot folder, only the partitions updated on or after that day")
    relations = commands.add_parser("relations", help="the relations of a corpus's tables")
    relations.add_argument("--papers", required=True,
                           help="papers Parquet (paper_id, language)")
    relations.add_argument("--citations", required=True, help="citations Parquet "
                           "(citing_id, cited_id)")
    relations.add_argument("--out", required=True, help="output directory or URI")
    relations.add_argument("--max-group", type=int, default=None,
                           help="0 for exact counts (default: the relations' default, 256)")
    relations.add_argument("--seed", type=int, default=0)
    relations.add_argument("--top-languages", type=int, default=30)
    relations.add_argument("--idt", type=float, default=0.1)
    relations.add_argument("--odt", type=float, default=0.1)
    relations.add_argument("--dev", type=float, default=0.05)
    embed = commands.add_parser("embed", help="vectors of a papers table")
    embed.add_argument("papers", help="the papers table (Parquet file or directory, or URI)")
    embed.add_argument("--vectors", required=True, help="the vector store directory or URI")
    embed.add_argument("--model", default="e5-small-multilingual")
    embed.add_argument("--backend", default=None, help="the model's default as openmsd embed "
                       "runs it (onnx-sq8 for e5 on CPU), onnx (int8), torch, or cuda-fp16 "
                       "(torch fp16 on GPU executors)")
    embed.add_argument("--batch-size", type=int, default=32)
    return parser


def _ingest(args: argparse.Namespace, spark: Any) -> dict[str, Any]:
    from openmsd.ingest import ingest_on_spark  # lazy: adds ~0.2 s to this module's import

    return ingest_on_spark(args.inputs, args.out, args.format, args.strict, spark=spark,
                           since=args.since).report


def _relations(args: argparse.Namespace, spark: Any) -> dict[str, Any]:
    # lazy: loads pandas (~1.4 s)
    from openmsd.relations import (
        DEFAULT_MAX_GROUP,
        RelationsConfig,
        SplitConfig,
        connect,
        derive_tables,
    )

    max_group = DEFAULT_MAX_GROUP if args.max_group is None else args.max_group
    config = RelationsConfig(max_group=max_group or None, seed=args.seed,
                             split=SplitConfig(top_languages=args.top_languages, idt=args.idt,
                                               odt=args.odt, dev=args.dev, seed=args.seed))
    return derive_tables(connect("spark", spark=spark), args.papers, args.citations,
                         args.out, config)


def _embed(args: argparse.Namespace, spark: Any) -> dict[str, Any]:
    from openmsd.models import embed_on_spark  # lazy: loads scipy (~0.2 s)

    return asdict(embed_on_spark(args.papers, args.vectors, args.model, args.backend,
                                 spark=spark, batch_size=args.batch_size))


JOBS = {"ingest": _ingest, "relations": _relations, "embed": _embed}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the job ``argv`` names on the active SparkSession (or a new one); print and return
    its report as JSON."""
    args = parser().parse_args(argv)
    # optional: the spark extra; pyspark takes ~0.3 s to import
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"openmsd-{args.command}").getOrCreate()
    result = JOBS[args.command](args, spark)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
