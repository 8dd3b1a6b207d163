"""Generated corpora of any size, built by the commands a user runs: what
``benchmarks/ranker_cost.py`` measures ``openmsd train ranker`` on.

Each corpus is **synthetic** (seeded): papers on topics (about 50 papers a topic), each with a
title and abstract drawn from its topic's words and from words common to all (English words of
the S2ORC sample's abstracts, so that language identification says English), two or three
authors from its topic's authors, a year, and 4 to 11 references to earlier papers, most of
them on its topic, drawn by preferential attachment (a paper already cited often is cited more:
citation counts follow a power law, the top 1% of papers receiving about a sixth of the
citations, as in real data). It is written as S2ORC metadata lines and goes through the
commands a user runs (:func:`build`): ``openmsd ingest``, ``openmsd relations`` (train / dev /
test split), then vectors of a stand-in dense model (a seeded random projection of each paper's
word counts, 64 dimensions, stored as ``openmsd embed`` stores a model's: ``synthetic-bow``; no
transformer runs). Each command runs at ``nice 10`` under ``prlimit --as`` (8 GiB) and is
measured from its own ``wait4`` usage: wall and CPU seconds, peak resident memory.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from openmsd.corpus import Corpus
from openmsd.models import embed_corpus

#: Papers a topic holds, on average.
TOPIC_SIZE = 50
#: Real English abstracts the generated text draws its words from (S2ORC sample, ODC-By).
VOCABULARY = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "s2orc-sample" \
    / "metadata_sample.jsonl"
#: Share of a paper's references to its own topic.
ON_TOPIC = 0.8


def vocabulary(path: Path = VOCABULARY, common: int = 200) -> tuple[list[str], list[str]]:
    """The ``common`` most frequent words of the abstracts in ``path`` (S2ORC lines) and the
    others seen twice or more: English words, so that language identification says English."""
    counts: Counter[str] = Counter()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            counts.update(w for w in re.findall(r"[a-z]+", (json.loads(line).get("abstract")
                                                             or "").lower()) if len(w) >= 3)
    ranked = [w for w, n in counts.most_common() if n >= 2]
    return ranked[:common], ranked[common:]


class BagOfWordsProjection:
    """A stand-in dense model: each text's word counts through a seeded random projection,
    L2-normalised (papers that share topic words get close vectors)."""

    name = "synthetic-bow"

    def __init__(self, dim: int = 64, seed: int = 0):
        self.dim, self.seed = dim, seed
        self.cache: dict[str, np.ndarray] = {}

    def word(self, token: str) -> np.ndarray:
        if token not in self.cache:
            digest = int.from_bytes(token.encode()[:16].ljust(16, b"\0"), "little") % (2**32)
            self.cache[token] = np.random.default_rng([self.seed, digest, len(token)]
                                                      ).standard_normal(self.dim)
        return self.cache[token]

    def encode(self, texts: Sequence[str], kind: str = "passage", batch_size: int = 32
               ) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for token in text.lower().split():
                out[i] += self.word(token.strip(".,"))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


def generate(papers: int, path: Path, seed: int = 0) -> dict[str, Any]:
    """``papers`` S2ORC metadata lines in ``path`` (gzip); returns the counts written.

    References follow preferential attachment (Price's model): a paper cites an earlier paper
    with a probability that grows with the citations that paper already has, within its topic
    (``ON_TOPIC``) or across the corpus, so citation counts follow a power law with a few hubs,
    as in real citation data."""
    rng = np.random.default_rng(seed)
    common, content = vocabulary()
    topics = max(2, papers // TOPIC_SIZE)
    topic = rng.integers(0, topics, papers)
    topic_words = [[content[j] for j in rng.choice(len(content), 40, replace=False)]
                   for _ in range(topics)]
    # Each earlier paper appears once, plus once per citation it has received: drawing from
    # these lists uniformly is drawing in proportion to citations + 1.
    tickets: dict[int, list[int]] = {}
    everyone: list[int] = []
    cited_by = np.zeros(papers, np.int64)
    references = 0
    with gzip.open(path, "wt", encoding="utf-8") as out:
        for i in range(papers):
            t = int(topic[i])
            words = [topic_words[t][j] for j in rng.integers(0, 40, 12)]
            filler = [common[j] for j in rng.integers(0, len(common), 12)]
            title = " ".join(rng.permutation(words[:4] + filler[:3]))
            abstract = " ".join(rng.permutation(words + filler)) + "."
            same = tickets.get(t, [])
            cited: set[int] = set()
            for _ in range(int(rng.integers(4, 12))):
                pool = same if same and rng.random() < ON_TOPIC else everyone
                if pool:
                    cited.add(pool[int(rng.integers(0, len(pool)))])
            for c in cited:
                cited_by[c] += 1
                tickets[int(topic[c])].append(c)
                everyone.append(c)
            references += len(cited)
            authors = [{"first": "A", "middle": [], "last": f"T{t}Author{int(a)}", "suffix": ""}
                       for a in rng.integers(0, 8, int(rng.integers(2, 4)))]
            record = {"paper_id": f"{i}", "title": title.capitalize(), "abstract": abstract,
                      "authors": authors, "year": 1990 + i * 30 // papers,
                      "venue": f"Venue {t % 20}", "outbound_citations": [str(c) for c in cited],
                      "inbound_citations": []}
            out.write(json.dumps(record) + "\n")
            tickets.setdefault(t, []).append(i)
            everyone.append(i)
    top = np.sort(cited_by)[::-1]
    return {"papers": papers, "topics": topics, "references": references,
            "most_cited": int(top[0]), "cited_100_or_more": int((top >= 100).sum()),
            "top_1pct_share_of_citations": round(float(top[:max(1, papers // 100)].sum())
                                                 / max(1, references), 3)}


#: The address-space cap of each command (``prlimit --as``): an allocation beyond it fails in
#: that command instead of the machine's out-of-memory killer choosing a process.
ADDRESS_SPACE = 8 * 2**30


def cli(*args: str) -> dict[str, float]:
    """Run ``openmsd ARGS`` quietly, at ``nice 10`` and under ``prlimit --as``; its wall and
    CPU seconds and its peak resident memory (GiB), from its own ``wait4`` usage."""
    command = ["nice", "-n", "10", "prlimit", f"--as={ADDRESS_SPACE}", sys.executable, "-m",
               "openmsd", *args]
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = code = os.waitstatus_to_exitcode(status)
        if code:
            output.seek(0)
            raise SystemExit(f"openmsd {' '.join(args)} failed (exit {code}):\n"
                             f"{output.read()[-3000:].decode(errors='replace')}")
    return {"wall_s": round(seconds, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_gib": round(usage.ru_maxrss / 2**20, 2),
            "load_after": round(os.getloadavg()[0], 2)}


def build(papers: int, work: Path, reuse: bool = False) -> tuple[Corpus, dict[str, Any]]:
    """Generate, ingest, derive relations and store the stand-in vectors; what each step
    cost (``reuse``: a corpus already ingested, or with relations, in ``work`` is kept: that
    step is null)."""
    source = work / f"s2orc-{papers}.jsonl.gz"
    counts = generate(papers, source)
    root = work / f"corpus-{papers}"
    steps: dict[str, dict[str, float] | None] = {"ingest": None, "relations": None}
    if not (reuse and (root / "papers.parquet").is_file()):
        print(f"{papers:,} papers: ingest", flush=True)
        steps["ingest"] = cli("ingest", str(source), "--out", str(root), "--format", "s2orc")
    if not (reuse and (root / "relations" / "relations.json").is_file()):
        print(f"{papers:,} papers: relations", flush=True)
        steps["relations"] = cli("relations", str(root), "--top-languages", "1", "--idt",
                                 "0.1", "--odt", "0", "--dev", "0.1")
    print(f"{papers:,} papers: vectors", flush=True)
    started, cpu = time.perf_counter(), time.process_time()
    corpus = Corpus(root)
    embed_corpus(corpus, BagOfWordsProjection(), "synthetic-bow", batch_size=4096)
    steps["vectors"] = {"wall_s": round(time.perf_counter() - started, 1),
                        "cpu_s": round(time.process_time() - cpu, 1)}
    manifest = json.loads((root / "relations" / "relations.json").read_text())
    relations = {"counts": manifest["counts"], "capped": manifest.get("capped", {}),
                 "splits": dict(Counter(pq.read_table(root / "relations" / "splits.parquet",
                                                      columns=["split"])["split"].to_pylist()))}
    return corpus, {**counts, "relations": relations, "steps": steps}
