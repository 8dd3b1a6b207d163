"""Ingest and embedding as Spark jobs: ``spark-submit`` this file on a cluster.

Unlike the relations job (:mod:`openmsd.relations.spark_job`), the readers, language
identification and the encoders run in the executors' Python workers, so the executors need
openmsd and its dependencies (ship an environment with ``--archives``; see ``docs/scale.md``)::

    spark-submit --master yarn --archives openmsd-env.tar.gz#env \\
      --conf spark.pyspark.python=./env/bin/python \\
      "$(python -c 'import openmsd.spark_job as j; print(j.__file__)')" \\
      ingest s3a://openalex/data/works --out s3a://bucket/corpus
    spark-submit ... openmsd/spark_job.py embed s3a://bucket/corpus/papers.parquet \\
      --vectors s3a://bucket/corpus/vectors --model e5-small-multilingual --backend onnx
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    ingest = commands.add_parser("ingest", help="inputs (paths or URIs) into a corpus")
    ingest.add_argument("inputs", nargs="+")
    ingest.add_argument("--out", required=True, help="corpus directory or URI")
    ingest.add_argument("--format", default=None)
    ingest.add_argument("--strict", action="store_true")
    embed = commands.add_parser("embed", help="vectors of a papers table")
    embed.add_argument("papers", help="the papers table (Parquet file or directory, or URI)")
    embed.add_argument("--vectors", required=True, help="the vector store directory or URI")
    embed.add_argument("--model", default="e5-small-multilingual")
    embed.add_argument("--backend", default="onnx", help="onnx (CPU) or torch (fp16 on GPUs)")
    embed.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args(argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"openmsd-{args.command}").getOrCreate()
    if args.command == "ingest":
        from openmsd.ingest import ingest_on_spark

        result: dict[str, Any] = ingest_on_spark(args.inputs, args.out, args.format, args.strict,
                                                 spark=spark).report
    else:
        from openmsd.models import embed_on_spark

        result = asdict(embed_on_spark(args.papers, args.vectors, args.model, args.backend,
                                       spark=spark, batch_size=args.batch_size))
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
