"""Rebuild the sample corpus shipped in ``openmsd/data/sample`` from ``../shared/data``.

Only openly licensed material is copied: SciELO JATS articles under CC BY 4.0, unarXive papers
whose arXiv licence is CC BY 4.0 (the unarXive data set itself is CC BY-SA 4.0) and the S2ORC
metadata sample (ODC-By 1.0). Run: ``python scripts/make_sample.py [SHARED_DATA]``.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

SCIELO = [
    "0104-5970-hcsm-27-01-0275", "2318-0889-tinf-33-e200068", "2318-0889-tinf-33-e200057",
    "2236-8906-hoehnea-49-e762021", "S2176-66652019000100074", "FngWzPqXpsVJGyxLD5PSHPg",
    "2237-9622-ress-33-spe2-e20231216", "1519-6984-bjb-83-e246904", "0006-8705-brag-81-e2022",
    "S0034-89102025000100200", "2176-4573-bak-p59384", "S1984-92302025000100304",
    "x", "y", "related_article",  # an article and two commentaries citing it
]
UNARXIVE_LINES = [2, 14, 23, 30, 31, 34, 38, 48]  # 0-based lines of arXiv_src_2212_086.jsonl
CC_BY = "creativecommons.org/licenses/by/4.0"


def main(shared: Path, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    (out / "scielo-jats").mkdir(parents=True)
    for name in SCIELO:
        source = shared / "scielo-jats" / f"{name}.xml"
        assert CC_BY in source.read_text(encoding="utf-8"), f"{source} is not CC BY 4.0"
        shutil.copy(source, out / "scielo-jats" / source.name)
    (out / "unarxive").mkdir()
    lines = (shared / "unarxive-sample" / "arXiv_src_2212_086.jsonl").read_text().splitlines()
    with gzip.GzipFile(out / "unarxive" / "arXiv_src_2212_086.sample.jsonl.gz", "wb",
                       mtime=0) as handle:
        for index in UNARXIVE_LINES:
            assert CC_BY in json.loads(lines[index])["metadata"]["license"]
            handle.write(lines[index].encode() + b"\n")
    (out / "s2orc").mkdir()
    with gzip.GzipFile(out / "s2orc" / "metadata_sample.jsonl.gz", "wb", mtime=0) as handle:
        handle.write((shared / "s2orc-sample" / "metadata_sample.jsonl").read_bytes())


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data"
    main(shared, root / "openmsd" / "data" / "sample")
