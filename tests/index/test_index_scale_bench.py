"""``benchmarks/index_scale.py`` runs tiny (``--vectors``), as CI can: it builds through
``publish_factory`` in a child process and reports recall, bytes per vector and peak RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_scale_benchmark_runs_tiny(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    stored = ROOT / "benchmarks" / "results" / "index_scale.json"
    before = stored.read_bytes()
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "index_scale.py"), "--vectors", "6000",
         "--compare", "4000", "--queries", "50", "--factory", "IVF32,PQ48", "--train", "3000",
         "--calibration", "50", "--single", "10", "--repeats", "1", "--part-rows", "2500",
         "--work", str(tmp_path / "work"), "--json", str(out), "--no-record"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert stored.read_bytes() == before, "a trial run overwrote the stored record"
    result = json.loads(out.read_text())
    full = result["full"]
    assert full["vectors"] == 6000 and full["recall"] >= 0.9
    assert full["settings"]["nprobe"] >= 1 and full["peak_rss_mib"] > 0
    assert len(list((tmp_path / "work" / "vectors").glob("part-*.parquet"))) == 3
    methods = [row["method"] for row in result["compare"]]
    assert methods[0] == "flat" and "IVF32,PQ48" in methods and methods[-1].startswith("hnsw")
