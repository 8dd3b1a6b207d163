"""What every reader is, and the streaming functions they share.

A reader is a :class:`Reader`: a format name, a ``sniff(head, path)`` test on the first bytes of
a file (decompressed), and ``read(path, report)`` yielding :data:`openmsd.corpus.schema.Record`
tuples one at a time, so memory stays flat however large the input. Readers never write files.

Hostile or broken inputs stay bounded: a line longer than :data:`MAX_LINE_BYTES`, a document
(XML, a whole-file JSON) longer than :data:`MAX_DOCUMENT_BYTES` once decompressed, and what a
file holds beyond :data:`MAX_FILE_BYTES` are reported with the limit and skipped, never read
into memory. UTF-8 files with a byte-order mark and UTF-16 files (with their mark) are decoded.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import gzip
import io
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from isal import isal_zlib
from lxml import etree

from openmsd.corpus import Record
from openmsd.report import Report

SNIFF_BYTES = 8192
MAX_LINE_BYTES = 16 << 20
"""The longest JSON line read (16 MiB; a paper with its full text is well under 2 MiB)."""
MAX_DOCUMENT_BYTES = 64 << 20
"""The largest whole-file document (an XML article, a Crossref JSON) read, decompressed."""
MAX_FILE_BYTES = 64 << 30
"""The most a line-by-line file is read, decompressed (64 GiB: an OpenAlex part is ~2 GiB)."""


@dataclass(frozen=True)
class Reader:
    """A source format: its name, a content test, and a streaming record generator."""

    name: str
    sniff: Callable[[bytes, Path], bool]
    read: Callable[[Path, Report], Iterator[Record]]
    description: str = ""


_UTF16 = {codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"}


def open_binary(path: Path) -> IO[bytes]:
    """Open a file for reading, decompressing gzip transparently (by magic bytes, not suffix;
    :class:`GzipMembers`, with ISA-L); UTF-8 bytes always: a UTF-8 byte-order mark is skipped,
    UTF-16 (with its mark) recoded."""
    handle: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = handle.read(2)
    handle.seek(0)
    if magic == GZIP_MAGIC:
        handle = io.BufferedReader(GzipMembers(handle), 1 << 20)  # type: ignore[assignment]
    handle = io.BufferedReader(handle) if not hasattr(handle, "peek") else handle  # type: ignore[arg-type]
    try:
        mark = handle.peek(3)[:3]  # type: ignore[attr-defined]
    except (OSError, EOFError):  # a broken gzip stream: reported by whoever reads it
        return handle
    if mark == codecs.BOM_UTF8:
        handle.read(3)
    elif mark[:2] in _UTF16:
        encoding = _UTF16[mark[:2]]
        handle.read(2)
        return codecs.EncodedFile(handle, "utf-8", encoding)  # type: ignore[return-value]
    return handle


GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 18


class GzipTrailingData(OSError):
    """Bytes after the last gzip member that are neither another member nor zero padding."""


class GzipMembers(io.RawIOBase):
    """The decompressed bytes of a file of gzip members, one after the other (ISA-L's
    ``isal_zlib``, zlib's interface in about a third of its time). Every byte of the intact
    members is returned before an error: :class:`GzipTrailingData` naming the byte offset where
    data that is not gzip follows the stream, ``EOFError`` naming the offset where a member is
    cut short. (``gzip`` and ``isal.igzip`` raise on such a tail while the last records they
    decompressed are still in their buffers, which are lost with the error.)"""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.buf = b""  # compressed bytes not yet consumed
        self.at = 0  # the file offset of buf[0]
        self.member: Any = None  # the current member's decompressor
        self.ended = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.handle.close()
        super().close()

    def _more(self) -> bool:
        chunk = self.handle.read(_CHUNK)
        self.buf += chunk
        return bool(chunk)

    def _next_member(self) -> bool:
        """Start the next member; False at the end of the file (zero padding skipped)."""
        while True:
            stripped = self.buf.lstrip(b"\0")
            self.at += len(self.buf) - len(stripped)
            self.buf = stripped
            if len(self.buf) >= 2 or not self._more():
                break
        if not self.buf:
            return False
        if self.buf[:2] != GZIP_MAGIC:
            raise GzipTrailingData(f"data that is not gzip at byte {self.at:,}, after the end "
                                   "of the compressed stream (every record before it was read)")
        self.member = isal_zlib.decompressobj(wbits=31)
        return True

    def readinto(self, target: Any) -> int:
        while not self.ended:
            if self.member is None and not self._next_member():
                self.ended = True
                break
            if not self.buf and not self._more():
                raise EOFError(f"compressed data cut short at byte {self.at:,} (a gzip member "
                               "without its end)")
            try:
                out = self.member.decompress(self.buf, len(target))
            except isal_zlib.error as error:
                raise gzip.BadGzipFile(f"corrupt compressed data near byte {self.at:,}: "
                                       f"{error}") from None
            rest = self.member.unused_data if self.member.eof else self.member.unconsumed_tail
            self.at += len(self.buf) - len(rest)
            self.buf = rest
            if self.member.eof:
                self.member = None
            if out:
                target[:len(out)] = out
                return len(out)
        return 0


def read_document(path: Path, report: Report, unreadable: str = "unreadable file"
                  ) -> bytes | None:
    """A whole file's bytes (decompressed, UTF-8); None after reporting an unreadable file
    (``unreadable: error``) or one over :data:`MAX_DOCUMENT_BYTES` (only that much plus one
    byte is read)."""
    try:
        with open_binary(path) as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except (OSError, EOFError) as error:
        report.problem(path, "file", f"{unreadable}: {error}")
        return None
    if len(data) > MAX_DOCUMENT_BYTES:
        report.problem(path, "file", f"document too large: over {MAX_DOCUMENT_BYTES:,} bytes "
                       "decompressed (the limit); skipped")
        return None
    return data


def _bounded_lines(handle: IO[bytes], path: Path, report: Report
                   ) -> Iterator[tuple[int, bytes | None]]:
    """``(number, line)`` for each line; a line over :data:`MAX_LINE_BYTES` is reported and
    yielded as None, skipped without being held; reading stops after :data:`MAX_FILE_BYTES`."""
    number = total = 0
    while line := handle.readline(MAX_LINE_BYTES + 1):
        number += 1
        total += len(line)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := handle.readline(1 << 20)) and not rest.endswith(b"\n"):
                total += len(rest)
            total += len(rest)
            report.problem(path, f"line {number}", f"line too long: over {MAX_LINE_BYTES:,} "
                           "bytes (the limit); skipped")
            yield number, None
        else:
            yield number, line
        if total > MAX_FILE_BYTES:
            report.problem(path, f"after line {number}", f"file too large: over "
                           f"{MAX_FILE_BYTES:,} bytes decompressed (the limit); the rest "
                           "skipped")
            return


def head(path: Path, size: int = SNIFF_BYTES) -> bytes:
    """The first ``size`` decompressed bytes of a file ("" for an unreadable gzip)."""
    try:
        with open_binary(path) as handle:
            return handle.read(size)
    except (OSError, EOFError):
        return b""


def json_lines(path: Path, report: Report) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each JSON-object line; report the lines that are not.

    Blank lines are skipped silently; malformed JSON and non-object values are reported with
    their line number and skipped; a line in another encoding than UTF-8 is read as
    Windows-1252 and reported. A truncated gzip stream is reported and ends the file.
    """
    with open_binary(path) as handle:
        number = 0
        try:
            for number, line in _bounded_lines(handle, path, report):
                if line is None or not line.strip():
                    continue
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError as error:
                    value = _recode(line)
                    if value is None:
                        report.problem(path, f"line {number}", f"malformed JSON: {error}")
                        continue
                    report.problem(path, f"line {number}", "wrong encoding: not UTF-8; read "
                                   "as Windows-1252", kind="warning")
                if not isinstance(value, dict):
                    report.problem(path, f"line {number}",
                                   f"expected a JSON object, got {type(value).__name__}")
                    continue
                with reading_at(report, path, f"line {number}"):
                    yield number, value
        except (OSError, EOFError, gzip.BadGzipFile) as error:
            report.problem(path, f"after line {number}", f"unreadable compressed data: {error}")
    if number == 0:
        report.problem(path, "file", "empty file: no records", kind="warning")


def _recode(line: bytes) -> Any:
    """A line that is valid JSON once read as Windows-1252 instead of UTF-8, parsed; else None."""
    try:
        line.decode("utf-8")
        return None  # the encoding is fine: the JSON is not
    except UnicodeDecodeError:
        pass
    try:
        return orjson.loads(line.decode("cp1252", errors="replace"))
    except orjson.JSONDecodeError:
        return None


_XML_OPTIONS = {"load_dtd": False, "no_network": True, "resolve_entities": False,
                "huge_tree": True}


def parse_xml(path: Path, report: Report, recover: bool = False) -> Any:
    """The root element of an XML file (gzip allowed; no DTD, no network); None after
    reporting an unreadable or malformed file with lxml's line number. With ``recover``,
    a malformed file is parsed as far as lxml can and reported as a warning."""
    data = read_document(path, report)
    if data is None:
        return None
    try:
        return etree.fromstring(data, etree.XMLParser(**_XML_OPTIONS))
    except etree.XMLSyntaxError as error:
        line, detail = error.lineno, error.msg
        if "amplification" in detail or "entity reference loop" in detail:  # an entity bomb:
            # lxml counts the lines of the entity's text, not the document's
            line = _failing_line(data) or line
            detail = re.sub(r", line \d+, column \d+$", " (in an entity)", detail)
        where = f"line {line if line is not None else '?'}"
    root = None
    if recover:
        try:
            root = etree.fromstring(data, etree.XMLParser(recover=True, **_XML_OPTIONS))
        except etree.XMLSyntaxError:
            root = None
    if root is None:
        report.problem(path, where, f"malformed XML: {detail}")
        return None
    report.problem(path, where, f"malformed XML, recovered: {detail}", kind="warning")
    return root


def _failing_line(data: bytes) -> int | None:
    """The line of the document at which lxml fails, found by feeding it line by line (an
    error inside an entity's expansion, such as an entity bomb, says line 1 of the entity)."""
    parser = etree.XMLParser(**_XML_OPTIONS)
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        try:
            parser.feed(line)
        except etree.XMLSyntaxError:
            return number
    return None


def text_stream(path: Path) -> io.TextIOWrapper:
    """A text stream over a (possibly gzipped) file, UTF-8 with undecodable bytes replaced."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8", errors="replace", newline="")


@contextlib.contextmanager
def counting(report: Report, names: Iterable[str]) -> Iterator[dict[str, int]]:
    """Counters of ``names`` (from 0) for the block to add to, given to ``report`` when it
    ends, however it ends (a reader closed early counts what it read)."""
    counts = dict.fromkeys(names, 0)
    try:
        yield counts
    finally:
        for name, number in counts.items():
            report.count(name, number)


def first_csv_row(head: bytes) -> list[str] | None:
    """The cells of the first line of a CSV file's first bytes (a byte-order mark dropped);
    None where it does not parse."""
    line = head.decode("utf-8", errors="replace").lstrip("\ufeff").split("\n", 1)[0]
    try:
        return next(csv.reader([line.rstrip("\r")]))
    except (csv.Error, StopIteration):
        return None


def csv_rows(path: Path, report: Report) -> Iterator[tuple[int, list[str]]]:
    """Each row of the (possibly gzipped) CSV file ``path`` with its line number; a row the
    CSV reader cannot parse is reported with its line and skipped; unreadable compressed data
    is reported and ends the file (the rows before it are kept)."""
    with text_stream(path) as stream:
        rows = csv.reader(stream)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except csv.Error as error:
                report.problem(path, f"line {rows.line_num}", f"unreadable CSV: {error}")
                continue
            except (OSError, EOFError) as error:
                report.problem(path, f"after line {rows.line_num}",
                               f"unreadable compressed data: {error}")
                return
            yield rows.line_num, row


_AT: ContextVar[tuple[Report, Path, str] | None] = ContextVar("openmsd_reading_at",
                                                               default=None)


@contextlib.contextmanager
def reading_at(report: Report, path: Path, where: str) -> Iterator[None]:
    """While the block runs, :func:`as_str`, :func:`as_year` and :func:`as_str_list` called with
    a field name report each value they drop or coerce as a warning at ``path``, ``where``
    (:func:`json_lines` does this for each line it yields)."""
    previous = _AT.get()
    _AT.set((report, path, where))
    try:
        yield
    finally:
        _AT.set(previous)  # not reset(token): a generator may be closed in another context


def dropped(field: str | None, expected: str, value: Any, outcome: str = "dropped") -> None:
    """Report, where :func:`reading_at` says, that ``field``'s ``value`` was not ``expected``
    (``outcome``: dropped, or how it was read)."""
    _warn(field, f"wrong field type: {field!r} expected {expected}, got "
                 f"{type(value).__name__} {_shown(value)}; {outcome}")


def bad_value(field: str, expected: str, value: Any, outcome: str = "dropped") -> None:
    """Report, where :func:`reading_at` says, that ``field`` holds ``value`` of the right type
    but not ``expected`` (``outcome``: what was done with it)."""
    _warn(field, f"bad value: {field!r} expected {expected}, got {_shown(value)}; {outcome}")


def _warn(field: str | None, reason: str) -> None:
    at = _AT.get()
    if at is None or field is None:
        return
    report, path, where = at
    report.problem(path, where, reason, kind="warning")


def _shown(value: Any) -> str:
    return repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:37]}..."


#: C1 control characters (U+0080–U+009F) that are Windows-1252 punctuation decoded as
#: Latin-1 upstream (TALN's ``l\x92analyse``), mapped back to what the authors typed.
_C1_AS_CP1252 = {code: bytes([code]).decode("cp1252") for code in range(0x80, 0xA0)
                 if code not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)}


def as_str(value: Any, field: str | None = None) -> str | None:
    """A stripped, NFC-normalised string (Windows-1252 punctuation that arrived as C1 control
    characters repaired); None for None, non-strings and empty strings; a number as its digits.
    With ``field`` named, a number read as a string or another type dropped is reported (see
    :func:`reading_at`)."""
    if isinstance(value, str):
        if not value.isascii():
            value = unicodedata.normalize("NFC", value.translate(_C1_AS_CP1252))
        return value.strip() or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        dropped(field, "a string", value, f"read as {str(value)!r}")
        return str(value)
    if value is not None:
        dropped(field, "a string", value)
    return None


_YEAR = re.compile(r"[0-9]{4}")  # ASCII digits: str.isdigit() also accepts '¹'


def as_year(value: Any, field: str | None = None) -> int | None:
    """A plausible publication year (1000-2100) from an int or a string starting with one;
    with ``field`` named, anything else but None is reported as dropped."""
    year = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, str) and _YEAR.match(value.strip()):
        year = int(value.strip()[:4])
    if year is not None and 1000 <= year <= 2100:
        return year
    if value is not None and value != "":
        dropped(field, "a year from 1000 to 2100", value)
    return None


def as_str_list(value: Any, field: str | None = None) -> list[str]:
    """A list of non-empty strings from a list or a single string; with ``field`` named, a
    value of another type and each element that is not a string are reported."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        if value is not None:
            dropped(field, "a list of strings", value)
        return []
    return [s for s in (as_str(v, field and f"{field}[{i}]") for i, v in enumerate(value)) if s]
