"""``openmsd relations CORPUS``: derive DC/CC/BC, the split, positives and Specter triples.

Reads ``papers.parquet`` and ``citations.parquet`` of a corpus and writes, in
``CORPUS/relations/``:

* ``dc.parquet`` (``citing_id``, ``cited_id``), ``cc.parquet`` and ``bc.parquet``
  (``paper_a``, ``paper_b``, ``count``) over the whole citation graph;
* ``splits.parquet`` (``paper_id``, ``language``, ``split``);
* ``pairs.parquet``: every DC/CC/BC pair whose papers share a split (``relation``, ``paper_a``,
  ``paper_b``, ``count``, ``split``, ``language_a``, ``language_b``; DC keeps its direction);
* ``specter.parquet``: Specter triples of the train split;
* ``scincl.parquet``: SciNCL triples of the train split (citation-graph embedding neighbours);
* ``relations.json``: the parameters, the engine, the corpus build and the counts.

On Spark each ``.parquet`` is a directory of part files. Files are replaced only once written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import ibis
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from ibis import _

from openmsd.corpus import RELATIONS_MANIFEST, Corpus
from openmsd.io import ParquetSink, write_json
from openmsd.relations.engine import Engine
from openmsd.relations.pairs import (
    bib_coupling,
    capped_groups,
    citation_problems,
    co_citations,
    direct_citations,
)
from openmsd.relations.scincl import scincl_triples
from openmsd.relations.specter import specter_triples
from openmsd.relations.split import SplitConfig, assign_splits, pairs_in_splits

DEFAULT_MAX_GROUP = 256


class RelationsError(ValueError):
    """Relations asked of a corpus that cannot give them."""


@dataclass(frozen=True)
class RelationsConfig:
    """What the relations are derived with (stored in ``relations.json``)."""

    max_group: int | None = DEFAULT_MAX_GROUP
    seed: int = 0
    split: SplitConfig = field(default_factory=SplitConfig)
    samples_per_query: int = 5
    ratio_hard: float = 0.3
    scincl: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "split": self.split.as_dict()}


def relations_dir(corpus: Corpus) -> Path:
    return corpus.layout.relations


def all_pairs(dc: ibis.Table, cc: ibis.Table, bc: ibis.Table) -> ibis.Table:
    """The three relations in one table: ``relation``, ``paper_a``, ``paper_b``, ``count``."""
    return ibis.union(
        dc.select(relation=ibis.literal("dc"), paper_a=_.citing_id, paper_b=_.cited_id,
                  count=ibis.literal(1, "int64")),
        cc.select(relation=ibis.literal("cc"), paper_a=_.paper_a, paper_b=_.paper_b,
                  count=_["count"].cast("int64")),
        bc.select(relation=ibis.literal("bc"), paper_a=_.paper_a, paper_b=_.paper_b,
                  count=_["count"].cast("int64")),
    )


def derive_tables(engine: Engine, papers_path: str | Path, citations_path: str | Path,
                  out: str | Path, config: RelationsConfig) -> dict[str, Any]:
    """Write every relations table from a papers and a citations Parquet table into ``out``
    (a local directory or an object-store URI); return the problems and counts."""
    out = str(out).rstrip("/")
    papers = engine.read(papers_path).select("paper_id", "language")
    citations = engine.read(citations_path)
    problems = engine.to_arrow(citation_problems(citations, papers)).to_pylist()[0]
    paper_count = int(engine.to_arrow(papers.aggregate(n=_.count()))["n"][0].as_py())
    if paper_count == 0:
        raise RelationsError(f"{papers_path}: the corpus has no papers")

    def path(name: str) -> str:
        return f"{out}/{name}.parquet"

    counts: dict[str, int] = {}
    counts["dc"] = engine.write(direct_citations(citations, papers), path("dc"))
    dc = engine.read(path("dc"))
    capped: dict[str, dict[str, int]] = {}
    if config.max_group is not None:
        for relation, group in (("cc", "citing_id"), ("bc", "cited_id")):
            row = engine.to_arrow(capped_groups(dc, group, config.max_group)).to_pylist()[0]
            capped[relation] = {k: int(v or 0) for k, v in row.items()}
    counts["cc"] = engine.write(co_citations(dc, config.max_group, config.seed), path("cc"))
    counts["bc"] = engine.write(bib_coupling(dc, config.max_group, config.seed), path("bc"))
    counts["papers_linked"] = engine.write(assign_splits(papers, dc, config.split),
                                           path("splits"))
    splits = engine.read(path("splits"))
    pairs = all_pairs(dc, engine.read(path("cc")), engine.read(path("bc")))
    counts["pairs_in_splits"] = engine.write(
        pairs_in_splits(pairs, splits, "paper_a", "paper_b", config.split.drop_en_en),
        path("pairs"))
    train = engine.read(path("pairs")).filter(_.split == "train")
    train_dc = train.filter(_.relation == "dc").select(citing_id=_.paper_a, cited_id=_.paper_b)
    pool = splits.filter(_.split == "train").select("paper_id")
    counts["specter_triples"] = engine.write(
        specter_triples(train_dc, pool, samples_per_query=config.samples_per_query,
                        ratio_hard=config.ratio_hard, seed=config.seed),
        path("specter"))
    return {"engine": engine.name, "config": config.as_dict(), "papers": paper_count,
            "citation_problems": {k: int(v or 0) for k, v in problems.items()},
            "capped": capped, "counts": counts}


def derive(corpus: Corpus, engine: Engine, config: RelationsConfig | None = None
           ) -> dict[str, Any]:
    """Write every relations table of ``corpus`` beside it with ``engine``; return the
    manifest (also written as ``relations/relations.json``)."""
    build = corpus.check()["build"]["id"]
    out = relations_dir(corpus)
    out.mkdir(exist_ok=True)
    config = config or RelationsConfig()
    result = derive_tables(engine, corpus.table_path("papers"), corpus.table_path("citations"),
                           out, config)
    if config.scincl:
        result["scincl"] = write_scincl(out)
    result = {"corpus_build": build, **result}
    write_json(out / RELATIONS_MANIFEST, result)
    return result


def write_scincl(out: Path) -> dict[str, Any]:
    """SciNCL triples of the train split (``scincl.parquet``), with SciNCL's published rank
    windows: 5 positives at ranks 20-25, 2 hard negatives near rank 4000, 3 easy ones (scaled
    down on small graphs; the windows used are returned). The graph embedding runs on one
    machine, whichever engine derived the pairs."""
    pairs = ds.dataset(str(out / "pairs.parquet"), format="parquet").to_table(
        filter=(pc.field("split") == "train") & (pc.field("relation") == "dc"),
        columns=["paper_a", "paper_b"])
    links = pa.table({"citing_id": pairs["paper_a"], "cited_id": pairs["paper_b"]})
    found = scincl_triples(links, positive_ranks=(20, 25), negative_ranks=(3998, 4000),
                           easy_negatives=3)
    with ParquetSink(out / "scincl.parquet", found.triples.schema) as sink:
        sink.write(found.triples)
    return {"triples": found.triples.num_rows, **asdict(found.params)}


def read_split(corpus: Corpus, name: str) -> pa.Table:
    """The papers of split ``name`` (``train``, ``dev``, ``idt``, ``odt``; ``test`` is ``idt``
    + ``odt``) of ``corpus``'s relations: ``paper_id``, ``language``, ``split``, in file order.
    :class:`RelationsError` when there are no relations or no such split, naming those there are.
    """
    path = relations_dir(corpus) / "splits.parquet"
    if not path.exists():
        raise RelationsError(f"{corpus.root}: no relations; run 'openmsd relations "
                             f"{corpus.root}'")
    table = pq.read_table(path, columns=["paper_id", "language", "split"])
    names = ["idt", "odt"] if name == "test" else [name]
    known = sorted(set(table["split"].to_pylist()))
    if not known:  # no paper has a citation link: nothing to split
        raise RelationsError(f"{corpus.root}: no split {name!r}; the relations split no paper: "
                             "no two papers of the corpus are linked by a citation (ingest the "
                             "papers its references point to, or their reference lists)")
    if not set(names) <= set(known):
        raise RelationsError(f"{corpus.root}: no split {name!r}; the relations have "
                             f"{', '.join(known)} (and 'test' = idt + odt)")
    return table.filter(pc.is_in(table["split"], pa.array(names)))


def split_papers(corpus: Corpus, split: str) -> list[str]:
    """The paper ids of a split of ``openmsd relations`` (``test`` = ``idt`` + ``odt``), in
    file order; :class:`RelationsError` as :func:`read_split`."""
    return read_split(corpus, split)["paper_id"].to_pylist()


def read_manifest(corpus: Corpus) -> dict[str, Any]:
    """The relations manifest; :class:`RelationsError` naming the command to run if absent."""
    build = corpus.check()["build"]["id"]
    path = corpus.layout.relations_manifest
    if not path.exists():
        raise RelationsError(f"{corpus.root}: no relations yet; run 'openmsd relations "
                             f"{corpus.root}' first")
    manifest = orjson.loads(path.read_bytes())
    if manifest["corpus_build"] != build:
        raise RelationsError(f"{path}: derived from an earlier build of the corpus; run "
                             f"'openmsd relations {corpus.root}' again")
    return manifest
