"""Results back into Zotero: ``related ... --to-zotero`` and ``watch --to-zotero`` write a
collection through the web API (pyzotero, as users run it) to a loopback server speaking its
format; the library is read from the desktop's local API on the same server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from openmsd.cli import app
from openmsd.demo import RELATED
from openmsd.export import MAX_WRITE, ZoteroError, ZoteroPaper, write_to_zotero
from openmsd.fetch import LOCAL_API_ENV
from openmsd.identifiers import normalize_doi
from tests.fetch.zoteroserver import READ_KEY, USER, WRITE_KEY, Library, ZoteroServer, serve

runner = CliRunner()
ORCHIDS = RELATED[0][0]
LIBRARY = f"user:{USER}"


@pytest.fixture
def corpus(demo_run, tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(demo_run[0], target)
    return target


@pytest.fixture
def related(corpus: Path, tmp_path: Path) -> list[dict]:
    """The 40 papers ``related --seeds`` ranks for a library of the orchid paper."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(ORCHIDS + "\n")
    result = runner.invoke(app, ["related", str(corpus), "--seeds", str(seeds), "-k", "40",
                                 "--json"])
    assert result.exit_code == 0, result.output
    return orjson.loads(result.stdout[result.stdout.index("["):])


@pytest.fixture
def zotero(related: list) -> Iterator[ZoteroServer]:
    """A library holding the orchid paper (a collection 'Thesis'), two of its related papers
    (one by DOI, one by its title in other case and accents), and items without a DOI or with
    a broken one."""
    library = Library()
    thesis = library.add_collection("Thesis")
    library.add_item("Campylocentrum", ORCHIDS, collections=[thesis])
    with_doi = [r for r in related if r["doi"]]
    library.add_item("whatever title", with_doi[0]["doi"].upper())
    library.add_item(with_doi[1]["title"].upper(), None)
    library.add_item("No DOI at all", None)
    library.add_item("Broken", "doi: nonsense")
    yield from serve(library)


def cli(*args: str) -> list[str]:
    return [*args, "--zotero-library", LIBRARY]


def items_in(library: Library, name: str) -> tuple[str, list[dict], list[dict]]:
    """The collection named ``name``: its key, its items, and the notes under them."""
    key = next(k for k, c in library.collections.items() if c["data"]["name"] == name)
    items = [i["data"] for i in library.items.values() if key in i["data"]["collections"]]
    keys = {i["key"] for i in items}
    notes = [i["data"] for i in library.items.values()
             if i["data"].get("parentItem") in keys]
    return key, items, notes


def test_a_library_becomes_a_new_collection_of_related_papers(
        zotero: ZoteroServer, corpus: Path, related: list,
        monkeypatch: pytest.MonkeyPatch) -> None:
    library = zotero.library
    monkeypatch.setenv(LOCAL_API_ENV, zotero.local)
    monkeypatch.setenv("ZOTERO_API_KEY", WRITE_KEY)
    before = len(library.items)
    # another client adds one while the second batch is on its way
    arriving = next(r for r in related[30:] if r["doi"])
    library.fault("POST", "/items", 429, {"Backoff": "0"})  # the first batch waits once
    # the second batch finds the library changed by another client: a 412
    library.fault("POST", "/items", 412, stale=True, added=[("by another client",
                                                             arriving["doi"])], after=1)
    result = runner.invoke(app, cli("related", str(corpus), "--seeds", "zotero:local/Thesis",
                                    "-k", "40", "--to-zotero", "auto", "--zotero-url",
                                    zotero.url))
    assert result.exit_code == 0, result.output
    name = next(c["data"]["name"] for c in library.collections.values()
                if c["data"]["name"].startswith("openmsd: related to"))
    _, items, notes = items_in(library, name)
    with_doi = [r for r in related if r["doi"]]
    skipped = {normalize_doi(r["doi"]) for r in [*with_doi[:2], arriving]}
    expected = [r for r in related if normalize_doi(r["doi"]) not in skipped]
    assert len(items) == len(notes) > MAX_WRITE // 2  # more than one batch
    dois = [normalize_doi(i["DOI"]) for i in items if i["DOI"]]
    assert len(set(dois)) == len(dois) and not set(dois) & skipped
    assert len(items) == len(expected)
    by_doi = {normalize_doi(i["DOI"]): i for i in items}
    for item in items:
        assert item["title"] and item["language"] and item["extra"].startswith("openmsd: ")
    assert {r["language"] for r in expected} - {"pt"}  # in other languages too
    abstracts = sum(bool(i["abstractNote"]) for i in items)
    assert abstracts >= len(items) - 2
    note = next(n for n in notes if n["parentItem"] == by_doi[dois[0]]["key"])
    assert "related to" in note["note"] and "<li>" in note["note"]
    assert "already in the library" in result.output
    assert len(library.items) == before + 1 + len(items) + len(notes)  # + the other's item
    posts = [(path, headers) for method, path, headers in library.log if method == "POST"]
    assert all("If-Unmodified-Since-Version" in headers for _, headers in posts)
    statuses = [path for path, _ in posts if path.endswith("/items")]
    assert len(statuses) >= 4  # 429, first batch, 412, the batch again
    # run again: nothing new, the same collection extended with nothing
    result = runner.invoke(app, cli("related", str(corpus), "--seeds", "zotero:local/Thesis",
                                    "-k", "40", "--to-zotero", "auto", "--zotero-url",
                                    zotero.url))
    assert result.exit_code == 0, result.output
    assert "0 papers -> Zotero" in result.output
    assert sum(c["data"]["name"] == name for c in library.collections.values()) == 1


