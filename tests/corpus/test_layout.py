"""The corpus layout: every package finds a corpus's files where the layout says, and the
layout lists stored models and removes what killed builds left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openmsd.corpus import Corpus, Layout, corpus_lock, summaries_dir
from openmsd.index import index_dir
from openmsd.models import corpus_adapters
from openmsd.rank import ranker_path
from openmsd.relations import relations_dir
from openmsd.report import IngestError
from openmsd.search import lists_path
from openmsd.vectors import model_slug, vector_key, vectors_dir


def test_every_package_finds_the_files_where_the_layout_puts_them(tmp_path):
    corpus = Corpus(tmp_path / "c")
    layout = corpus.layout
    key = model_slug(vector_key("e5-small-multilingual", "onnx"))
    assert vectors_dir(corpus, vector_key("e5-small-multilingual", "onnx")) == \
        layout.vector_dir(key) == tmp_path / "c" / "vectors" / "e5-small-multilingual@onnx"
    assert index_dir(corpus, "minilm-en") == layout.index_dir("minilm-en") == \
        tmp_path / "c" / "index" / "minilm-en"
    assert ranker_path(corpus) == layout.ranker == tmp_path / "c" / "index" / "ranker.json"
    assert lists_path(corpus, "hybrid-graph") == layout.related_file("hybrid-graph") == \
        tmp_path / "c" / "index" / ".related" / "hybrid-graph.parquet"
    assert relations_dir(corpus) == layout.relations == tmp_path / "c" / "relations"
    assert layout.relations_manifest == tmp_path / "c" / "relations" / "relations.json"
    assert corpus_adapters(corpus) == layout.adapters == tmp_path / "c" / "adapters"
    assert summaries_dir(corpus, "llm", 64).parent == layout.summaries
    assert corpus.table_path("papers") == layout.table("papers") == \
        tmp_path / "c" / "papers.parquet"
    assert corpus.staged == layout.staged == tmp_path / "c" / "staged"
    assert (layout.manifest.name, layout.report.name, layout.problems.name, layout.lock.name) \
        == ("manifest.json", "ingest_report.json", "problems.jsonl", ".ingest.lock")
    assert not (tmp_path / "c").exists()  # naming a path makes nothing


def _touch(path: Path, mtime: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, (mtime, mtime))


def test_stored_keys_are_the_models_with_vectors_or_an_index_newest_first(tmp_path):
    layout = Layout(tmp_path)
    assert layout.stored_keys() == []  # no vectors/, no index/
    _touch(layout.vector_dir("old") / "part-00000.parquet", 1_000)
    _touch(layout.vector_dir("new") / "part-00000.parquet", 3_000)
    _touch(layout.vector_dir("old") / "part-00001.parquet", 2_000)  # a later part counts
    _touch(layout.index_dir("indexed-only") / "index.faiss", 2_500)
    _touch(layout.vector_dir("empty") / "notes.txt", 9_000)  # no part: no vectors
    _touch(layout.index_builds / "new" / "abc" / "index.faiss", 9_000)  # a build, not a model
    _touch(layout.related_file("hybrid"), 9_000)
    _touch(layout.ranker, 9_000)
    assert layout.stored_keys() == ["new", "indexed-only", "old"]
    assert [p.name for p in layout.vector_parts("old")] == ["part-00000.parquet",
                                                           "part-00001.parquet"]
    assert layout.vector_parts("old", newest_first=True)[0].name == "part-00001.parquet"
    assert layout.vector_parts("missing") == []


def test_unfinished_index_builds_and_stray_links_are_removed(tmp_path):
    layout = Layout(tmp_path)
    done = layout.index_builds / "m" / "done"
    _touch(done / "papers.parquet", 1_000)
    _touch(layout.index_builds / "m" / "killed" / "index.faiss", 1_000)
    layout.index_dir("m").symlink_to(done)
    stray = layout.index / ".m.killed.link"
    stray.symlink_to(layout.index_builds / "m" / "killed")
    layout.remove_unfinished_index_builds()
    assert sorted(p.name for p in (layout.index_builds / "m").iterdir()) == ["done"]
    assert not stray.is_symlink()
    assert layout.index_dir("m").resolve() == done.resolve()


def test_staged_parts_no_manifest_names_and_table_builds_are_removed(tmp_path):
    layout = Layout(tmp_path)
    _touch(layout.staged / "0000-kept" / "part.json", 1_000)
    _touch(layout.staged / "0001-orphan" / "part.json", 1_000)
    _touch(layout.staged / "stray.tmp", 1_000)
    _touch(tmp_path / ".build-123" / "papers.parquet", 1_000)
    _touch(layout.table("papers"), 1_000)
    layout.remove_stale_staged({"0000-kept"})
    assert [p.name for p in layout.staged.iterdir()] == ["0000-kept"]
    assert not (tmp_path / ".build-123").exists()
    assert layout.table("papers").exists()


def test_the_lock_makes_the_corpus_directory_and_refuses_a_second_writer(tmp_path):
    root = tmp_path / "new" / "corpus"
    with corpus_lock(root) as held:
        assert held == root and Layout(root).staged.is_dir() and Layout(root).lock.exists()
        other = subprocess.run(
            [sys.executable, "-c", "from openmsd.corpus import corpus_lock\n"
             f"with corpus_lock({str(root)!r}):\n    pass"],
            capture_output=True, text=True, timeout=120)
        assert other.returncode != 0
        assert "another ingest, embed or index build is writing to this corpus" in other.stderr
    file = tmp_path / "a-file"
    file.write_text("")
    with pytest.raises(IngestError, match="a file, not a corpus directory"), corpus_lock(file):
        pass
