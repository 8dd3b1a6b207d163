"""Vectors: the keys a model's vectors and index are stored under, and the Parquet parts that
hold a corpus's paper vectors. Below the models, above the corpus: it knows no encoder."""

from openmsd.vectors.keys import (
    ADAPTER_FILE,
    BACKENDS,
    model_name,
    model_slug,
    split_vector_key,
    vector_key,
)
from openmsd.vectors.store import (
    known,
    missing_vectors,
    read_current,
    stored_backends,
    text_hash,
    vector_schema,
    vectors_dir,
    write_part,
)

__all__ = ["ADAPTER_FILE", "BACKENDS", "known", "missing_vectors", "model_name", "model_slug",
           "read_current", "split_vector_key", "stored_backends", "text_hash", "vector_key",
           "vector_schema", "vectors_dir", "write_part"]
