"""The citrec corpus and trained model of the model tests, shared with the training tests."""

from tests.models.citrec.conftest import citrec_model, unarxive_corpus

__all__ = ["citrec_model", "unarxive_corpus"]
