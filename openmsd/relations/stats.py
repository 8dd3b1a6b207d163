"""``openmsd relations stats``: OpenMSD's Table 3 for a corpus.

Pairs per relation, per split and per language direction (DC is directed: ``en->non-en``; CC
and BC are not: ``en<->non-en``), papers and languages per split, and the totals over the whole
graph. Reads the files :mod:`openmsd.relations.build` wrote (from either engine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
from rich.console import Group
from rich.table import Table

from openmsd.corpus import Corpus
from openmsd.io import parquet_list
from openmsd.relations.build import read_manifest, relations_dir
from openmsd.relations.split import SPLITS

DC_DIRECTIONS = ("en->en", "en->non-en", "non-en->en", "non-en->non-en")
UNDIRECTED = ("en<->en", "en<->non-en", "non-en<->non-en")


def parquet_source(path: Path) -> str:
    """A DuckDB ``read_parquet`` argument for a Parquet file or a directory of parts."""
    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    return f"read_parquet({parquet_list(files)})"


_BY_DIRECTION = """
SELECT split, relation,
  CASE WHEN relation = 'dc' THEN
    (CASE WHEN language_a = 'en' THEN 'en' ELSE 'non-en' END) || '->' ||
    (CASE WHEN language_b = 'en' THEN 'en' ELSE 'non-en' END)
  ELSE
    CASE WHEN language_a = 'en' AND language_b = 'en' THEN 'en<->en'
         WHEN language_a = 'en' OR language_b = 'en' THEN 'en<->non-en'
         ELSE 'non-en<->non-en' END
  END AS direction, count(*) AS n
FROM {pairs} GROUP BY ALL
"""


def relations_stats(corpus: Corpus) -> dict[str, Any]:
    """Table 3 as one JSON object: ``dc``, ``cc``, ``bc`` (pairs over the whole graph) and
    ``splits`` (split -> papers, languages, and per relation its pairs and directions)."""
    manifest = read_manifest(corpus)
    root = relations_dir(corpus)
    con = duckdb.connect()
    papers = con.execute(f"""SELECT split, language, count(*) FROM
                             {parquet_source(root / 'splits.parquet')} GROUP BY ALL""").fetchall()
    directions = con.execute(
        _BY_DIRECTION.format(pairs=parquet_source(root / "pairs.parquet"))).fetchall()
    con.close()
    splits: dict[str, Any] = {}
    for name in SPLITS:
        languages = {lang: n for split, lang, n in papers if split == name}
        entry: dict[str, Any] = {"papers": sum(languages.values()),
                                 "languages": dict(sorted(languages.items(),
                                                          key=lambda kv: (-kv[1], kv[0])))}
        for relation in ("dc", "cc", "bc"):
            keys = DC_DIRECTIONS if relation == "dc" else UNDIRECTED
            by = dict.fromkeys(keys, 0) | {d: n for s, r, d, n in directions
                                           if s == name and r == relation}
            entry[relation] = {"pairs": sum(by.values()), "by_direction": by}
        splits[name] = entry
    counts = manifest["counts"]
    return {"dc": counts["dc"], "cc": counts["cc"], "bc": counts["bc"], "splits": splits,
            "max_group": manifest["config"]["max_group"], "engine": manifest["engine"],
            "citation_problems": manifest["citation_problems"],
            "specter_triples": counts["specter_triples"],
            "scincl_triples": manifest.get("scincl", {}).get("triples", 0)}


RELATION_WORDS = {"dc": "cites (DC)", "cc": "co-cited (CC)", "bc": "shared references (BC)"}
"""Each relation in words, with the short name OpenMSD gives it."""
SPLIT_WORDS = {
    "train": "train: papers to learn from",
    "dev": "dev: held out to tune on",
    "idt": "idt: in-distribution test (the main languages)",
    "odt": "odt: out-of-distribution test (held-out non-English papers)",
}
"""What each split of the OpenMSD split is for."""


def stats_view(stats: dict[str, Any]) -> Group:
    """:func:`relations_stats` for a terminal: OpenMSD's Table 3 (pairs per relation, language
    direction and split) with the relations and splits named in words, then a line on the
    whole graph and one on the training triples."""
    table = Table(title=f"Related pairs per split (OpenMSD Table 3; cap "
                        f"{stats['max_group'] or 'none'}, engine {stats['engine']})",
                  caption="cites (DC): one paper cites the other; co-cited (CC): a third "
                          "paper cites both; shared references (BC): both cite a third paper. "
                          + "; ".join(SPLIT_WORDS[s] for s in SPLITS) + ".")
    table.add_column("relation")
    table.add_column("direction", no_wrap=True)
    for split in SPLITS:
        table.add_column(f"{split} ({stats['splits'][split]['papers']:,} papers)",
                         justify="right")
    for relation in ("dc", "cc", "bc"):
        directions = stats["splits"]["train"][relation]["by_direction"]
        for i, direction in enumerate(directions):
            table.add_row(RELATION_WORDS[relation] if i == 0 else "", direction,
                          *(f"{stats['splits'][s][relation]['by_direction'][direction]:,}"
                            for s in SPLITS))
    return Group(table,
                 f"whole graph: {stats['dc']:,} citations between corpus papers (DC), "
                 f"{stats['cc']:,} co-cited pairs (CC), {stats['bc']:,} pairs with shared "
                 "references (BC)",
                 f"training triples (a paper, a related one, an unrelated one): "
                 f"{stats['specter_triples']:,} Specter-style (related: cited), "
                 f"{stats['scincl_triples']:,} SciNCL-style (related: a near neighbour in "
                 "the citation graph)")
