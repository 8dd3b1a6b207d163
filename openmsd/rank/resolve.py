"""Which ranker answers a question: the one place a question, a ``--model`` and a
``--backend`` become a ranker name or the vector key of a dense index.

The CLI, the server, the watch and the evaluation call these; nothing else picks a ranker.

* :func:`question_ranker`: ``related`` and ``search`` (a ranker name: the question's default
  without ``--model``; a dense model read from the vectors its index was built with);
* :func:`dense_key`: the dense index a library, a watch, a manuscript or a picture searches
  (the corpus's default dense model without ``--model``);
* :func:`manuscript_model`: the dense index a manuscript's citation locations search, and the
  encoder of its sentences;
* :func:`index_backend`: the backend whose index of a model to search.
"""

from __future__ import annotations

from openmsd.corpus import Corpus
from openmsd.models import DenseEncoder, UnknownModelError, choose_backend, find_adapter, load_model
from openmsd.rank.load import HYBRID, HYBRID_GRAPH, default_dense, is_builtin, is_dense
from openmsd.rank.spec import RankerSpec
from openmsd.vectors import stored_backends, vector_key

__all__ = ["DEFAULT_RANKERS", "RankerChoiceError", "UnknownModelError", "dense_key",
           "index_backend", "manuscript_model", "question_ranker", "served_backend"]

#: The ranker each question uses without ``--model``.
DEFAULT_RANKERS = {"related": HYBRID_GRAPH, "search": HYBRID}


class RankerChoiceError(ValueError):
    """A ``--model`` / ``--backend`` pair the corpus cannot answer with, in one line
    (:class:`UnknownModelError`: a model name the registry does not know)."""


def index_backend(corpus: Corpus, model: str, backend: str | None) -> str:
    """The backend whose index of ``model`` to search: ``backend`` when given (a
    :class:`RankerChoiceError` naming what the corpus has when only another backend has an
    index), else the corpus's own (:func:`openmsd.models.choose_backend`)."""
    stored = stored_backends(corpus, model, "index")
    if backend is not None and stored and backend not in stored:
        raise RankerChoiceError(
            f"{corpus.root}: {model} is indexed with backend {', '.join(stored)} only, not "
            f"{backend} (vectors of two backends are never mixed): leave out --backend, or "
            f"run 'openmsd embed {corpus.root} --model {model} --backend {backend}' and "
            f"'openmsd index build {corpus.root} --model {model} --backend {backend}'")
    return choose_backend(corpus, model, backend, "index")


def served_backend(corpus: Corpus, model: str, backend: str | None = None) -> str:
    """The backend a served model's index and query encoder use: ``backend`` when given,
    else the one its index was built with."""
    return choose_backend(corpus, model, backend, what="index")


def question_ranker(corpus: Corpus, question: str, model: str | None = None,
                    backend: str | None = None) -> str:
    """The ranker that answers ``question`` (``related`` or ``search``): its default
    (:data:`DEFAULT_RANKERS`) without ``model``; a dense model as the vector key of the
    backend its index was built with; any other ranker as its canonical name."""
    if model is None:
        return DEFAULT_RANKERS[question]
    spec = RankerSpec.parse(model, typed=True)
    if is_builtin(spec) or spec.language or not is_dense(spec, corpus):
        return str(spec)
    return dense_key(corpus, model, backend)


def dense_key(corpus: Corpus, model: str | None = None, backend: str | None = None) -> str:
    """The vector key of the dense index a library, a watch or a picture searches:
    ``model`` (the corpus's :func:`~openmsd.rank.default_dense` without it) with its backend
    given (``NAME:BACKEND``), kept per language (``NAME@LANG``), else the backend of its
    index."""
    dense = model or default_dense(corpus)
    spec = RankerSpec.parse(dense, typed=model is not None)
    if spec.language:
        return dense
    if spec.backend:
        return spec.vector_key
    return vector_key(dense, index_backend(corpus, dense, backend))


def manuscript_model(corpus: Corpus, model: str | None = None, backend: str | None = None
                     ) -> tuple[str, DenseEncoder]:
    """The vector key of the dense index ``recommend`` searches (``model``, else the corpus's
    :func:`~openmsd.rank.default_dense`; with the backend of its index) and the encoder of
    the manuscript's sentences (an adapter of the corpus by name: its bases, then its head).
    :class:`RankerChoiceError` for a ranker that is no dense model."""
    name = model or default_dense(corpus)
    spec = RankerSpec.parse(name, typed=model is not None)  # the default: a vector key
    if is_builtin(spec):
        raise RankerChoiceError(f"recommend ranks with a dense model's index; {name!r} is not "
                                "one")
    stored = spec.stored_model
    chosen = index_backend(corpus, stored, backend or spec.backend or None)
    encoder = load_model(str(find_adapter(stored, corpus) or stored), chosen)
    return vector_key(stored, chosen), encoder  # type: ignore[return-value]
