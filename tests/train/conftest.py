"""The tiny SentenceTransformer of the model tests, shared with the training tests."""

from tests.models.conftest import tiny_model

__all__ = ["tiny_model"]