def test_a_failed_batch_leaves_nothing_half_written(zotero: ZoteroServer, related: list
                                                    ) -> None:
    library = zotero.library
    before_items, before_collections = dict(library.items), dict(library.collections)
    library.fault("POST", "/items", 500, after=1)  # the second batch fails
    papers = [ZoteroPaper(r["paper_id"], r["title"], r["doi"], language=r["language"],
                          evidence=r["why"]) for r in related[2:40]]
    with pytest.raises(ZoteroError) as failed:
        write_to_zotero(papers, "Reading list", LIBRARY, WRITE_KEY, "related to a test",
                        zotero.url)
    assert "was deleted again" in str(failed.value)
    assert library.items.keys() == before_items.keys()
    assert library.collections.keys() == before_collections.keys()


def test_bad_keys_names_and_the_dry_run(zotero: ZoteroServer, corpus: Path) -> None:
    library = zotero.library
    before = len(library.items)
    result = runner.invoke(app, cli("related", str(corpus), ORCHIDS, "--to-zotero",
                                    "Reading", "--zotero-key", READ_KEY, "--zotero-url",
                                    zotero.url))
    assert result.exit_code == 2 and "no write access" in result.output
    assert "Allow write access" in result.output and result.output.count("error:") == 1
    result = runner.invoke(app, cli("related", str(corpus), ORCHIDS, "--to-zotero",
                                    "\u202e\u2066", "--zotero-key", WRITE_KEY,
                                    "--zotero-url", zotero.url))
    assert result.exit_code == 2 and "empty collection name" in result.output
    result = runner.invoke(app, cli("related", str(corpus), ORCHIDS, "-k", "5", "--to-zotero",
                                    "Reading/2026 \u202elist", "--zotero-key", WRITE_KEY,
                                    "--zotero-url", zotero.url, "--dry-run", "--json"))
    assert result.exit_code == 0, result.output
    assert "would write 3 papers into a new collection 'Reading/2026 list'" in result.output
    assert not any(method != "GET" for method, _, _ in library.log)
    assert len(library.items) == before
    result = runner.invoke(app, cli("related", str(corpus), ORCHIDS, "-k", "5", "--to-zotero",
                                    "Reading/2026 \u202elist", "--zotero-key", WRITE_KEY,
                                    "--zotero-url", zotero.url))
    assert result.exit_code == 0, result.output
    _, items, notes = items_in(library, "Reading/2026 list")
    assert len(items) == len(notes) == 3


def test_watch_writes_what_is_new(zotero: ZoteroServer, corpus: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCAL_API_ENV, zotero.local)
    result = runner.invoke(app, cli("watch", str(corpus), "--seeds", "zotero:local/Thesis",
                                    "-k", "5", "--to-zotero", "New for my thesis",
                                    "--zotero-key", WRITE_KEY, "--zotero-url", zotero.url))
    assert result.exit_code == 0, result.output
    _, items, notes = items_in(zotero.library, "New for my thesis")
    assert 3 <= len(items) == len(notes) <= 5
    assert all("new in corpus" in n["note"] for n in notes)
