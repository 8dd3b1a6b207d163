"""Relations between papers: DC / CC / BC pairs, positives, Specter and SciNCL triples and the
OpenMSD split (Ibis on DuckDB or Spark).
"""

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

__all__ = [
    "DEFAULT_MAX_GROUP",
    "SPLITS",
    "RandomProjectionEmbedder",
    "RelationsConfig",
    "RelationsError",
    "SplitConfig",
    "bib_coupling",
    "co_citations",
    "connect",
    "derive",
    "derive_tables",
    "direct_citations",
    "parse",
    "positive_pairs",
    "read_manifest",
    "read_split",
    "relations_dir",
    "relations_stats",
    "specter_triples",
    "split_papers",
    "stats_view",
]
