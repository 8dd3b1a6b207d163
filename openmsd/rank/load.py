"""``load_scorer(name, papers)``: the only place a name becomes a scorer.

Names:

* ``random``; ``bm25`` (per-language BM25 of the paper's own text); ``bm25-en`` (BM25 of its
  English text, the cross-lingual lexical view);
* a dense model: a registered name (``openmsd models list``), a SentenceTransformer directory,
  an enriched name ``MODEL+llm64``, a Hugging Face name; over a corpus its stored vectors
  (``openmsd embed``), over files its texts encoded now;
* a graph scorer (:data:`openmsd.rank.graph.GRAPH_SCORERS`), over a corpus with citations;
  an author-habit scorer (:data:`openmsd.rank.authorship.AUTHOR_SCORERS`), over a corpus;
* ``NAME@LANG``: scorer ``NAME`` heard only for pairs of papers both in ``LANG``
  (``minilm-en@en``: the English-only model for English pairs); ``NAME@same``: only for pairs
  in one language (``bm25@same``); ``NAME@cross``: only for pairs in two languages;
* ``NAME~prf``: pseudo-relevance feedback over ``NAME``; ``NAME~links``: ``NAME``'s scores
  carried over the citation graph (:mod:`openmsd.rank.feedback`);
* a fusion: ``A+B+…`` (reciprocal-rank fusion of the members), ``hybrid`` (text and
  metadata: what ``openmsd tune`` fitted on the train and dev splits where it won out of fold,
  else the z-score fusion (:data:`UNTUNED_METHODS`) of
  ``bm25@same``, the corpus's dense model, ``bm25-en@cross`` (words across languages, in
  English) in a corpus of several languages and, for English pairs, ``minilm-en@en`` where it
  can be had)
  and ``hybrid-graph`` (text and citation graph, likewise; untuned, by reciprocal rank).

A name that names nothing is a :class:`UnknownScorerError` listing the scorers this collection
can have.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pyarrow as pa

from openmsd.corpus import Corpus
from openmsd.models import ADAPTER_FILE, BACKENDS, Adapter
from openmsd.rank.authorship import AUTHOR_SCORERS, AuthorshipScorer
from openmsd.rank.dense import DenseScorer
from openmsd.rank.feedback import FEEDBACK, Feedback, Propagated, split_suffix
from openmsd.rank.fusion import Fallback, Fusion
from openmsd.rank.graph import GRAPH_SCORERS, GraphScorer
from openmsd.rank.lexical import VIEWS, LexicalScorer
from openmsd.rank.metadata import METADATA_SCORERS, metadata_scorer
from openmsd.rank.scorer import LanguagePairScorer, Papers, RandomScorer, Scorer

HYBRID, HYBRID_GRAPH = "hybrid", "hybrid-graph"
FUSIONS = (HYBRID, HYBRID_GRAPH)
RANKER_FILE = "ranker.json"
#: The English-only model an untuned ``hybrid`` adds for English pairs (``minilm-en@en``),
#: over files, or over a corpus that has its vectors (``openmsd embed CORPUS --model minilm-en``).
ENGLISH_MODEL = "minilm-en"
#: The words an untuned ``hybrid`` compares across languages, in a corpus of several languages.
CROSS_LEXICAL = "bm25-en@cross"
#: What ``hybrid-graph`` adds to ``hybrid`` when nothing is tuned.
DEFAULT_GRAPH_MEMBERS = ("citation", "co-citation", "shared-references")
#: How the untuned fusions combine their members. ``hybrid``: CombSUM of each member's z-scores
#: over the query's candidates, so that a member's vote is as strong as its evidence (a lone
#: match on one word of a short query counts for little); on the TALN train and dev queries
#: 35.39 MAP against RRF's 33.83. ``hybrid-graph``: reciprocal-rank fusion, where a lone
#: citation link is strong evidence that z-scores would flatten (41.10 against RRF's 43.08 on
#: the train and dev hidden links). :mod:`openmsd.rank.fusion`; docs/guides/fusion-and-tuning.md.
UNTUNED_METHODS = {HYBRID: "zscore", HYBRID_GRAPH: "rrf"}


def model_name(key: str) -> str:
    """The model of a vector key (``minilm-en@onnx`` -> ``minilm-en``).

    >>> model_name("minilm-en@onnx"), model_name("minilm-en")
    ('minilm-en', 'minilm-en')
    """
    model, _, backend = key.rpartition("@")
    return model if model and backend in BACKENDS else key


class UnknownScorerError(ValueError):
    """A ranker name that names nothing this collection can have."""


def ranker_path(corpus: Corpus) -> Path:
    """Where ``openmsd tune`` keeps its weights: beside the corpus's indexes."""
    return corpus.root / "index" / RANKER_FILE


