"""Backends by name: ``gemma`` (the local Gemma-3-270M), ``apertium`` (Debian's Apertium,
translation of es/ca/gl only), or the URL of an OpenAI-compatible endpoint
(``http://127.0.0.1:8080/v1``, model from ``--endpoint-model``, key from the environment
variable ``OPENAI_API_KEY`` or the one named)."""

from __future__ import annotations

from openmsd.enrich.apertium import Apertium
from openmsd.enrich.gemma import LocalGemma
from openmsd.enrich.generator import Generator, GeneratorError

BACKENDS = ("gemma", "apertium", "http(s)://... (an OpenAI-compatible endpoint)")


def load_backend(name: str, endpoint_model: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 120.0) -> Generator:
    """The backend called ``name``; :class:`GeneratorError` when it cannot be used."""
    if name == "gemma":
        return LocalGemma()
    if name == "apertium":
        return Apertium()
    if name.startswith(("http://", "https://")):
        # optional: loads httpx (the enrich extra)
        from openmsd.enrich.openai_http import OpenAICompatible

        return OpenAICompatible(name, endpoint_model, api_key_env, timeout)
    raise GeneratorError(f"unknown backend {name!r}: one of {', '.join(BACKENDS)}")
