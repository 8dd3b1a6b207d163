"""The English summaries of a corpus, per paper, method and length, beside its tables.

Layout::

    CORPUS/summaries/<method><length>/part-NNNNN.parquet   paper_id, source_hash, summary,
                                                           source, tokens, generated_tokens
    CORPUS/summaries/<method><length>/report.json          the last run's counts and failures

Each part is written atomically by one batch of a run, so an interrupted run keeps what it
finished. ``source_hash`` fingerprints the paper text a summary was made from (title,
abstract and the English version the source carries): a summary counts for a paper only while
that text is unchanged, and the newest part wins. ``source`` says who wrote it: ``author``
(the source's English version) or a generator (``gemma3-270m``, ``apertium``,
``http:<model>``). Failures are never written as summaries.

Vectors of enriched text are stored under a model name of their own,
:func:`enriched_name` (``e5-small-multilingual+llm64``); :func:`summaries_for_model` gives the
summaries such a name stands for (none for a plain model name).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection
from pathlib import Path

import duckdb
import pyarrow as pa

from openmsd.corpus.layout import PARTS
from openmsd.corpus.store import Corpus
from openmsd.io import ParquetSink, arrow_table, parquet_list

METHODS = ("author", "topn", "llm")
LENGTHS = (64, 128)
SCHEMA = pa.schema([("paper_id", pa.string()), ("source_hash", pa.string()),
                    ("summary", pa.string()), ("source", pa.string()),
                    ("tokens", pa.int32()), ("generated_tokens", pa.int32())],
                   metadata={"openmsd.table": "summaries"})
_VARIANT = rf"(?P<method>{'|'.join(METHODS)})(?P<length>\d+)"
_ENRICHED = re.compile(rf"^(?P<model>.+)\+{_VARIANT}$")
_SPELLED = re.compile(rf"(?P<method>{'|'.join(METHODS)})-?(?P<length>\d+)")
"""A variant as users write it: ``llm64`` or ``llm-64``."""


def summaries_dir(corpus: Corpus, method: str, length: int) -> Path:
    return corpus.layout.summaries / f"{method}{length}"


def enriched_name(model: str, method: str, length: int) -> str:
    """The model name enriched vectors are stored under: ``MODEL+METHODLENGTH``."""
    return f"{model}+{method}{length}"


def parse_enriched(name: str) -> tuple[str, str, int] | None:
    """``(model, method, length)`` of an :func:`enriched_name`, None for any other name.

    >>> parse_enriched("e5-small-multilingual+llm64")
    ('e5-small-multilingual', 'llm', 64)
    >>> parse_enriched("muse-v3") is None
    True
    """
    match = _ENRICHED.match(name)
    if not match:
        return None
    return match["model"], match["method"], int(match["length"])


def source_hash(title: str | None, abstract: str | None, en_title: str | None,
                en_abstract: str | None) -> str:
    """Fingerprint of the text a summary is made from."""
    text = "\x1f".join(part or "" for part in (title, abstract, en_title, en_abstract))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_papers(corpus: Corpus, paper_ids: Collection[str] | None = None) -> pa.Table:
    """``paper_id``, ``language``, ``title``, ``abstract``, ``en_title``, ``en_abstract`` (the
    English version the source carries, if any) and ``source_hash`` of every paper (or of
    ``paper_ids``), by id."""
    con = corpus.connect()
    where = ""
    if paper_ids is not None:
        con.register("chosen", pa.table({"paper_id": pa.array(sorted(paper_ids), pa.string())}))
        where = "WHERE paper_id IN (SELECT paper_id FROM chosen)"
    table = arrow_table(con, f"""
        WITH english AS (
            SELECT paper_id, language, title, abstract,
                   list_filter(translations, lambda t: t.language = 'en')[1] AS en
            FROM papers {where})
        SELECT paper_id, language, title, abstract,
               nullif(trim(en.title), '') AS en_title, nullif(trim(en.abstract), '') AS en_abstract
        FROM english ORDER BY paper_id""")
    hashes = [source_hash(*row) for row in zip(
        *(table[c].to_pylist() for c in ("title", "abstract", "en_title", "en_abstract")),
        strict=True)]
    return table.append_column("source_hash", pa.array(hashes, pa.string()))


def read_summaries(corpus: Corpus, method: str, length: int) -> pa.Table:
    """Every stored summary of ``method`` / ``length``, the newest per paper."""
    directory = summaries_dir(corpus, method, length)
    parts = sorted(directory.glob(PARTS))
    if not parts:
        return SCHEMA.empty_table()
    return duckdb.sql(f"""
        SELECT * EXCLUDE (filename) FROM read_parquet({parquet_list(parts)}, filename = true)
        QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY filename DESC) = 1
        ORDER BY paper_id""").to_arrow_table().cast(SCHEMA)


def current_summaries(corpus: Corpus, method: str, length: int,
                      papers: pa.Table | None = None) -> dict[str, str]:
    """``paper_id → summary`` for the papers whose text is still the one summarised."""
    papers = papers if papers is not None else read_papers(corpus)
    current = dict(zip(papers["paper_id"].to_pylist(), papers["source_hash"].to_pylist(),
                       strict=True))
    stored = read_summaries(corpus, method, length)
    return {paper: summary for paper, digest, summary in zip(
        stored["paper_id"].to_pylist(), stored["source_hash"].to_pylist(),
        stored["summary"].to_pylist(), strict=True) if current.get(paper) == digest}


def write_summaries(corpus: Corpus, method: str, length: int, rows: list[dict]) -> Path | None:
    """Append ``rows`` (the :data:`SCHEMA` columns) as a new part, atomically."""
    if not rows:
        return None
    directory = summaries_dir(corpus, method, length)
    directory.mkdir(parents=True, exist_ok=True)
    parts = sorted(directory.glob(PARTS))
    number = int(parts[-1].stem.split("-")[1]) + 1 if parts else 0
    target = directory / f"part-{number:05d}.parquet"
    with ParquetSink(target, SCHEMA) as sink:
        sink.write_rows(rows)
    return target


def parse_variant(variant: str) -> tuple[str, int]:
    """``(method, length)`` of an enrichment variant, written ``author64`` or ``author-64``
    (the one parser of both spellings); ``ValueError`` naming the expected form for anything
    else.

    >>> parse_variant("topn128")
    ('topn', 128)
    >>> parse_variant("llm-64")
    ('llm', 64)
    """
    match = _SPELLED.fullmatch(variant)
    if not match or int(match["length"]) not in LENGTHS:
        raise ValueError(f"unknown enrichment {variant!r}: expected METHODLENGTH or "
                         f"METHOD-LENGTH with a method "
                         f"of {', '.join(METHODS)} and a length of "
                         f"{', '.join(map(str, LENGTHS))} (e.g. author64)")
    return match["method"], int(match["length"])


def variant_summaries(corpus: Corpus, method: str, length: int) -> dict[str, str]:
    """The current ``method``/``length`` summaries by paper id; :class:`FileNotFoundError`
    when that method and length were never run."""
    if not any(summaries_dir(corpus, method, length).glob(PARTS)):
        raise FileNotFoundError(f"{corpus.root}: no {method}{length} summaries; run "
                                f"'openmsd enrich {corpus.root} --method {method} "
                                f"--length {length}' first")
    return current_summaries(corpus, method, length)


def summaries_for_model(corpus: Corpus, name: str) -> dict[str, str]:
    """The summaries an :func:`enriched_name` embeds (empty for a plain model name);
    :class:`FileNotFoundError` when that method and length were never run."""
    parsed = parse_enriched(name)
    if parsed is None:
        return {}
    return variant_summaries(corpus, parsed[1], parsed[2])
