"""Seeds of a fetch: ids on the command line or in a file, a BibTeX or RIS library, a Zotero
collection. Each becomes a :class:`Seed`: a ``/works/{key}`` key (OpenAlex id, DOI, arXiv id,
PMID) or, for a reference with only a title, the title to look up.

>>> [s.key for s in seeds_from_ids(["W1", "10.1234/X"], "cli")]
['W1', 'doi:10.1234/x']
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rispy

from openmsd.fetch.bibtex import bibtex_entries
from openmsd.fetch.errors import FetchError
from openmsd.fetch.ids import seed_path

__all__ = ["LOCAL_API", "LOCAL_API_ENV", "ZOTERO_LOCAL", "Seed", "SeedError", "is_zotero_local",
           "read_seed_file", "read_seeds", "seeds_from_bibtex", "seeds_from_ids",
           "seeds_from_ris", "seeds_from_zotero", "seeds_from_zotero_local"]

ZOTERO_LOCAL = "zotero:local"
"""A library seed that names the running Zotero desktop: ``zotero:local[/COLLECTION]``."""
LOCAL_API = "http://127.0.0.1:23119/api"
"""The Zotero desktop's local API (Zotero 7 and later), read only, without a key."""
LOCAL_API_ENV = "OPENMSD_ZOTERO_LOCAL_URL"
"""Where the local API answers, when not at :data:`LOCAL_API`."""
SWITCH_ON = ("in Zotero, Settings > Advanced > 'Allow other applications on this computer to "
             "communicate with Zotero'")
# control characters, and the bidirectional-text controls (U+061C, U+200E/F, U+202A-E, U+2066-9)
_CONTROL = re.compile("[\x00-\x1f\x7f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")

_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^\s/?#]+?)(?:\.pdf)?$", re.IGNORECASE)


class SeedError(FetchError):
    """A seed file that cannot be read as ids, BibTeX or RIS."""


Problems = Callable[[str], None] | None
"""Where a seed file's broken entries are told (one line each: file, line, what is wrong),
the valid ones around them kept; None: the first broken entry is a :class:`SeedError`."""


def _broken(on_problem: Problems, message: str) -> None:
    if on_problem is None:
        raise SeedError(message.removesuffix("; skipped"))
    on_problem(message)


@dataclass(frozen=True)
class Seed:
    """A paper to start from: ``key`` for ``/works/{key}``, else ``title`` to search;
    ``origin`` says where it came from (``my.bib:12``, ``cli``)."""

    key: str | None
    title: str | None
    origin: str

    @property
    def name(self) -> str:
        return self.key or f"title:{self.title}"


def seeds_from_ids(values: Iterable[str], origin: str) -> list[Seed]:
    """Seeds of ids (OpenAlex, DOI, arXiv, PMID); :class:`SeedError` names one that is none."""
    out = []
    for number, value in enumerate(values, 1):
        key = seed_path(value)
        where = origin if origin == "cli" else f"{origin}:{number}"
        if key is None:
            raise SeedError(f"{where}: {value.strip()!r} is not an OpenAlex id, DOI, arXiv id "
                            "or pmid:N")
        out.append(Seed(key, None, where))
    return out


def _entry_seed(fields: dict[str, Any], where: str) -> Seed:
    """A seed of a reference's fields: DOI, arXiv eprint or URL, OpenAlex URL, else title."""
    fields = {k.lower(): v for k, v in fields.items() if isinstance(v, str) and v.strip()}
    for name in ("doi", "do"):
        if name in fields and (key := seed_path(fields[name])):
            return Seed(key, None, where)
    eprint = fields.get("eprint") or fields.get("arxivid") or fields.get("arxiv")
    if eprint and (key := seed_path(eprint)):
        return Seed(key, None, where)
    for name in ("url", "ur"):
        url = fields.get(name, "")
        if match := _ARXIV_URL.search(url):
            url = match.group(1)
        if url and (key := seed_path(url)):
            return Seed(key, None, where)
    note = fields.get("note", "")
    if (match := re.search(r"openmsd:(\S+)", note)) and (key := seed_path(match.group(1))):
        return Seed(key, None, where)  # openmsd's own export: the paper's id
    title = fields.get("title") or fields.get("primary_title") or fields.get("ti")
    title = re.sub(r"\s+", " ", re.sub(r"[{}\\]", "", title or "")).strip()
    return Seed(None, title or None, where)


def seeds_from_bibtex(text: str, origin: str, on_problem: Problems = None) -> list[Seed]:
    """Seeds of a BibTeX library (read block by block: :func:`bibtex_entries`, the entries
    around a broken block kept); ``origin:KEY`` names each entry, ``origin:LINE`` a broken
    block, told to ``on_problem`` (:data:`Problems`)."""
    entries, problems = bibtex_entries(text)
    for line, what in problems:
        _broken(on_problem, f"{origin}:{line}: {what}; skipped")
    if not entries:
        raise SeedError(f"{origin}: no BibTeX entry found (expected @article{{key, ...}})")
    return [_entry_seed(entry, f"{origin}:{entry.get('ID', '?')}") for entry in entries]


_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9]) {2}-(?: |$)")


