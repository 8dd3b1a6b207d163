"""Per-context AP on the train+dev and test (idt+odt) contexts of a tuned TALN corpus:
bm25@same, e5, hybrid scored exhaustively (every corpus paper, as ``openmsd tune`` scores
them) and hybrid as the benchmark ranks it (top 100 of its cheap candidate pool); paired
t-tests against bm25@same. Session 9's scratch, kept for its figures
(context_taln_exhaustive.json)::

    python docs/ranking/session9/exhaustive.py CORPUS OUT.json
"""
import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from openmsd.corpus import Corpus
from openmsd.eval.retrieval import rank
from openmsd.experiment.contexts import citation_contexts
from openmsd.experiment.tune import Judged
from openmsd.rank import Queries, corpus_papers, load_scorer

corpus = Corpus(sys.argv[1])
every = corpus_papers(corpus)
papers = corpus_papers(corpus, [i for i, t in zip(every.ids, every.texts, strict=True) if t])
cache = {}
out = {}
for label, splits in (("train+dev", ("train", "dev")), ("idt+odt", ("idt", "odt"))):
    ctx = citation_contexts(corpus, papers, splits)
    texts = ctx["text"].to_pylist()
    cited = np.array([papers.position[c] for c in ctx["cited_id"].to_pylist()])
    judged = Judged.of_pairs(np.arange(len(texts)), cited)
    q = Queries.of_texts(texts)
    ap = {}
    for name in ("bm25@same", "e5-small-multilingual", "hybrid"):
        s = load_scorer(name, papers, cache=cache)
        ap[name + " (exhaustive)"] = judged.average_precision(
            np.array(s.score(q, np.arange(len(papers))), np.float32))
    rows, _ = rank(load_scorer("hybrid", papers, cache=cache), texts, 100)
    ap["hybrid (top 100, as the benchmark)"] = np.array(
        [1.0 / (r.index(c) + 1) if c in r else 0.0
         for r, c in zip(rows.tolist(), cited.tolist(), strict=True)])
    base = ap["bm25@same (exhaustive)"]
    out[label] = {}
    for name, a in ap.items():
        t = stats.ttest_rel(a, base) if name != "bm25@same (exhaustive)" else None
        out[label][name] = {"MAP": round(float(a.mean()), 4),
                            "p_vs_bm25": None if t is None else round(float(t.pvalue), 4),
                            "wins": int((a > base).sum()), "losses": int((a < base).sum())}
    print(label, json.dumps(out[label], indent=1), flush=True)
Path(sys.argv[2]).write_text(json.dumps(out, indent=1))
