"""``openmsd embed CORPUS --model M``: paper vectors stored beside the corpus, resumable.

Vectors are stored in the format of :mod:`openmsd.vectors` (one Parquet part per chunk
of papers, each written atomically). A paper is embedded only when no part holds its current
``(paper_id, text_hash)``: an interrupted run resumes where it stopped, and a paper whose title
or abstract did not change is never embedded twice. Papers with no text are counted and left
without a vector.

A model name ``MODEL+METHODLENGTH`` (``e5-small-multilingual+llm64``, see
:mod:`openmsd.corpus.summaries`) stores and loads vectors of the enriched text
``Title: ... Abstract: (English summary) ...`` of ``openmsd enrich``'s summaries.

Vectors are keyed by model *and* backend (:func:`openmsd.vectors.vector_key`):
``e5-small-multilingual`` holds the torch vectors, ``e5-small-multilingual@onnx-sq8`` those of
ONNX Runtime's int8 per-token build (the default), ``e5-small-multilingual@onnx-fp32`` its
float32 ones:
each backend is one build, never mixed with another in one store or index;
:func:`~openmsd.models.registry.choose_backend` re-uses what a corpus already has, so the
queries of a corpus are encoded as its vectors were.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from openmsd.corpus import PARTS, Corpus, corpus_lock, summaries_for_model
from openmsd.io import arrow_reader
from openmsd.models.encoder import DenseEncoder
from openmsd.models.formatting import paper_input
from openmsd.vectors import (
    known,
    missing_vectors,
    model_name,
    read_current,
    text_hash,
    vectors_dir,
    write_part,
)

CHUNK = 2048
MAX_TEXT_CHARS = 8192
"""A paper's text is cut to this many characters before tokenising: no model served reads
past 512 tokens, which is at most a few thousand characters of any language; the cut keeps a
50 MB abstract from costing gigabytes in the tokeniser."""


def embed_text(title: str | None, abstract: str | None, summary: str | None = None) -> str:
    """The text a paper is embedded from: :func:`paper_input`, cut to :data:`MAX_TEXT_CHARS`."""
    return paper_input(title and title[:MAX_TEXT_CHARS], abstract and abstract[:MAX_TEXT_CHARS],
                       summary)[:MAX_TEXT_CHARS]


BATCHES_PER_CALL = 8
"""Batches handed to the encoder in one call: enough for each of its threads to run several
(an ONNX encoder runs its batches on all cores at once), few enough for a lively progress bar."""


def encode_by_length(encoder: DenseEncoder, texts: list[str], batch_size: int = 32,
                     progress: Callable[[int], None] | None = None) -> np.ndarray:
    """One passage vector per text, in ``texts``' order. Texts are sorted by length (in
    characters) and handed to the encoder :data:`BATCHES_PER_CALL` batches at a time; the
    encoder batches them by its own token count. A batch is padded to its longest text, so
    batches of texts taken in corpus order spend most of a transformer's work on padding (2x
    the CPU of the same texts sorted, on real abstracts: docs/scale.md). ``progress`` gets the
    texts of each call. ``benchmarks/embedding_throughput.py`` times this function.

    >>> class Lengths:  # a stand-in encoder: each text's vector is its length
    ...     def encode(self, texts, kind, batch_size):
    ...         return np.array([[len(t)] for t in texts], np.float32)
    >>> encode_by_length(Lengths(), ["ccc", "a", "bb"], 1).ravel().tolist()
    [3.0, 1.0, 2.0]
    """
    order = np.argsort([len(text) for text in texts], kind="stable")
    step = batch_size * BATCHES_PER_CALL
    parts = []
    for start in range(0, len(order), step):
        rows = order[start:start + step]
        parts.append(encoder.encode([texts[i] for i in rows], "passage", batch_size))
        if progress:
            progress(len(rows))
    vectors = np.vstack(parts)
    vectors[order] = vectors.copy()
    return vectors


@dataclass
class EmbedResult:
    """What a run did: papers embedded now, already there, and without text."""

    model: str
    embedded: int
    cached: int
    no_text: int
    directory: str


def _papers(corpus: Corpus, paper_ids: Collection[str] | None = None
            ) -> Iterator[pa.RecordBatch]:
    """The papers (``paper_id``, ``title``, ``abstract``) in id order, or only ``paper_ids``."""
    con = corpus.connect()
    where = ""
    if paper_ids is not None:
        con.register("chosen", pa.table({"paper_id": pa.array(sorted(paper_ids), pa.string())}))
        where = "WHERE paper_id IN (SELECT paper_id FROM chosen)"
    yield from arrow_reader(con, f"SELECT paper_id, title, abstract FROM papers {where} "
                                 "ORDER BY paper_id", CHUNK)


def embed_corpus(corpus: Corpus, encoder: DenseEncoder, model: str | None = None,
                 batch_size: int = 32, progress: Callable[[int], None] | None = None,
                 paper_ids: Collection[str] | None = None) -> EmbedResult:
    """Embed every paper of ``corpus`` (or only those of ``paper_ids``) whose current text has
    no vector yet, holding the corpus's writer lock (:func:`openmsd.corpus.corpus_lock`: a
    second writer is refused at once, so two runs never write the same part)."""
    corpus.check()
    with corpus_lock(corpus.root, create=False):
        return _embed(corpus, encoder, model, batch_size, progress, paper_ids)


def _embed(corpus: Corpus, encoder: DenseEncoder, model: str | None, batch_size: int,
           progress: Callable[[int], None] | None, paper_ids: Collection[str] | None
           ) -> EmbedResult:
    name = model or encoder.name
    directory = vectors_dir(corpus, name)
    directory.mkdir(parents=True, exist_ok=True)
    known_pairs = known(directory)
    summaries = summaries_for_model(corpus, model_name(name))  # MODEL+METHODLENGTH: enriched
    next_part = len(list(directory.glob(PARTS)))
    embedded = cached = no_text = 0
    for batch in _papers(corpus, paper_ids):
        ids, texts, hashes = [], [], []
        for paper_id, title, abstract in zip(batch["paper_id"].to_pylist(),
                                             batch["title"].to_pylist(),
                                             batch["abstract"].to_pylist(), strict=True):
            text = embed_text(title, abstract, summaries.get(paper_id))
            if not text:
                no_text += 1
                continue
            digest = text_hash(text)
            if (paper_id, digest) in known_pairs:
                cached += 1
                continue
            ids.append(paper_id)
            texts.append(text)
            hashes.append(digest)
        if progress:
            progress(batch.num_rows - len(ids))
        if not ids:
            continue
        write_part(directory / f"part-{next_part:05d}.parquet", ids, hashes,
                   encode_by_length(encoder, texts, batch_size, progress))
        next_part += 1
        embedded += len(ids)
    return EmbedResult(name, embedded, cached, no_text, str(directory))


def load_vectors(corpus: Corpus, model: str) -> tuple[list[str], np.ndarray]:
    """The current vector of every paper (the newest part wins for a paper whose text changed;
    vectors of texts no longer in the corpus are left out): ids and a float32 matrix."""
    ids, _, matrix = load_vector_table(corpus, model)
    return ids, matrix


def current_hashes(corpus: Corpus, model: str) -> dict[str, str]:
    """The text hash of each paper's current text for ``model`` (papers without text left out):
    a vector is current when its hash is this one."""
    current = {}
    summaries = summaries_for_model(corpus, model_name(model))
    for batch in _papers(corpus):
        for paper_id, title, abstract in zip(batch["paper_id"].to_pylist(),
                                             batch["title"].to_pylist(),
                                             batch["abstract"].to_pylist(), strict=True):
            text = embed_text(title, abstract, summaries.get(paper_id))
            if text:
                current[paper_id] = text_hash(text)
    return current


def load_vector_table(corpus: Corpus, model: str) -> tuple[list[str], list[str], np.ndarray]:
    """:func:`load_vectors` with the text hash of each vector: ids, hashes, float32 matrix."""
    directory = vectors_dir(corpus, model)
    if not any(directory.glob(PARTS)):
        raise FileNotFoundError(missing_vectors(corpus, model))
    return read_current(directory, current_hashes(corpus, model))
