"""Write ``openmsd/data/calibration.jsonl.gz``: the texts the ``onnx-sq8`` build calibrates on.

Every paper of the shipped sample (``openmsd/data/sample``) with an abstract, as ``openmsd
embed`` would embed it (:func:`openmsd.models.embed.embed_text`), in paper-id order: English,
Portuguese, Spanish and German abstracts of several fields. Their licences are the sample's
(``openmsd/data/ATTRIBUTION.md``).

Run: ``python scripts/calibration_texts.py``. The output is byte-for-byte reproducible (gzip
without a time stamp).
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

from openmsd.corpus import Corpus
from openmsd.ingest import ingest
from openmsd.models.backends.smoothquant import CALIBRATION
from openmsd.models.embed import embed_text

SAMPLE = Path(__file__).resolve().parents[1] / "openmsd" / "data" / "sample"


def calibration_payload() -> tuple[bytes, int]:
    """The file's bytes before compression and its number of texts."""
    with tempfile.TemporaryDirectory() as work:
        ingest(sorted(SAMPLE.iterdir()), Path(work) / "corpus")
        rows = Corpus(Path(work) / "corpus").connect().execute(
            "SELECT paper_id, language, title, abstract FROM papers "
            "WHERE abstract IS NOT NULL AND abstract <> '' ORDER BY paper_id").fetchall()
    lines = [json.dumps({"paper_id": paper_id, "language": language,
                         "text": embed_text(title, abstract)}, ensure_ascii=False)
             for paper_id, language, title, abstract in rows]
    return ("\n".join(lines) + "\n").encode("utf-8"), len(lines)


def main() -> None:
    payload, count = calibration_payload()
    tmp = CALIBRATION.with_name(f".{CALIBRATION.name}.tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                               filename="") as out:
        out.write(payload)
    tmp.replace(CALIBRATION)
    print(f"{CALIBRATION}: {count} texts")


if __name__ == "__main__":
    main()
