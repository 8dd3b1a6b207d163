"""Seeds from the running Zotero desktop (``zotero:local[/COLLECTION]``), through its local API
as pyzotero reads it, from a loopback server speaking that API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.fetch import LOCAL_API_ENV, SeedError, read_seeds, seeds_from_zotero_local
from tests.fetch.zoteroserver import Library, ZoteroServer, serve

runner = CliRunner()


@pytest.fixture
def zotero() -> Iterator[ZoteroServer]:
    library = Library()
    thesis = library.add_collection("Thesis")
    chapter = library.add_collection("Chapter 2/3 \u202eforests", parent=thesis)
    for i in range(130):  # more than a page of 100
        library.add_item(f"Paper {i}", f"10.5555/test.{1000 + i}" if i % 3 else None,
                         collections=[thesis] if i < 5 else [])
    library.add_item("Campylocentrum Benth. no Distrito Federal", "10.1590/2236-8906-76-2021",
                     collections=[chapter])
    library.add_item("A broken DOI", "not a doi", collections=[chapter])
    yield from serve(library)


def test_a_library_and_a_collection_from_the_desktop(zotero: ZoteroServer) -> None:
    seeds = seeds_from_zotero_local("zotero:local", zotero.local)
    assert len(seeds) == 132 and seeds[1].key == "doi:10.5555/test.1001"
    assert seeds[0].key is None and seeds[0].title == "Paper 0"
    assert seeds[0].origin.startswith("zotero:local:")
    thesis = seeds_from_zotero_local("zotero:local/Thesis", zotero.local)
    assert [s.title or s.key for s in thesis] == ["Paper 0", "doi:10.5555/test.1001",
                                                  "doi:10.5555/test.1002", "Paper 3",
                                                  "doi:10.5555/test.1004"]
    # a name with a slash and a bidi control, by its name or its path; a broken DOI: its title
    for spec in ("zotero:local/Chapter 2/3 forests", "zotero:local/Thesis/Chapter 2/3 forests"):
        chapter = seeds_from_zotero_local(spec, zotero.local)
        assert [(s.key, s.title) for s in chapter] == [
            ("doi:10.1590/2236-8906-76-2021", None), (None, "A broken DOI")]
    with pytest.raises(SeedError, match="no collection 'Nope'"):
        seeds_from_zotero_local("zotero:local/Nope", zotero.local)
    requests = [path for method, path, _ in zotero.library.log]
    assert all(path.startswith("/api/users/0/") for path in requests)
    assert not any("Zotero-API-Key" in headers for _, _, headers in zotero.library.log)


def test_zotero_off_or_not_running_is_one_line(zotero: ZoteroServer) -> None:
    zotero.library.local_enabled = False
    with pytest.raises(SeedError) as refused:
        seeds_from_zotero_local("zotero:local", zotero.local)
    message = str(refused.value)
    assert "switched off (403)" in message and "Settings > Advanced" in message
    assert "\n" not in message
    with pytest.raises(SeedError) as absent:
        seeds_from_zotero_local("zotero:local", "http://127.0.0.1:9/api")
    message = str(absent.value)
    assert "not running" in message and "Allow other applications" in message
    assert "\n" not in message


def test_watch_takes_the_desktop_library(zotero: ZoteroServer, demo_run,
                                         monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(demo_run[0], corpus)
    monkeypatch.setenv(LOCAL_API_ENV, zotero.local)
    assert read_seeds("zotero:local/Chapter 2/3 forests")[0].key == \
        "doi:10.1590/2236-8906-76-2021"
    result = runner.invoke(app, ["watch", str(corpus), "--seeds",
                                 "zotero:local/Thesis/Chapter 2/3 forests", "-k", "3"])
    assert result.exit_code == 0, result.output
    assert "not in the corpus: title:A broken DOI" in result.output
    assert "ranked for these 1 papers" in result.output
    zotero.library.local_enabled = False
    result = runner.invoke(app, ["watch", str(corpus), "--seeds", "zotero:local"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "Allow other applications on this computer" in result.output