def seeds_from_ris(text: str, origin: str, on_problem: Problems = None) -> list[Seed]:
    """Seeds of a RIS file (each record from ``TY  -`` to ``ER  -`` read by rispy);
    ``origin:#N`` names the N-th reference. A record without its ``ER  -`` (cut by the next
    ``TY  -`` or the end of the file) and lines outside a record are told to ``on_problem``
    (:data:`Problems`) with their line; the records around them are kept."""
    records: list[tuple[int, list[str]]] = []
    current: tuple[int, list[str]] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        tag = _RIS_TAG.match(line)
        if tag and tag.group(1) == "TY":
            if current is not None:
                _broken(on_problem, f"{origin}:{current[0]}: RIS record without its "
                                    f"'ER  -' line (the next record starts at line {number}); "
                                    "skipped")
            current = (number, [line])
        elif current is None:
            if line.strip() and not re.fullmatch(r"\s*\d+\.\s*", line):  # rispy's "1." heads
                _broken(on_problem, f"{origin}:{number}: a line outside a RIS record "
                                    "(expected 'TY  - ' to start one); skipped")
        elif tag and tag.group(1) == "ER":
            current[1].append(line)
            records.append(current)
            current = None
        else:
            current[1].append(line)
    if current is not None:
        _broken(on_problem, f"{origin}:{current[0]}: RIS record without its 'ER  -' line "
                            "(the file ends first); skipped")
    out = []
    for start, lines in records:
        try:
            [entry] = rispy.loads("\n".join(lines) + "\n")
        except Exception as error:  # rispy raises IOError/ValueError subclasses on bad tags
            _broken(on_problem, f"{origin}:{start}: RIS record not readable ({error}); "
                                "skipped")
            continue
        fields = {k: (v[0] if isinstance(v, list) and v else v) for k, v in entry.items()}
        out.append(_entry_seed(fields, f"{origin}:#{len(out) + 1}"))
    if not out:
        raise SeedError(f"{origin}: no RIS reference found (expected 'TY  - JOUR' ... "
                        "'ER  -')")
    return out