def tuned(corpus: Corpus | None) -> dict[str, Any]:
    """The tuned fusions of a corpus (``{name: {"members", "weights", "method", ...}}``)."""
    if corpus is None or not ranker_path(corpus).is_file():
        return {}
    return json.loads(ranker_path(corpus).read_text())


def dense_models(corpus: Corpus) -> list[str]:
    """The models with stored vectors or an index in ``corpus``, the most recently built
    first (``index/.builds``, where index builds are written before they are switched in,
    names no model)."""
    found: dict[str, float] = {}
    for folder, marker in (("vectors", "part-*.parquet"), ("index", "*")):
        root = corpus.root / folder
        if not root.is_dir():
            continue
        for directory in root.iterdir():
            if directory.name.startswith("."):
                continue
            files = list(directory.glob(marker)) if directory.is_dir() else []
            if files:
                stamp = max(f.stat().st_mtime for f in files)
                found[directory.name] = max(found.get(directory.name, 0.0), stamp)
    return sorted(found, key=lambda m: -found[m])


def default_dense(corpus: Corpus | None) -> str:
    """The dense model a command uses when none is named: the corpus's adapter
    (:func:`corpus_adapter`), else the one the corpus has vectors or an index for (the most
    recently built), else the registry default."""
    from openmsd.models import DEFAULT_MODEL

    adapter = corpus_adapter(corpus)
    if adapter is not None:
        return adapter.name
    if corpus is not None:
        indexed = [m for m in dense_models(corpus) if (corpus.root / "index" / m).is_dir()]
        have = indexed or dense_models(corpus)
        if have:
            return have[0]
    return DEFAULT_MODEL


@functools.lru_cache(maxsize=64)
def _languages(root: Path, build: str | None) -> int:
    if build is None:  # never ingested into
        return 0
    return Corpus(root).connect().execute(
        "SELECT count(DISTINCT language) FROM papers "
        "WHERE language IS NOT NULL AND language <> 'und'").fetchone()[0]


def multilingual(corpus: Corpus) -> bool:
    """Whether the corpus's papers are in more than one (known) language; counted once per
    corpus build."""
    return _languages(corpus.root, corpus.manifest().get("build", {}).get("id")) > 1


def available(papers: Papers) -> list[str]:
    """The scorer names this collection can have."""
    from openmsd.models import MODELS

    names = ["random", *VIEWS]
    if papers.corpus is not None:
        names += dense_models(papers.corpus) or [default_dense(papers.corpus)]
        names += list(METADATA_SCORERS) + list(GRAPH_SCORERS) + list(AUTHOR_SCORERS)
        names += list(FUSIONS)
    else:
        names += [m for m in MODELS if m != "bm25"] + [HYBRID]
    return names


def split_fusion(name: str) -> list[str]:
    """The members of ``A+B+…``; an enriched model name (``MODEL+llm64``) stays one member.

    >>> split_fusion("e5-small-multilingual+llm64+bm25")
    ['e5-small-multilingual+llm64', 'bm25']
    """
    from openmsd.corpus import parse_enriched

    members: list[str] = []
    for part in name.split("+"):
        if members and parse_enriched(f"{members[-1]}+{part}"):
            members[-1] = f"{members[-1]}+{part}"
        else:
            members.append(part)
    return members


def _is_dense(name: str) -> bool:
    from openmsd.corpus import parse_enriched
    from openmsd.models import MODELS

    name = name.split("@", 1)[0] if name.rsplit("@", 1)[-1] in BACKENDS else name
    base = parse_enriched(name)[0] if parse_enriched(name) else name
    return base in MODELS or Path(base).is_dir() or "/" in base


