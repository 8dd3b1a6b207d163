"""The web application and HTTP API over a corpus (``openmsd serve CORPUS``)."""

from openmsd.server.app import create_app, serve
from openmsd.server.resources import BATCH_ENV, THREADS_ENV, Resources, indexed_models

__all__ = [
    "BATCH_ENV", "THREADS_ENV", "Resources", "create_app", "indexed_models", "serve",
]
