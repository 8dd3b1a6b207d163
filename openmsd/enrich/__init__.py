"""English summaries of non-English papers (OpenMSD §7): ``author``, ``topn`` and ``llm``
methods, generator backends (local Gemma-3-270M, an OpenAI-compatible endpoint, Apertium),
stored per paper, method and length beside the corpus. See ``docs/enrich.md``.

Everything other packages use is imported from here; the names load lazily (PEP 562), so
importing the package costs nothing and creates no import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openmsd.faces import lazy_getattr

if TYPE_CHECKING:
    from openmsd.enrich.apertium import Apertium
    from openmsd.enrich.backends import load_backend
    from openmsd.enrich.gemma import LocalGemma
    from openmsd.enrich.generator import GeneratorError
    from openmsd.enrich.methods import generate_checked
    from openmsd.enrich.openai_http import OpenAICompatible
    from openmsd.enrich.run import EnrichError, enrich
    from openmsd.enrich.server import create_app
    from openmsd.enrich.tokens import SummaryTokenizer

_WHERE: dict[str, str] = {
    "Apertium": "apertium",
    "EnrichError": "run",
    "GeneratorError": "generator",
    "LocalGemma": "gemma",
    "OpenAICompatible": "openai_http",
    "SummaryTokenizer": "tokens",
    "create_app": "server",
    "enrich": "run",
    "generate_checked": "methods",
    "load_backend": "backends",
}

__all__ = [
    "Apertium", "EnrichError", "GeneratorError", "LocalGemma", "OpenAICompatible",
    "SummaryTokenizer", "create_app", "enrich", "generate_checked", "load_backend",
]


__getattr__ = lazy_getattr(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
