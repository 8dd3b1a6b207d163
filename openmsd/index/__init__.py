"""FAISS indexes of paper vectors with language / year filters: flat, HNSW and any factory
string (IVF-PQ), each build a directory switched into place in one rename.
"""

from openmsd.index.factory_index import FactoryParams, parquet_batches, search_factory
from openmsd.index.vector_index import (
    HNSW_THRESHOLD,
    META,
    VectorIndex,
    build_factory_index,
    build_index,
    index_dir,
    index_kind,
    load_index,
    new_index,
    publish_factory,
)

__all__ = [
    "HNSW_THRESHOLD", "META", "FactoryParams", "VectorIndex", "build_factory_index", "build_index",
    "index_dir", "index_kind", "load_index", "new_index", "parquet_batches", "publish_factory",
    "search_factory",
]
