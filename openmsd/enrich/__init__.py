"""English summaries of non-English papers (OpenMSD §7): ``author``, ``topn`` and ``llm``
methods, generator backends (local Gemma-3-270M, an OpenAI-compatible endpoint, Apertium),
stored per paper, method and length beside the corpus. See ``docs/enrich.md``."""
