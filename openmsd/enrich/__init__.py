"""English summaries of non-English papers (OpenMSD §7): ``author``, ``topn`` and ``llm``
methods, generator backends (local Gemma-3-270M, an OpenAI-compatible endpoint, Apertium),
stored per paper, method and length beside the corpus. See ``docs/enrich.md``.

The face is lazy (PEP 562): a name loads its own submodule on first use. The whole face
imports FastAPI (the summary server, the ``serve`` extra), which ``openmsd embed``'s use of
:func:`split_papers` does not need.
"""

from typing import TYPE_CHECKING

from openmsd.faces import lazy_face

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

__all__ = [
    "Apertium",
    "EnrichError",
    "GeneratorError",
    "LocalGemma",
    "OpenAICompatible",
    "SummaryTokenizer",
    "create_app",
    "enrich",
    "generate_checked",
    "load_backend",
]

__getattr__, __dir__ = lazy_face(__name__)
