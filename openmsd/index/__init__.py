"""FAISS indexes of paper vectors with language / year filters: flat, HNSW and any factory
string (IVF-PQ), each build a directory switched into place in one rename.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
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

_WHERE: dict[str, str] = {
    "FactoryParams": "factory_index",
    "HNSW_THRESHOLD": "vector_index",
    "META": "vector_index",
    "VectorIndex": "vector_index",
    "build_factory_index": "vector_index",
    "build_index": "vector_index",
    "index_dir": "vector_index",
    "index_kind": "vector_index",
    "load_index": "vector_index",
    "new_index": "vector_index",
    "parquet_batches": "factory_index",
    "publish_factory": "vector_index",
    "search_factory": "factory_index",
}

__all__ = [
    "HNSW_THRESHOLD", "META", "FactoryParams", "VectorIndex", "build_factory_index", "build_index",
    "index_dir", "index_kind", "load_index", "new_index", "parquet_batches", "publish_factory",
    "search_factory",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
