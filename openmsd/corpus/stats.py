"""Corpus statistics in the shape of OpenMSD's Table 1.

Papers (with abstract, with full text, with citation links) per detected language, and citation
links between corpus papers by language direction. A paper whose language could not be
identified counts as non-English in the directions and as ``und`` in ``languages``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Group
from rich.table import Table

from openmsd.corpus.build import LINKED
from openmsd.corpus.corpus_kinds import non_papers
from openmsd.corpus.store import Corpus

DIRECTIONS = ["en->en", "en->non-en", "non-en->en", "non-en->non-en"]

_PER_LANGUAGE = """
WITH linked AS (SELECT citing_id AS paper_id FROM citations
                UNION SELECT cited_id FROM citations)
SELECT coalesce(p.language, 'und') AS language, count(*) AS papers,
       count(*) FILTER (WHERE p.abstract IS NOT NULL) AS with_abstract,
       count(*) FILTER (WHERE p.full_text IS NOT NULL) AS with_full_text,
       count(l.paper_id) AS with_citations
FROM papers p LEFT JOIN linked l USING (paper_id)
GROUP BY ALL ORDER BY papers DESC, language
"""

_DIRECTIONS = """
SELECT (CASE WHEN a.language = 'en' THEN 'en' ELSE 'non-en' END) || '->' ||
       (CASE WHEN b.language = 'en' THEN 'en' ELSE 'non-en' END) AS direction, count(*)
FROM citations c JOIN papers a ON a.paper_id = c.citing_id JOIN papers b ON b.paper_id = c.cited_id
GROUP BY ALL
"""


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    """All statistics of a corpus as one JSON object (the ``corpus stats --json`` contract)."""
    con = corpus.connect()
    rows = con.execute(_PER_LANGUAGE).fetchall()
    per_language = {lang: {"papers": n, "with_abstract": a, "with_full_text": f,
                           "with_citations": c} for lang, n, a, f, c in rows}
    directions = dict.fromkeys(DIRECTIONS, 0) | dict(con.execute(_DIRECTIONS).fetchall())
    resolutions = dict(con.execute(
        "SELECT resolution, count(*) FROM \"references\" GROUP BY ALL ORDER BY ALL").fetchall())
    contexts, contexts_resolved = con.execute(
        "SELECT count(*), count(cited_id) FROM contexts").fetchone()
    citations_by_resolution = dict(con.execute(
        "SELECT resolution, count(*) FROM citations GROUP BY ALL ORDER BY ALL").fetchall())
    con.close()
    left_out = Counter(non_papers(corpus).values())

    def total(field: str) -> int:
        return sum(v[field] for v in per_language.values())

    return {
        "papers": total("papers"),
        "papers_with_abstract": total("with_abstract"),
        "papers_with_full_text": total("with_full_text"),
        "papers_with_citations": total("with_citations"),
        "languages": {lang: v["papers"] for lang, v in per_language.items()},
        "per_language": per_language,
        "citations": sum(directions.values()),
        "citations_by_direction": directions,
        "citations_by_resolution": citations_by_resolution,
        "references": sum(resolutions.values()),
        "references_resolved": sum(resolutions.get(k, 0) for k in LINKED),
        "references_by_resolution": resolutions,
        "contexts": contexts,
        "contexts_resolved": contexts_resolved,
        "non_papers": dict(left_out.most_common()),
    }


def table1_rows(stats: dict[str, Any]) -> list[tuple[str, int, int, int, int]]:
    """Rows (group, papers, with abstract, with full text, with citations): En, non-En, total."""
    groups: dict[str, list[int]] = {"English": [0, 0, 0, 0], "non-English": [0, 0, 0, 0]}
    for lang, v in stats["per_language"].items():
        row = groups["English" if lang == "en" else "non-English"]
        for i, key in enumerate(("papers", "with_abstract", "with_full_text", "with_citations")):
            row[i] += v[key]
    total = [sum(col) for col in zip(*groups.values(), strict=True)]
    return [(name, *vals) for name, vals in [*groups.items(), ("total", total)]]  # type: ignore[misc]


def stats_view(stats: dict[str, Any]) -> Group:
    """:func:`corpus_stats` for a terminal: Table 1, languages, citation links by direction,
    then a line on references and contexts."""
    table1 = Table(title="Papers (OpenMSD Table 1)")
    for column in ("", "papers", "with abstract", "with full text", "with citations"):
        table1.add_column(column, justify="right" if column else "left")
    for name, *values in table1_rows(stats):
        table1.add_row(name, *(f"{v:,}" for v in values))
    languages = Table(title="Languages")
    for column in ("language", "papers", "with abstract", "with citations"):
        languages.add_column(column, justify="left" if column == "language" else "right")
    for lang, v in stats["per_language"].items():
        languages.add_row(lang, f"{v['papers']:,}", f"{v['with_abstract']:,}",
                          f"{v['with_citations']:,}")
    links = Table(title="Citation links")
    links.add_column("direction")
    links.add_column("pairs", justify="right")
    for direction, n in stats["citations_by_direction"].items():
        links.add_row(direction, f"{n:,}")
    by_resolution = ", ".join(f"{k} {v:,}" for k, v in stats["references_by_resolution"].items())
    kinds = stats.get("non_papers") or {}
    return Group(table1, languages, links,
                 f"references: {stats['references']:,}, resolved to corpus papers: "
                 f"{stats['references_resolved']:,} ({by_resolution}); contexts: "
                 f"{stats['contexts']:,} ({stats['contexts_resolved']:,} with the cited paper "
                 "in the corpus)",
                 f"records that are not papers: {sum(kinds.values()):,}"
                 + (f" ({', '.join(f'{k} {v:,}' for k, v in kinds.items())}; left out of "
                    "related, search, watch and recommend)" if kinds else ""))


def build_summary(root: object, counts: dict[str, int]) -> str:
    """One line (Rich markup) on a corpus build's ``counts``: papers, references and how they
    resolved, citations, contexts."""
    resolved = sum(counts.get(f"references.{k}", 0) for k in LINKED)
    return (f"[bold]{root}[/]: {counts['papers']:,} papers, {counts['references']:,} "
            f"references ({resolved:,} resolved to corpus papers, "
            f"{counts.get('references.unresolved', 0):,} to papers outside the corpus, "
            f"{counts.get('references.citing-unknown', 0):,} from papers outside it), "
            f"{counts['citations']:,} citations, {counts['contexts']:,} contexts")