def read_seed_file(path: Path, on_problem: Problems = None) -> list[Seed]:
    """Seeds of a file: BibTeX (``.bib`` or ``@`` first), RIS (``.ris`` or ``TY  -`` first),
    else one id a line (``#`` comments and blank lines skipped). A broken BibTeX or RIS entry
    is told to ``on_problem`` with its line, the others kept (:data:`Problems`)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise SeedError(f"{path}: not UTF-8 text at byte {error.start}; expected BibTeX, "
                        "RIS or one id a line") from None
    except OSError as error:
        raise SeedError(f"{path}: cannot read ({error.strerror})") from None
    head = text.lstrip()[:200]
    if path.suffix.lower() in (".bib", ".bibtex") or head.startswith("@"):
        return seeds_from_bibtex(text, str(path), on_problem)
    if path.suffix.lower() == ".ris" or re.match(r"TY {2}- ", head):
        return seeds_from_ris(text, str(path), on_problem)
    lines = [(n, line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), 1)]
    out = []
    for number, value in lines:
        if not value:
            continue
        key = seed_path(value)
        if key is None:
            raise SeedError(f"{path}:{number}: {value!r} is not an OpenAlex id, DOI, arXiv id "
                            "or pmid:N (a seed file holds BibTeX, RIS, or one id a line)")
        out.append(Seed(key, None, f"{path}:{number}"))
    if not out:
        raise SeedError(f"{path}: no seed in it (expected BibTeX, RIS or one id a line)")
    return out


def _zotero_items(items: list[Any], origin: str) -> list[Seed]:
    """Seeds of Zotero items (web or local API JSON): DOI (or ``DOI:`` in Extra), URL, title;
    notes, attachments and annotations are not papers."""
    out = []
    for item in items:
        data = item.get("data", item) if isinstance(item, dict) else {}
        if data.get("itemType") in ("note", "attachment", "annotation", None):
            continue
        fields = {"doi": data.get("DOI"), "url": data.get("url"), "title": data.get("title")}
        extra = data.get("extra") or ""
        if not fields["doi"] and (match := re.search(r"(?im)^DOI:\s*(\S+)", extra)):
            fields["doi"] = match.group(1)
        out.append(_entry_seed(fields, f"{origin}:{data.get('key', '?')}"))
    return out


def is_zotero_local(spec: str | Path) -> bool:
    """Whether a ``--seeds`` value names the running Zotero desktop (``zotero:local``,
    ``zotero:local/COLLECTION``).

    >>> is_zotero_local("zotero:local/Thesis"), is_zotero_local("lib.bib")
    (True, False)
    """
    text = str(spec)
    return text == ZOTERO_LOCAL or text.startswith(ZOTERO_LOCAL + "/")


def _clean(text: str) -> str:
    """``text`` without control and bidi characters, whitespace collapsed."""
    return re.sub(r"\s+", " ", _CONTROL.sub("", text)).strip()


def _collection_key(collections: list[dict[str, Any]], wanted: str) -> str | None:
    """The key of the collection named ``wanted`` (its key, its name, or its path of names
    ``Parent/Child``; bidi and control characters ignored), else None."""
    data = [c.get("data", c) for c in collections]
    by_key = {c.get("key"): c for c in data}
    if wanted in by_key:
        return wanted

    def path(collection: dict[str, Any] | None) -> str:
        names: list[str] = []
        seen: set[str] = set()
        while collection and collection.get("key") not in seen:
            seen.add(collection.get("key"))
            names.append(_clean(collection.get("name") or ""))
            collection = by_key.get(collection.get("parentCollection") or None)
        return "/".join(reversed(names))

    target = _clean(wanted)
    for found in ([c["key"] for c in data if _clean(c.get("name") or "") == target],
                  [c["key"] for c in data if path(c) == target]):
        if found:
            return found[0]
    return None


def seeds_from_zotero_local(spec: str = ZOTERO_LOCAL, url: str | None = None) -> list[Seed]:
    """Seeds of the library, or of one collection (``zotero:local/COLLECTION``: its name, its
    path ``Parent/Child`` or its key), of the running Zotero desktop, through its local API
    (pyzotero ``local=True``; at ``url``, else ``$OPENMSD_ZOTERO_LOCAL_URL``, else
    :data:`LOCAL_API`). :class:`SeedError` in one line when Zotero is not running or its
    local API is off, saying where to switch it on."""
    # optional: the fetch extra; pyzotero takes ~0.2 s to import
    from pyzotero import errors as zotero_errors
    from pyzotero import zotero

    if not is_zotero_local(spec):
        raise SeedError(f"{spec!r}: expected {ZOTERO_LOCAL} or {ZOTERO_LOCAL}/COLLECTION")
    wanted = str(spec)[len(ZOTERO_LOCAL) + 1:] or None
    client = zotero.Zotero(0, "user", local=True)
    client.endpoint = (url or os.environ.get(LOCAL_API_ENV) or LOCAL_API).rstrip("/")
    origin = str(spec)
    try:
        if wanted:
            key = _collection_key(client.everything(client.collections()), wanted)
            if key is None:
                raise SeedError(f"{origin}: no collection {_clean(wanted)!r} in the Zotero "
                                "library (give its name, Parent/Child, or its key)")
            items = client.everything(client.collection_items_top(key))
        else:
            items = client.everything(client.top())
    except SeedError:
        raise
    except zotero_errors.UserNotAuthorisedError:
        raise SeedError(f"{origin}: Zotero's local API is switched off (403): switch it on "
                        f"{SWITCH_ON}") from None
    except zotero_errors.PyZoteroError as error:
        raise SeedError(f"{origin}: Zotero's local API answered an error ({error})") from None
    except Exception:  # httpx transport errors: nothing listening, a timeout
        raise SeedError(f"{origin}: Zotero is not running, or its local API is off, at "
                        f"{client.endpoint}: start Zotero 7 or later and switch it on "
                        f"{SWITCH_ON}") from None
    out = _zotero_items(items, origin)
    if not out:
        raise SeedError(f"{origin}: no item in it")
    return out


def read_seeds(spec: str | Path, on_problem: Problems = None) -> list[Seed]:
    """Seeds of a ``--seeds`` value: ``zotero:local[/COLLECTION]`` (the running Zotero
    desktop, :func:`seeds_from_zotero_local`) or a file (:func:`read_seed_file`, its broken
    entries told to ``on_problem``)."""
    if is_zotero_local(spec):
        return seeds_from_zotero_local(str(spec))
    return read_seed_file(Path(spec), on_problem)


def seeds_from_zotero(library: str, collection: str | None, api_key: str | None,
                      api_url: str | None = None) -> list[Seed]:
    """Seeds of a Zotero library or collection through the Zotero web API (pyzotero, read
    only). ``library`` is ``user:ID`` or ``group:ID``."""
    # optional: the fetch extra; pyzotero takes ~0.2 s to import
    from pyzotero import errors as zotero_errors
    from pyzotero import zotero

    kind, _, library_id = library.partition(":")
    if kind not in ("user", "group") or not library_id.isdigit():
        raise SeedError(f"--zotero {library!r}: expected user:ID or group:ID")
    client = zotero.Zotero(library_id, kind, api_key)
    if api_url:
        client.endpoint = api_url.rstrip("/")
    origin = f"zotero:{library}" + (f"/{collection}" if collection else "")
    try:
        query = client.collection_items_top(collection) if collection else client.top()
        items = client.everything(query)
    except zotero_errors.UserNotAuthorisedError:
        raise SeedError(f"{origin}: the Zotero API refused the key (403): is it right, and "
                        "allowed to read this library?") from None
    except zotero_errors.ResourceNotFoundError:
        raise SeedError(f"{origin}: no such Zotero library or collection (404)") from None
    except zotero_errors.PyZoteroError as error:
        raise SeedError(f"{origin}: Zotero API error ({error})") from None
    except Exception as error:  # httpx transport errors: unreachable, timeout
        raise SeedError(f"{origin}: Zotero API unreachable ({error})") from None
    out = _zotero_items(items, origin)
    if not out:
        raise SeedError(f"{origin}: no item in it")
    return out
