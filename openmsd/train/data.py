"""Training examples of each recipe, as tables of texts (``anchor``, ``positive``[, ``negative``]).

* ``pretrain-cl`` (OpenMSD §4, the mT5-CL recipe): two snippets of 10–256 tokens from the same
  paper's abstract and full text form a positive pair; papers of the dev and test splits are
  left out (their texts are what the evaluation ranks).
* ``mspt`` (§5): the positive pairs of a set of :mod:`openmsd.relations.positives` in the train
  split (both directions), each with a Specter-style negative: a partner of a partner that is
  not a partner (hard), or a random train paper (easy).
* ``specter``: the Specter triples ``openmsd relations`` wrote (DC positives).
* ``scincl``: the SciNCL triples ``openmsd relations`` wrote (graph-embedding neighbours).

Every function takes the corpus and returns a :class:`pyarrow.Table` of paper texts in the
paper format (:func:`openmsd.models.formatting.paper_input`), plus counts of what was left out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import ibis
import pyarrow as pa
import pyarrow.parquet as pq
from ibis import _

from openmsd.corpus.store import Corpus
from openmsd.io import arrow_table
from openmsd.models.formatting import paper_input
from openmsd.relations.build import relations_dir
from openmsd.relations.positives import positive_pairs
from openmsd.relations.specter import specter_triples


class TrainingDataError(ValueError):
    """No example can be built: missing relations, an empty positive set, no text."""


@dataclass
class Examples:
    """The examples and what was left out on the way, by reason."""

    table: pa.Table
    left_out: dict[str, int] = field(default_factory=dict)


def _relations_file(corpus: Corpus, name: str) -> str:
    path = relations_dir(corpus) / f"{name}.parquet"
    if not path.exists():
        raise TrainingDataError(f"{corpus.root}: no {path.name}; run 'openmsd relations "
                                f"{corpus.root}' first")
    return str(path)


def paper_texts(corpus: Corpus, where: str = "true",
                summaries: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{paper_id: title + abstract}`` of the papers matching the SQL condition ``where``
    (on ``papers``), with the English summary of ``summaries`` (by paper id) when it has one;
    papers with neither title nor abstract are left out."""
    summaries = summaries or {}
    rows = arrow_table(corpus.connect(), f"SELECT paper_id, title, abstract FROM papers "
                                         f"WHERE {where}")
    texts = {}
    for paper, title, abstract in zip(rows["paper_id"].to_pylist(), rows["title"].to_pylist(),
                                      rows["abstract"].to_pylist(), strict=True):
        text = paper_input(title, abstract, summaries.get(paper))
        if text:
            texts[paper] = text
    return texts


def _texts(rows: pa.Table, texts: dict[str, str], columns: dict[str, str]) -> Examples:
    """Rows of paper ids (``columns``: id column -> text column) as rows of texts, in id order
    (a query engine's row order is not, and a seeded run must see the same examples in the same
    order); rows naming a paper without text are left out and counted."""
    rows = rows.sort_by([(column, "ascending") for column in columns])
    ids = {text_column: rows[id_column].to_pylist() for id_column, text_column in
           columns.items()}
    keep = [all(ids[c][i] in texts for c in ids) for i in range(rows.num_rows)]
    table = pa.table({c: [texts[p] for p, k in zip(values, keep, strict=True) if k]
                      for c, values in ids.items()})
    return Examples(table, {"paper_without_text": keep.count(False)})


def _test_papers(corpus: Corpus) -> set[str]:
    splits = pq.read_table(_relations_file(corpus, "splits"), columns=["paper_id", "split"])
    return {p for p, s in zip(splits["paper_id"].to_pylist(), splits["split"].to_pylist(),
                              strict=True) if s != "train"}


