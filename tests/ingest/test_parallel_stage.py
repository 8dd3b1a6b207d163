"""An input of several large files is staged by several processes, one file each; the corpus,
its problems and its report are those one process gives, and a strict run still stops at the
first problem, leaving nothing staged."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from openmsd.corpus import Corpus, staged_files
from openmsd.ingest import ingest, run
from openmsd.report import IngestError


def _work(n: int) -> dict:
    return {"id": f"https://openalex.org/W{n}", "title": f"Paper {n}", "language": "en",
            "publication_year": 2000 + n % 20,
            "abstract_inverted_index": {"A": [0], "study": [1], f"of{n}": [2]},
            "referenced_works": [f"https://openalex.org/W{m}" for m in range(max(0, n - 3), n)]}


@pytest.fixture
def works(tmp_path: Path) -> Path:
    """A folder of five OpenAlex files: problems in some, one empty, and a README."""
    folder = tmp_path / "works"
    folder.mkdir()
    lines = [orjson.dumps(_work(n)) for n in range(60)]
    (folder / "part_0.jsonl").write_bytes(b"\n".join(lines[:20]) + b"\n")
    (folder / "part_1.jsonl").write_bytes(b"\n".join([*lines[20:30], b"{not json",
                                                      *lines[30:40]]) + b"\n")
    (folder / "part_2.jsonl").write_bytes(b"")
    bad = {**_work(99), "referenced_works": ["https://openalex.org/W1", 12]}
    (folder / "part_3.jsonl").write_bytes(b"\n".join([*lines[40:], orjson.dumps(bad)]) + b"\n")
    (folder / "README.md").write_text("OpenAlex works, a few of them.\n")
    return folder


def _corpus(root: Path) -> dict[str, object]:
    corpus = Corpus(root)
    tables = {name: corpus.read(name).to_pylist()
              for name in ("papers", "references", "citations", "contexts")}
    return {**tables, "report": orjson.loads((root / "ingest_report.json").read_bytes()),
            "problems": (root / "problems.jsonl").read_bytes()}


def test_files_staged_in_parallel_give_the_corpus_one_process_gives(works, tmp_path,
                                                                   monkeypatch):
    ingest([works], tmp_path / "one")
    monkeypatch.setattr(run, "PARALLEL_BYTES", 0)  # these small files are read in parallel too
    ingest([works], tmp_path / "many")
    [part] = list((tmp_path / "many" / "staged").iterdir())
    files = staged_files(part, "staged_papers.parquet")
    # README.md and the empty file give no records, part_0 20 papers and 54 references, ...
    assert [first for _, first in files] == [0, 74, 154]
    assert not (part / "staged_papers.parquet").exists()
    one, many = _corpus(tmp_path / "one"), _corpus(tmp_path / "many")
    assert many == one
    assert len(one["papers"]) == 61
    reasons = set(one["report"]["problems_by_reason"])
    assert {"malformed JSON", "invalid referenced work"} <= reasons, reasons


def test_a_strict_parallel_run_stops_at_the_first_problem(works, tmp_path, monkeypatch):
    monkeypatch.setattr(run, "PARALLEL_BYTES", 0)
    with pytest.raises(IngestError, match=r"part_1\.jsonl: line 11: malformed JSON"):
        ingest([works], tmp_path / "corpus", strict=True)
    staged = tmp_path / "corpus" / "staged"
    assert not any(staged.iterdir()) if staged.exists() else True


def test_a_staging_process_killed_fails_the_run_and_leaves_the_corpus_as_it_was(
        works, tmp_path, monkeypatch):
    ingest([works], tmp_path / "corpus")
    before = _corpus(tmp_path / "corpus")
    (works / "part_4.jsonl").write_bytes(orjson.dumps(_work(70)) + b"\n")  # the input changed
    monkeypatch.setattr(run, "PARALLEL_BYTES", 0)
    monkeypatch.setenv("OPENMSD_CRASH_AT", "ingest.file_staged")  # inherited by the processes
    with pytest.raises(IngestError, match="the process staging it stopped"):
        ingest([works], tmp_path / "corpus")
    monkeypatch.delenv("OPENMSD_CRASH_AT")
    assert _corpus(tmp_path / "corpus") == before
    assert [p.name for p in (tmp_path / "corpus" / "staged").iterdir()
            if p.name.startswith(".")] == []  # no half-staged part left


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_staging_processes_end_when_the_run_is_killed(works, tmp_path):
    """Only the main process is killed (SIGKILL) while its staging processes still have files
    to read: they end with it instead of waiting on their task queue forever."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import uuid

    for n in range(5, 12):  # more files than processes: some still wait for work
        (works / f"part_{n}.jsonl").write_bytes(orjson.dumps(_work(100 + n)) + b"\n")
    mark = f"OPENMSD_TEST_RUN={uuid.uuid4().hex}".encode()
    script = ("import sys\nfrom openmsd.ingest import ingest, run\nrun.PARALLEL_BYTES = 0\n"
              "if __name__ == '__main__':\n ingest([sys.argv[1]], sys.argv[2])\n")
    root = str(Path(__file__).resolve().parents[2])  # this checkout's openmsd
    env = {**os.environ, "OPENMSD_CRASH_AT": "ingest.file_collected",
           "PYTHONPATH": root, mark.decode().split("=")[0]: mark.decode().split("=")[1]}
    (tmp_path / "run.py").write_text(script)
    with open(tmp_path / "stderr", "wb") as stderr:  # not a pipe: orphans would hold it
        killed = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(works),
                                 str(tmp_path / "corpus")], env=env, stdout=subprocess.DEVNULL,
                                stderr=stderr, timeout=120)
    assert killed.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()[-2000:]

    def marked() -> list[int]:
        found = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    if mark in (proc / "environ").read_bytes():
                        found.append(int(proc.name))
                except OSError:
                    continue
        return found

    deadline = time.monotonic() + 20
    while marked() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = marked()
    for pid in left:  # do not leave them behind if the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == []
