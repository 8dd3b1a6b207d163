"""The corpus schema: the records readers yield and the Parquet tables of a corpus directory.

Readers yield four kinds of record (plain dicts, keys below):

* ``paper``: ``key`` (see :func:`openmsd.identifiers.paper_key`), ``aliases``, ``doi``,
  ``title``, ``abstract``, ``declared_language``, ``year``, ``venue``, ``authors``, ``keywords``,
  ``categories``, ``translations`` (list of ``{language, title, abstract, keywords}``),
  ``full_text``, ``doc_type`` (the kind of work as its source names it: OpenAlex and Crossref
  ``type``, JATS ``article-type``: ``article``, ``dissertation``, ``dataset``, ``preprint``,
  ``erratum``...; see :mod:`openmsd.corpus.kinds`), ``source`` (the reader's
  format name), ``loc`` (``file:line`` or element).
* ``reference``: one entry of a paper's reference list: ``citing`` (the citing paper's key),
  ``position`` (0-based in the list), ``ref_id`` (the source's label: ``B23``, a bib hash, an oci),
  ``targets`` (aliases of the cited paper: ``doi:...``, ``openalex:W...``), ``title``, ``authors``,
  ``year``, ``venue``, ``raw``, ``source``, ``loc``.
* ``references``: a block of one paper's references, column by column (the fast path for
  readers of large reference lists, such as OpenAlex's ``referenced_works``): the keys of
  ``reference``, where a list value is a column holding one item per reference (``position``
  is required) and any other value is shared by every reference of the block;
  :func:`reference_rows` turns a block into ``reference`` records.
* ``context``: a citation context: ``citing``, ``ref_id`` (the reference it cites), ``text``,
  ``position`` (character offset of the marker in the full text, or -1), ``source``, ``loc``.

Missing keys mean null. The corpus tables built from them are described by the schemas below
(a paper's ``abstract_source`` is the format of the record its abstract came from: ``openalex``,
``crossref``...);
``SCHEMA_VERSION`` is stored in every table's metadata and in ``manifest.json``.
"""

from __future__ import annotations

from typing import Any, Literal

import pyarrow as pa

SCHEMA_VERSION = 1

RecordKind = Literal["paper", "reference", "references", "context"]
Record = tuple[RecordKind, dict[str, Any]]


def reference_rows(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``reference`` records of a ``references`` block: list values are columns, one item a
    reference; other values are shared.

    >>> for row in reference_rows({"citing": "doi:10.1/a", "position": [0, 2],
    ...                            "ref_id": ["W1", "W3"]}):
    ...     print(row)
    {'citing': 'doi:10.1/a', 'position': 0, 'ref_id': 'W1'}
    {'citing': 'doi:10.1/a', 'position': 2, 'ref_id': 'W3'}
    """
    shared = {name: value for name, value in block.items() if type(value) is not list}
    columns = {name: value for name, value in block.items() if type(value) is list}
    rows = zip(*columns.values(), strict=True)
    return [shared | dict(zip(columns, row, strict=True)) for row in rows]

_strings = pa.list_(pa.string())
TRANSLATION = pa.struct(
    [
        ("language", pa.string()),
        ("title", pa.string()),
        ("abstract", pa.string()),
        ("keywords", _strings),
    ]
)


def _schema(fields: list[tuple[str, pa.DataType]], table: str) -> pa.Schema:
    meta = {"openmsd.table": table, "openmsd.schema_version": str(SCHEMA_VERSION)}
    return pa.schema(fields, metadata=meta)


_PAPER_FIELDS: list[tuple[str, pa.DataType]] = [
    ("doi", pa.string()),
    ("title", pa.string()),
    ("abstract", pa.string()),
    ("declared_language", pa.string()),
    ("year", pa.int32()),
    ("venue", pa.string()),
    ("authors", _strings),
    ("keywords", _strings),
    ("categories", _strings),
    ("translations", pa.list_(TRANSLATION)),
    ("full_text", pa.string()),
    ("doc_type", pa.string()),
]
_REFERENCE_FIELDS: list[tuple[str, pa.DataType]] = [
    ("position", pa.int32()),
    ("ref_id", pa.string()),
    ("targets", _strings),
    ("title", pa.string()),
    ("authors", _strings),
    ("year", pa.int32()),
    ("venue", pa.string()),
    ("raw", pa.string()),
]

# Staged records: what one input contributed, in reader order (``seq``).
STAGED_PAPER = _schema(
    [("seq", pa.int64()), ("key", pa.string()), ("aliases", _strings), *_PAPER_FIELDS,
     ("source", pa.string()), ("loc", pa.string())],
    "staged_papers",
)
STAGED_REFERENCE = _schema(
    [("seq", pa.int64()), ("citing", pa.string()), *_REFERENCE_FIELDS,
     ("source", pa.string()), ("loc", pa.string())],
    "staged_references",
)
STAGED_CONTEXT = _schema(
    [("seq", pa.int64()), ("citing", pa.string()), ("ref_id", pa.string()),
     ("text", pa.string()), ("position", pa.int64()), ("source", pa.string()),
     ("loc", pa.string())],
    "staged_contexts",
)
STAGED = {"paper": STAGED_PAPER, "reference": STAGED_REFERENCE, "context": STAGED_CONTEXT}

# The corpus tables.
PAPERS = _schema(
    [("paper_id", pa.string()), *_PAPER_FIELDS[:3], ("abstract_source", pa.string()),
     ("language", pa.string()),
     ("language_confidence", pa.float32()), *_PAPER_FIELDS[3:],
     ("sources", _strings), ("aliases", _strings), ("kind", pa.string()),
     ("kind_reason", pa.string())],
    "papers",
)
REFERENCES = _schema(
    [("citing_id", pa.string()), *_REFERENCE_FIELDS, ("cited_id", pa.string()),
     ("resolution", pa.string()), ("source", pa.string())],
    "references",
)
CITATIONS = _schema(
    [("citing_id", pa.string()), ("cited_id", pa.string()), ("sources", _strings),
     ("resolution", pa.string())],
    "citations",
)
CONTEXTS = _schema(
    [("citing_id", pa.string()), ("cited_id", pa.string()), ("ref_id", pa.string()),
     ("text", pa.string()), ("position", pa.int64()), ("source", pa.string())],
    "contexts",
)
TABLES = {"papers": PAPERS, "references": REFERENCES, "citations": CITATIONS,
          "contexts": CONTEXTS}