def snippet_pairs(corpus: Corpus, tokenize: Callable[[str], list[str]],
                  detokenize: Callable[[list[str]], str], min_tokens: int = 10,
                  max_tokens: int = 256, per_paper: int = 2, seed: int = 0) -> Examples:
    """``pretrain-cl``: ``per_paper`` pairs of snippets per paper from its abstract and full
    text (each ``min_tokens``–``max_tokens`` long, by the model's own tokenizer), for every
    paper outside the dev and test splits with at least ``2 × min_tokens`` tokens."""
    held_out = _test_papers(corpus)
    rows = arrow_table(corpus.connect(), "SELECT paper_id, abstract, full_text FROM papers "
                                         "ORDER BY paper_id")
    rng = random.Random(seed)
    anchors, positives = [], []
    left_out = {"dev_or_test_paper": 0, "too_short": 0}
    for paper, abstract, full_text in zip(rows["paper_id"].to_pylist(),
                                          rows["abstract"].to_pylist(),
                                          rows["full_text"].to_pylist(), strict=True):
        if paper in held_out:
            left_out["dev_or_test_paper"] += 1
            continue
        tokens = tokenize(" ".join(t for t in (abstract, full_text) if t))
        if len(tokens) < 2 * min_tokens:
            left_out["too_short"] += 1
            continue
        for _pair in range(per_paper):
            snippets = []
            for _side in range(2):
                length = rng.randint(min_tokens, min(max_tokens, len(tokens)))
                start = rng.randint(0, len(tokens) - length)
                snippets.append(detokenize(tokens[start:start + length]))
            anchors.append(snippets[0])
            positives.append(snippets[1])
    return Examples(pa.table({"anchor": anchors, "positive": positives}), left_out)


def relation_examples(corpus: Corpus, positive_set: str, negatives: bool = True,
                      samples_per_query: int = 5, seed: int = 0,
                      summaries: Mapping[str, str] | None = None) -> Examples:
    """``mspt``: texts of the train split's positive pairs of ``positive_set`` (both
    directions), with a Specter-style negative each when ``negatives``; texts enriched with
    ``summaries`` when given."""
    con = ibis.duckdb.connect()
    pairs = con.read_parquet(_relations_file(corpus, "pairs")).filter(_.split == "train")
    positive = positive_pairs(pairs, positive_set, seed)
    links = ibis.union(positive.select(citing_id=_.paper_a, cited_id=_.paper_b),
                       positive.select(citing_id=_.paper_b, cited_id=_.paper_a))
    if positive.count().to_pyarrow().as_py() == 0:
        raise TrainingDataError(f"{corpus.root}: the positive set {positive_set!r} is empty in "
                                "the train split: choose another set (openmsd relations stats "
                                "shows the pairs per split)")
    texts = paper_texts(corpus, summaries=summaries)
    if not negatives:
        rows = links.select(query_id=_.citing_id, positive_id=_.cited_id).to_pyarrow()
        return _texts(rows, texts, {"query_id": "anchor", "positive_id": "positive"})
    pool = (con.read_parquet(_relations_file(corpus, "splits")).filter(_.split == "train")
            .select("paper_id"))
    rows = specter_triples(links, pool, samples_per_query=samples_per_query,
                           seed=seed).to_pyarrow()
    return _texts(rows, texts, {"query_id": "anchor", "positive_id": "positive",
                                "negative_id": "negative"})


def triple_examples(corpus: Corpus, name: str, negatives: bool = True,
                    summaries: Mapping[str, str] | None = None) -> Examples:
    """``specter`` / ``scincl``: the triples ``openmsd relations`` wrote to ``name.parquet``
    (texts enriched with ``summaries`` when given)."""
    rows = pq.read_table(_relations_file(corpus, name))
    if rows.num_rows == 0:
        raise TrainingDataError(f"{corpus.root}: {name}.parquet has no triples (too few "
                                "citation links in the train split)")
    columns = {"query_id": "anchor", "positive_id": "positive"}
    if negatives:
        columns["negative_id"] = "negative"
    return _texts(rows, paper_texts(corpus, summaries=summaries), columns)
