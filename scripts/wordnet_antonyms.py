"""Generate ``openmsd/robustness/data/antonyms-en.tsv`` from Debian's ``wordnet-base``.

One line per English adjective that has a direct antonym in WordNet 3.0: ``word<TAB>antonym``.
For a word with several senses, the antonym met most often over its adjective senses is kept,
senses taken in WordNet's order (most frequent first), the first one winning a tie; this is what
``Counter(...).most_common(1)`` over NLTK's ``wordnet.synsets(word)`` gives for adjectives.

Usage (``apt-get install wordnet-base`` first)::

    python scripts/wordnet_antonyms.py [/usr/share/wordnet] \
        > openmsd/robustness/data/antonyms-en.tsv

WordNet 3.0 is © 2006 Princeton University, under the WordNet licence (see
``openmsd/data/ATTRIBUTION.md``).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

MARKER = re.compile(r"\((a|p|ip)\)$")  # syntactic markers of adjectives: "galore(ip)"


def _word(raw: str) -> str:
    return MARKER.sub("", raw).replace("_", " ").lower()


def read_synsets(data_adj: Path) -> dict[str, tuple[list[str], list[tuple[str, int, int]]]]:
    """offset -> (words, antonym pointers as (target offset, source word no., target word no.))."""
    synsets = {}
    for line in data_adj.read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):  # the licence header
            continue
        fields = line.split(" | ", 1)[0].split()
        offset, n_words = fields[0], int(fields[3], 16)
        words = [_word(fields[4 + 2 * i]) for i in range(n_words)]
        at = 4 + 2 * n_words
        n_pointers = int(fields[at])
        pointers = []
        for i in range(n_pointers):
            symbol, target, _pos, source_target = fields[at + 1 + 4 * i: at + 5 + 4 * i]
            if symbol == "!":
                pointers.append((target, int(source_target[:2], 16), int(source_target[2:], 16)))
        synsets[offset] = (words, pointers)
    return synsets


def antonym_table(wordnet_dir: Path) -> dict[str, str]:
    """Each adjective with a direct antonym -> its most frequent antonym over its senses."""
    synsets = read_synsets(wordnet_dir / "data.adj")
    table = {}
    for line in (wordnet_dir / "index.adj").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        fields = line.split()
        lemma = fields[0].replace("_", " ").lower()
        n_senses = int(fields[2])
        offsets = fields[-n_senses:]
        found: Counter[str] = Counter()
        for offset in offsets:
            words, pointers = synsets[offset]
            for target, source_no, target_no in pointers:
                if source_no and words[source_no - 1] == lemma:
                    found[synsets[target][0][target_no - 1]] += 1
        if found:
            table[lemma] = found.most_common(1)[0][0]
    return table


def main() -> None:
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    sys.stdout.write("# word\tantonym (WordNet 3.0 adjectives; scripts/wordnet_antonyms.py)\n")
    for word, antonym in sorted(antonym_table(directory).items()):
        sys.stdout.write(f"{word}\t{antonym}\n")


if __name__ == "__main__":
    main()
