"""Hostile inputs stay bounded: compression bombs, huge lines and fields are reported with the
limit and skipped; UTF-16 and BOM-prefixed files are read. The bombs are made cheaply: a gzip
file may hold many members, so one small compressed member repeated decompresses to gigabytes."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from openmsd.ingest import ingest, json_lines
from openmsd.ingest.reader import MAX_DOCUMENT_BYTES, MAX_LINE_BYTES
from openmsd.models.embed import MAX_TEXT_CHARS, embed_text
from openmsd.report import Report

GOOD = orjson.dumps({"id": "ok", "title": "A normal paper", "year": 2020}) + b"\n"


def _bomb(path: Path, head: bytes, filler: bytes, size: int, tail: bytes) -> Path:
    chunk = gzip.compress(filler * ((8 << 20) // len(filler)), 9)  # one 8 MiB member
    with open(path, "wb") as out:
        out.write(gzip.compress(head))
        for _ in range(size // (8 << 20)):
            out.write(chunk)
        out.write(gzip.compress(tail))
    return path


def _peak_mb(code: str) -> tuple[str, float]:
    """Run ``code`` in a fresh interpreter; its output and its peak resident memory (MB)."""
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, from the (large) test process
    run = subprocess.run([sys.executable, "-c", code + "\nimport re; print(int(re.search("
                          "r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]) / 1024)"],
                         capture_output=True, text=True, timeout=300, check=True)
    *lines, peak = run.stdout.strip().splitlines()
    return "\n".join(lines), float(peak)


READ = ("from pathlib import Path; from openmsd.report import Report\n"
        "from openmsd.ingest import formats\nreport = Report(); path = Path({path!r})\n"
        "records = list(formats.detect(path).read(path, report))\n"
        "print(len(records)); [print(p) for p in report.problems]")


@pytest.mark.parametrize("size", [pytest.param(1 << 30, marks=pytest.mark.slow), 64 << 20],
                         ids=["1GB", "64MB"])  # 1 GB: ~6 s of gunzip on a loaded core
def test_a_huge_line_in_a_small_gzip_is_skipped_in_bounded_memory(tmp_path: Path,
                                                                   size: int) -> None:
    bomb = _bomb(tmp_path / "bomb.jsonl.gz", b'{"id": "x", "title": "', b"a" * 4096, size,
                 b'"}\n' + GOOD)
    assert bomb.stat().st_size < 2 << 20
    output, peak = _peak_mb(READ.format(path=str(bomb)))
    records, *problems = output.splitlines()
    assert records == "1"  # the good line after the bomb is read
    assert problems == [f"{bomb}: line 1: line too long: over {MAX_LINE_BYTES:,} bytes (the "
                        "limit); skipped"]
    assert peak < 500, f"peak {peak:.0f} MB"


def test_a_gzipped_jats_bomb_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "article.xml.gz", b'<?xml version="1.0"?>\n<article><front>'
                 b"<article-meta><title-group><article-title>", b"<p>x</p>" * 512, 512 << 20,
                 b"</article-title></title-group></article-meta></front></article>")
    assert bomb.stat().st_size < 1 << 20
    output, peak = _peak_mb(READ.format(path=str(bomb)))
    assert output.splitlines() == ["0", f"{bomb}: file: document too large: over "
                                   f"{MAX_DOCUMENT_BYTES:,} bytes decompressed (the limit); "
                                   "skipped"]
    assert peak < 600, f"peak {peak:.0f} MB"


def test_a_50_mb_json_line_is_reported_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as out:
        out.write(b'{"id": "big", "abstract": "')
        for _ in range(50):
            out.write(b"word " * (1 << 18))  # 1.25 MiB a time
        out.write(b'"}\n' + GOOD)
    report = Report()
    assert [obj["id"] for _, obj in json_lines(path, report)] == ["ok"]
    assert [(p.where, p.reason.split(":")[0]) for p in report.problems] == [
        ("line 1", "line too long")]


def test_a_field_over_its_limit_skips_the_record(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(orjson.dumps({"id": "long", "title": "t" * 20_000}) + b"\n" + GOOD)
    result = ingest([path], tmp_path / "corpus")
    assert result.build["counts"]["papers"] == 1
    assert [(p.where, p.reason) for p in result.problems] == [
        ("line 1", "field title too long: 20,000 characters, the limit is 10,000; paper "
                   "skipped")]


def test_utf16_and_bom_files_are_decoded(tmp_path: Path) -> None:
    text = '{"id": "é1", "title": "Análise sintática"}\n'
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "utf16.jsonl").write_bytes(text.encode("utf-16"))
    (tmp_path / "in" / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + text.replace("1", "2").encode())
    result = ingest([tmp_path / "in"], tmp_path / "corpus")
    assert result.build["counts"]["papers"] == 2 and not result.problems


def test_embedding_text_is_cut_before_tokenising() -> None:
    text = embed_text("A title", "word " * 10_000_000)
    assert len(text) == MAX_TEXT_CHARS and text.startswith("Title: A title")
