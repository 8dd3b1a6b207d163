"""Citation markers in manuscript text: ``[12]``, ``[3, 5-7]``, ``(Smith, 2020)``,
``(Smith et al. 2020; Doe 2019)``, ``Smith et al. (2020)``, ``\\cite{key}``, unarXive's
``{{cite:hash}}`` (and ``[CITE]`` where a reader replaced it), Pandoc's ``[@key]``.

>>> [s for s, _ in citation_markers("As shown in [12] and by (Smith et al., 2020).")]
['[12]', '(Smith et al., 2020)']
>>> without_markers("Parsers {{cite:ab12}} are fast [@nivre2004; @kubler2009].")
'Parsers are fast.'
"""

from __future__ import annotations

import re

_YEAR = r"(?:1[89]|20)\d{2}[a-z]?"
_AUTHOR = r"[A-Z][\w'’\-]+(?:\s+(?:and|&|et|y|e|und)\s+[A-Z][\w'’\-]+)?(?:\s+et\s+al\.?)?"
MARKER = re.compile(
    r"\[\s*\d+(?:\s*[,;–-]\s*\d+)*\s*\]"                        # [12], [3, 5-7]
    r"|\\(?:no)?cite[a-zA-Z]*\*?(?:\[[^\]]*\])*\{[^}]*\}"        # \cite{key}, \citep[p. 3]{a,b}
    r"|\{\{cite:[^}]*\}\}|\[CITE\]"                              # unarXive
    r"|\[\s*-?@[\w:.#$%&+?<>~/-]+(?:\s*;\s*-?@[\w:.#$%&+?<>~/-]+)*\s*\]"  # Pandoc [@a; @b]
    rf"|\((?:[^()]*?\b{_AUTHOR},?\s+{_YEAR}[^()]*?)\)"          # (Smith, 2020; Doe 2019)
    rf"|\b{_AUTHOR}\s+\({_YEAR}(?:[,;]\s*{_YEAR})*\)"           # Smith et al. (2020)
)


def citation_markers(sentence: str) -> list[tuple[str, int]]:
    """The citation markers of a sentence and their character offsets."""
    return [(m.group(0), m.start()) for m in MARKER.finditer(sentence)]


def without_markers(sentence: str) -> str:
    """The sentence with its citation markers removed (they carry no topic)."""
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s{2,}", " ", MARKER.sub(" ", sentence))).strip()