def fusion_spec(name: str, corpus: Corpus | None, dense: str | None = None) -> dict[str, Any]:
    """What ``hybrid`` / ``hybrid-graph`` stand for here: the tuned spec, else
    :func:`default_spec` (also where ``openmsd tune`` kept the untuned fusion because the tuned
    one did not win out of fold: its record says ``"tuned": false``)."""
    spec = tuned(corpus).get(name)
    if spec and spec.get("tuned", True):
        return spec
    return default_spec(name, corpus, dense)


def default_spec(name: str, corpus: Corpus | None, dense: str | None = None) -> dict[str, Any]:
    """The untuned ``hybrid`` / ``hybrid-graph``, fused as :data:`UNTUNED_METHODS` says:
    ``hybrid``: ``bm25@same``, the dense model (the corpus's adapter where it has one:
    :func:`corpus_adapter`), ``bm25-en@cross`` in a corpus of several languages and
    ``minilm-en@en`` where it can be had; ``hybrid-graph``, which ranks a paper's related
    papers: the dense model, ``bm25-en`` (the papers' English texts: words across languages)
    and the graph counts."""
    adapter = corpus_adapter(corpus) if dense is None else None
    dense = dense or (adapter.name if adapter else default_dense(corpus))
    members = ["bm25@same", dense]
    if corpus is not None and multilingual(corpus):
        # words across languages, in English: an English query meets a Portuguese paper through
        # its English title (bm25@same hears only pairs in one language; @cross the others)
        members.append(CROSS_LEXICAL)
    english = english_key(corpus)
    adapted = {b["model"] for b in adapter.bases} if adapter else set()
    if english is not None and model_name(dense) != ENGLISH_MODEL \
            and ENGLISH_MODEL not in adapted:
        # English pairs also hear the English-only model, where it can be had (whichever
        # backend embedded it): for English queries it outranks the multilingual one
        # (docs/ranking.md); an adapter over it already holds it
        members.append(f"{english}@en")
    if name == HYBRID_GRAPH:
        # A paper query has an English view (free text has not): its words meet the other
        # languages' papers in English, where bm25@same would rank only its own language's.
        members = [dense, "bm25-en", *DEFAULT_GRAPH_MEMBERS]
    out: dict[str, Any] = {"members": members, "weights": [1.0] * len(members),
                           "method": UNTUNED_METHODS[name], "tuned": False}
    if adapter is not None:
        out["adapter"] = {"name": adapter.name, "path": str(adapter.path),
                          "bases": [b["key"] for b in adapter.bases]}
    return out


def english_key(corpus: Corpus | None) -> str | None:
    """The vector key of the English-only model an untuned ``hybrid`` adds for English pairs:
    ``minilm-en`` over files, else the key of its stored vectors in ``corpus``, whichever
    backend made them (``minilm-en`` or ``minilm-en@onnx``, the newest); None without."""
    if corpus is None:
        return ENGLISH_MODEL
    return next((key for key in dense_models(corpus) if model_name(key) == ENGLISH_MODEL),
                None)


def corpus_adapter(corpus: Corpus | None) -> Adapter | None:
    """The adapter the untuned fusions use in place of their dense model: the most recently
    trained one in ``CORPUS/adapters`` whose adapted vectors are stored (``openmsd train
    adapter``); None without. An adapter that cannot be read is passed over."""
    from openmsd.models import AdapterError, corpus_adapters, read_adapter, vectors_dir

    if corpus is None or not corpus_adapters(corpus).is_dir():
        return None
    found = []
    for directory in corpus_adapters(corpus).iterdir():
        if directory.name.startswith(".") or not (directory / ADAPTER_FILE).is_file():
            continue
        try:
            adapter = read_adapter(directory)
        except AdapterError:
            continue
        if any(vectors_dir(corpus, adapter.name).glob("part-*.parquet")):
            found.append(((directory / ADAPTER_FILE).stat().st_mtime_ns, adapter.name, adapter))
    return max(found, key=lambda f: f[:2])[2] if found else None


