"""The relations as a Spark job: ``spark-submit`` this file on a cluster.

The Ibis expressions compile to Spark SQL on the driver, so only the driver needs openmsd and
its Python dependencies; executors run plain Spark SQL. Inputs and outputs may be object-store
URIs. See ``docs/relations.md``::

    spark-submit --master yarn --deploy-mode client \\
      "$(python -c 'import openmsd.relations.spark_job as j; print(j.__file__)')" \\
      --papers s3a://bucket/corpus/papers.parquet \\
      --citations s3a://bucket/corpus/citations.parquet \\
      --out s3a://bucket/corpus/relations
"""

from __future__ import annotations

import argparse
import json

from openmsd.relations.build import DEFAULT_MAX_GROUP, RelationsConfig, derive_tables
from openmsd.relations.engine import connect
from openmsd.relations.split import SplitConfig


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", required=True, help="papers Parquet (paper_id, language)")
    parser.add_argument("--citations", required=True, help="citations Parquet "
                        "(citing_id, cited_id)")
    parser.add_argument("--out", required=True, help="output directory or URI")
    parser.add_argument("--max-group", type=int, default=DEFAULT_MAX_GROUP,
                        help="0 for exact counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top-languages", type=int, default=30)
    parser.add_argument("--idt", type=float, default=0.1)
    parser.add_argument("--odt", type=float, default=0.1)
    parser.add_argument("--dev", type=float, default=0.05)
    args = parser.parse_args(argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("openmsd-relations").getOrCreate()
    config = RelationsConfig(max_group=args.max_group or None, seed=args.seed,
                             split=SplitConfig(top_languages=args.top_languages, idt=args.idt,
                                               odt=args.odt, dev=args.dev, seed=args.seed))
    result = derive_tables(connect("spark", spark=spark), args.papers, args.citations,
                           args.out, config)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
