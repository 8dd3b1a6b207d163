"""Relations between papers: DC / CC / BC pairs, positives, Specter and SciNCL triples and the
OpenMSD split (Ibis on DuckDB or Spark).

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.relations.build import (
        DEFAULT_MAX_GROUP,
        RelationsConfig,
        RelationsError,
        derive,
        derive_tables,
        read_manifest,
        read_split,
        relations_dir,
        split_papers,
    )
    from openmsd.relations.engine import connect
    from openmsd.relations.pairs import bib_coupling, co_citations, direct_citations
    from openmsd.relations.positives import parse, positive_pairs
    from openmsd.relations.scincl import RandomProjectionEmbedder
    from openmsd.relations.specter import specter_triples
    from openmsd.relations.split import SPLITS, SplitConfig
    from openmsd.relations.stats import relations_stats, stats_view

_WHERE: dict[str, str] = {
    "DEFAULT_MAX_GROUP": "build",
    "RandomProjectionEmbedder": "scincl",
    "RelationsConfig": "build",
    "RelationsError": "build",
    "SPLITS": "split",
    "SplitConfig": "split",
    "bib_coupling": "pairs",
    "co_citations": "pairs",
    "connect": "engine",
    "derive": "build",
    "derive_tables": "build",
    "direct_citations": "pairs",
    "parse": "positives",
    "positive_pairs": "positives",
    "read_manifest": "build",
    "read_split": "build",
    "relations_dir": "build",
    "relations_stats": "stats",
    "split_papers": "build",
    "specter_triples": "specter",
    "stats_view": "stats",
}

__all__ = [
    "DEFAULT_MAX_GROUP", "SPLITS", "RandomProjectionEmbedder", "RelationsConfig", "RelationsError",
    "SplitConfig", "bib_coupling", "co_citations", "connect", "derive", "derive_tables",
    "direct_citations", "parse",
    "positive_pairs", "read_manifest", "read_split", "relations_dir", "relations_stats",
    "specter_triples", "split_papers", "stats_view",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