def fallbacks(name: str, spec: dict[str, Any]) -> list[Fallback]:
    """A tuned spec's ``fallbacks`` (``{"silent", "members", "weights", "method"}``, members
    by name) as :class:`Fallback` over the spec's members.

    >>> fallbacks("hybrid", {"members": ["bm25", "authors"], "fallbacks": [
    ...     {"silent": ["authors"], "members": ["bm25"], "weights": [1.0], "method": "rrf"}]})
    [Fallback(silent=(1,), members=(0,), weights=(1.0,), method='rrf')]
    """
    where = {member: i for i, member in enumerate(spec["members"])}
    out = []
    for entry in spec.get("fallbacks", []):
        unknown = [m for m in (*entry["silent"], *entry["members"]) if m not in where]
        if unknown:
            raise ValueError(f"{name}: a fallback names {', '.join(unknown)}, which "
                             f"{name} does not hold ({', '.join(spec['members'])})")
        out.append(Fallback(tuple(where[m] for m in entry["silent"]),
                            tuple(where[m] for m in entry["members"]),
                            tuple(entry["weights"]), entry.get("method", "weighted")))
    return out


def load_scorer(name: str, papers: Papers, *, backend: str = "torch", seed: int = 0,
                citations: pa.Table | None = None,
                hidden: Collection[tuple[str, str]] = (),
                cache: dict[str, Scorer] | None = None) -> Scorer:
    """The scorer ``name`` over ``papers``. ``citations`` (``citing_id``, ``cited_id``)
    replaces the corpus's for graph scorers, ``hidden`` links are left out of the graph;
    ``cache`` shares members between the scorers of one run."""
    cache = {} if cache is None else cache
    if name in cache:
        return cache[name]
    scorer: Scorer
    corpus = papers.corpus
    base, suffix = split_suffix(name) if "+" not in name else (name, None)
    if name == "random":
        scorer = RandomScorer(papers, seed)
    elif suffix is not None:
        inner = load_scorer(base, papers, backend=backend, seed=seed, citations=citations,
                            hidden=hidden, cache=cache)
        if suffix == FEEDBACK:
            scorer = Feedback(inner)
        elif corpus is None and citations is None:
            raise UnknownScorerError(f"scorer {name!r} reads the citation graph: it needs a "
                                     "corpus; here: " + ", ".join(available(papers)))
        else:
            scorer = Propagated(inner, citations, hidden)
    elif "@" in name and "+" not in name and name.rsplit("@", 1)[1] not in BACKENDS:
        inner, language = name.rsplit("@", 1)
        scorer = LanguagePairScorer(load_scorer(inner, papers, backend=backend, seed=seed,
                                                citations=citations, hidden=hidden,
                                                cache=cache), language)
    elif name in VIEWS:
        scorer = LexicalScorer(papers, VIEWS[name], name)
    elif name in METADATA_SCORERS:
        if corpus is None:
            raise UnknownScorerError(f"scorer {name!r} reads the papers' authors and years: "
                                     "it needs a corpus; here: " + ", ".join(available(papers)))
        scorer = metadata_scorer(papers, name)
    elif name in GRAPH_SCORERS:
        if corpus is None and citations is None:
            raise UnknownScorerError(f"scorer {name!r} reads the citation graph: it needs a "
                                     "corpus; here: " + ", ".join(available(papers)))
        scorer = GraphScorer(papers, name, citations, hidden, seed, like=next(
            (s for s in cache.values() if isinstance(s, GraphScorer)), None))
    elif name in AUTHOR_SCORERS:
        if corpus is None:
            raise UnknownScorerError(f"scorer {name!r} reads the papers' authors and the "
                                     "citation graph: it needs a corpus; here: "
                                     + ", ".join(available(papers)))
        scorer = AuthorshipScorer(papers, name, None, citations, hidden, like=next(
            (s for s in cache.values() if isinstance(s, AuthorshipScorer)), None))
    elif name in FUSIONS or ("+" in name and not _stored_dense(name, corpus)):
        spec = (fusion_spec(name, corpus) if name in FUSIONS
                else {"members": split_fusion(name), "method": "rrf", "weights": None})
        members = [load_scorer(m, papers, backend=backend, seed=seed, citations=citations,
                               hidden=hidden, cache=cache) for m in spec["members"]]
        scorer = Fusion(name, members, spec.get("weights"), spec.get("method", "rrf"),
                        fallbacks=fallbacks(name, spec))
    elif (adapter := find_adapter(name, corpus)) is not None:
        scorer = _adapted(adapter, papers)
    elif _is_dense(name) or _stored_dense(name, corpus):
        scorer = _dense(name, papers, backend)
    else:
        raise UnknownScorerError(f"unknown ranker {name!r}: expected one of "
                                 f"{', '.join(available(papers))}, a fusion A+B, NAME~prf, "
                                 "NAME~links, a SentenceTransformer directory or a Hugging Face "
                                 "name")
    cache[name] = scorer
    return scorer


