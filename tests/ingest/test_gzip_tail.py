"""A gzip file is read to the end of its last intact record: data after the compressed stream
that is not gzip, or a member cut short, is reported with the file and the byte offset, after
every record before it was taken (as ``zcat`` reads them)."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from openmsd.corpus import Corpus
from openmsd.ingest import ingest

N = 200


def _records() -> bytes:
    return b"".join(orjson.dumps({"id": f"p{i}", "title": f"Paper {i} " + "word " * 60})
                    + b"\n" for i in range(N))


@pytest.mark.parametrize(("tail", "papers", "says"), [
    (b"trailing garbage, not gzip\x00\x01" * 8, N, "data that is not gzip at byte {size:,}"),
    (b"\0" * 512, N, None),  # zero padding, as gzip allows
    (gzip.compress(orjson.dumps({"id": "q", "title": "Another member"}) + b"\n"), N + 1, None),
])
def test_everything_before_the_tail_is_read_and_the_tail_reported(tmp_path: Path, tail: bytes,
                                                                  papers: int,
                                                                  says: str | None) -> None:
    compressed = gzip.compress(_records())
    path = tmp_path / "works.jsonl.gz"
    path.write_bytes(compressed + tail)
    result = ingest([path], tmp_path / "corpus")
    assert Corpus(tmp_path / "corpus").read("papers").num_rows == papers
    found = [p for p in result.problems if "compressed" in p.reason]
    if says is None:
        assert found == []
    else:
        [problem] = found
        assert problem.file == str(path) and problem.where == f"after line {N}"
        assert says.format(size=len(compressed)) in problem.reason


def test_a_member_cut_short_is_reported_with_its_offset(tmp_path: Path) -> None:
    compressed = gzip.compress(_records())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(compressed[:-8])
    result = ingest([path], tmp_path / "corpus")
    [problem] = [p for p in result.problems if "compressed" in p.reason]
    assert f"cut short at byte {len(compressed) - 8:,}" in problem.reason
    assert Corpus(tmp_path / "corpus").read("papers").num_rows == N  # only the trailer is gone