def _stored_dense(name: str, corpus: Corpus | None) -> bool:
    from openmsd.models import model_slug

    return corpus is not None and (corpus.root / "vectors" / model_slug(name)).is_dir()


def find_adapter(name: str, corpus: Corpus | None) -> Path | None:
    """The adapter directory ``name`` stands for (a directory, or ``CORPUS/adapters/NAME``),
    or None (:func:`openmsd.models.find_adapter`)."""
    from openmsd.models import find_adapter as find

    return find(name, corpus) if "@" not in name else None


def _adapted(path: Path, papers: Papers) -> Scorer:
    """An adapter as a dense scorer: over a corpus, the adapted vectors stored under its name
    (``openmsd embed CORPUS --model NAME`` maps them); over files, its bases encode the texts
    and its head maps them. Free texts: encoded by its bases, then mapped."""
    from openmsd.models import AdapterError, load_model, read_adapter

    try:
        adapter = read_adapter(path)
    except AdapterError as error:
        raise UnknownScorerError(str(error)) from None
    words = f"similar text (adapter {adapter.name}, trained on this corpus's citations)"
    if papers.corpus is not None:
        try:
            scorer = DenseScorer.from_corpus(papers, adapter.name, encoder=lambda: load_model(
                str(path)))
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{papers.corpus.root}: no adapted vectors of {adapter.name!r}; run 'openmsd "
                f"embed {papers.corpus.root} --model {adapter.name}' (it maps the stored "
                "vectors of its bases)") from None
    else:
        encoder = load_model(str(path))
        scorer = DenseScorer.from_texts(papers, encoder, adapter.name)  # type: ignore[arg-type]
    scorer.words = words
    return scorer


def _dense(name: str, papers: Papers, backend: str) -> Scorer:
    if papers.corpus is not None:
        try:
            return DenseScorer.from_corpus(papers, name, backend)
        except FileNotFoundError as error:
            have = dense_models(papers.corpus)
            raise FileNotFoundError(f"{error}; models with vectors here: "
                                    f"{', '.join(have) or 'none'}") from None
    from openmsd.rank.dense import load_encoder

    return DenseScorer.from_texts(papers, load_encoder(name, backend), name)


def leaves(name: str, corpus: Corpus | None) -> list[str]:
    """The single scorers a name stands for (a fusion's members, recursively; ``NAME~prf``:
    those of ``NAME``)."""
    base, suffix = split_suffix(name) if "+" not in name else (name, None)
    if suffix is not None:
        return leaves(base, corpus)
    if name in FUSIONS:
        parts = fusion_spec(name, corpus)["members"]
    elif "+" in name and not _stored_dense(name, corpus):
        parts = split_fusion(name)
    else:
        return [name]
    return list(dict.fromkeys(leaf for part in parts for leaf in leaves(part, corpus)))


def is_builtin(name: str) -> bool:
    """Whether ``name`` is one of the scorers that are not a model (``random``, the BM25 views,
    the graph scorers, ``hybrid``, ``hybrid-graph``) or a fusion of several."""
    if "+" not in name and split_suffix(name)[1] is not None:
        return True
    return (name == "random" or name in VIEWS or name in GRAPH_SCORERS
            or name in AUTHOR_SCORERS or name in METADATA_SCORERS or name in FUSIONS
            or ("+" in name and len(split_fusion(name)) > 1))


def is_dense(name: str, corpus: Corpus | None = None) -> bool:
    """Whether a single scorer name is a dense model (reads stored or encoded vectors): a
    registered model, a directory, a hub name, or a name with vectors in ``corpus``."""
    if name.rsplit("@", 1)[-1] not in BACKENDS:
        name = name.rsplit("@", 1)[0]  # NAME@LANG: the model NAME
    if is_builtin(name):
        return False
    return _is_dense(name) or _stored_dense(name, corpus)
