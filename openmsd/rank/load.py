"""``load_scorer(name, papers)``: the only place a name becomes a scorer.

Names:

* ``random``; ``bm25`` (per-language BM25 of the paper's own text); ``bm25-en`` (BM25 of its
  English text, the cross-lingual lexical view);
* a dense model: a registered name (``openmsd models list``), a SentenceTransformer directory,
  an enriched name ``MODEL+llm64``, a Hugging Face name; over a corpus its stored vectors
  (``openmsd embed``), over files its texts encoded now;
* a graph scorer (:data:`openmsd.rank.graph.GRAPH_SCORERS`), over a corpus with citations;
  an author-habit scorer (:data:`openmsd.rank.authorship.AUTHOR_SCORERS`), over a corpus;
* ``NAME:BACKEND``: a dense model's vectors made by that backend (``torch``, ``onnx``;
  formerly ``NAME@onnx``);
* ``NAME@LANG``: scorer ``NAME`` heard only for pairs of papers both in ``LANG``
  (``minilm-en@en``: the English-only model for English pairs); ``NAME@same``: only for pairs
  in one language (``bm25@same``); ``NAME@cross``: only for pairs in two languages;
* ``NAME~prf``: pseudo-relevance feedback over ``NAME``; ``NAME~links``: ``NAME``'s scores
  carried over the citation graph (:mod:`openmsd.rank.feedback`);
* a fusion: ``A+B+…`` (reciprocal-rank fusion of the members), ``hybrid`` (text and
  metadata: what ``openmsd train ranker`` learned on the train and dev splits,
  else the z-score fusion (:data:`UNTUNED_METHODS`) of
  ``bm25@same``, the corpus's dense model, ``bm25-en@cross`` (words across languages, in
  English) in a corpus of several languages and, for English pairs, ``minilm-en@en`` where it
  can be had)
  and ``hybrid-graph`` (text and citation graph, likewise; untuned, by z-scores with the graph
  at half weight). Where ``openmsd train ranker`` has learned them, both are its models.

A name is parsed once, by :mod:`openmsd.rank.spec` (:class:`RankerSpec`); a name that names
nothing is a :class:`UnknownScorerError` listing the scorers this collection can have.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from openmsd.artifact import ArtifactError
from openmsd.corpus import UND, Corpus, corpus_languages
from openmsd.models import (
    DEFAULT_MODEL,
    MODELS,
    Adapter,
    AdapterError,
    check_mapped,
    corpus_adapters,
    default_backend,
    load_model,
    read_adapter,
)
from openmsd.models import find_adapter as find
from openmsd.rank.authorship import AUTHOR_SCORERS, AuthorshipScorer
from openmsd.rank.calibration import Calibration
from openmsd.rank.dense import DenseScorer, load_encoder
from openmsd.rank.feedback import Feedback, Propagated
from openmsd.rank.fusion import Fallback, Fusion
from openmsd.rank.graph import GRAPH_SCORERS, GraphScorer
from openmsd.rank.learned import LEARNED, learned_fusion
from openmsd.rank.lexical import VIEWS, LexicalScorer
from openmsd.rank.metadata import METADATA_SCORERS, metadata_scorer
from openmsd.rank.scorer import LanguagePairScorer, Papers, RandomScorer, Scorer
from openmsd.rank.spec import RankerSpec, RankerSpecError, UnknownScorerError, parse
from openmsd.rank.tuned_file import RankerEntry, read_tuned, write_tuned
from openmsd.vectors import ADAPTER_FILE, model_slug

HYBRID, HYBRID_GRAPH = "hybrid", "hybrid-graph"
FUSIONS = (HYBRID, HYBRID_GRAPH)
#: The English-only model an untuned ``hybrid`` adds for English pairs (``minilm-en@en``),
#: over files, or over a corpus that has its vectors (``openmsd embed CORPUS --model minilm-en``).
ENGLISH_MODEL = "minilm-en"
#: The words an untuned ``hybrid`` compares across languages, in a corpus of several languages.
CROSS_LEXICAL = "bm25-en@cross"
#: What ``hybrid-graph`` adds to ``hybrid`` when nothing is tuned.
DEFAULT_GRAPH_MEMBERS = ("citation", "co-citation", "shared-references")
#: The weight of each of those in the untuned ``hybrid-graph`` (its text members: 1): the
#: graph's counts are sparse, so their z-scores run high, and at full weight a paper whose one
#: tie to the query is a single shared reference outranks the query's same-topic papers in
#: other languages.
GRAPH_WEIGHT = 0.5
#: How the untuned fusions combine their members: CombSUM of each member's z-scores over the
#: query's candidates, so that a member's vote is as strong as its evidence (a lone match on
#: one word of a short query counts for little; one shared reference does not count as much
#: as the best text match, as reciprocal ranks would make it). On the TALN train and dev
#: queries ``hybrid``: 35.39 MAP against reciprocal ranks' 33.83; ``hybrid-graph`` on their
#: hidden links (graph members at :data:`GRAPH_WEIGHT`): 38.33 and 100.0 against 39.82 and
#: 91.89. ``openmsd train ranker`` learns what to trust instead, where the corpus has the
#: links to learn it from. :mod:`openmsd.rank.fusion`; docs/guides/fusion-and-tuning.md.
UNTUNED_METHODS = {HYBRID: "zscore", HYBRID_GRAPH: "zscore"}


Name = str | RankerSpec
"""A ranker: its name, or its parsed spec."""


def as_spec(name: Name) -> RankerSpec:
    """``name`` parsed (:func:`openmsd.rank.spec.parse`, silent about old spellings: a name
    read from a stored file, or passed on by code); a spec as it is."""
    return name if isinstance(name, RankerSpec) else parse(name)


def ranker_path(corpus: Corpus) -> Path:
    """Where ``openmsd train ranker`` keeps the trained rankers: beside the corpus's indexes."""
    return corpus.layout.ranker


def tuned(corpus: Corpus | None) -> dict[str, RankerEntry]:
    """The trained rankers of a corpus, name → :class:`~openmsd.rank.tuned_file.RankerEntry`;
    :class:`~openmsd.artifact.ArtifactError` when its file is damaged
    (:func:`~openmsd.rank.tuned_file.read_tuned`)."""
    if corpus is None or not ranker_path(corpus).exists():
        return {}
    return read_tuned(ranker_path(corpus), corpus.root)


def save_tuned(corpus: Corpus, specs: Mapping[str, RankerEntry | dict[str, Any]]) -> None:
    """Write the rankers ``specs`` to the corpus's :func:`ranker_path`, with the corpus build
    they were fitted on (:func:`~openmsd.rank.tuned_file.write_tuned`)."""
    build = corpus.manifest().get("build", {}).get("id")
    write_tuned(ranker_path(corpus), specs, build)


def dense_models(corpus: Corpus) -> list[str]:
    """The models with stored vectors or an index in ``corpus``, the most recently built
    first (``index/.builds``, where index builds are written before they are switched in,
    names no model)."""
    return corpus.layout.stored_keys()


def default_dense(corpus: Corpus | None) -> str:
    """The dense model a command uses when none is named: the corpus's adapter
    (:func:`corpus_adapter`), else one the corpus has vectors or an index for (the most
    recently built, the English-only :data:`ENGLISH_MODEL` last: it is the English pairs'
    member, never the model of every language), else the registry default."""
    adapter = corpus_adapter(corpus)
    if adapter is not None:
        return adapter.name
    if corpus is not None:
        indexed = [m for m in dense_models(corpus) if corpus.layout.index_dir(m).is_dir()]
        have = sorted(indexed or dense_models(corpus),
                      key=lambda key: parse(key).stored_model == ENGLISH_MODEL)
        if have:
            return have[0]
    return DEFAULT_MODEL


def multilingual(corpus: Corpus) -> bool:
    """Whether the corpus's papers are in more than one (known) language
    (:func:`openmsd.corpus.corpus_languages`, read once per build)."""
    if corpus.manifest().get("build", {}).get("id") is None:  # never ingested into
        return False
    return len([lang for lang in corpus_languages(corpus) if lang != UND]) > 1


def available(papers: Papers) -> list[str]:
    """The scorer names this collection can have."""
    names = ["random", *VIEWS]
    if papers.corpus is not None:
        names += [str(parse(key)) for key in dense_models(papers.corpus)] \
            or [default_dense(papers.corpus)]
        names += list(METADATA_SCORERS) + list(GRAPH_SCORERS) + list(AUTHOR_SCORERS)
        names += list(FUSIONS)
    else:
        names += [m for m in MODELS if m != "bm25"] + [HYBRID]
    return names


def split_fusion(name: str) -> list[str]:
    """The members of ``A+B+…`` as written; an enriched model name (``MODEL+llm64``) stays one
    member.

    >>> split_fusion("e5-small-multilingual+llm64+bm25")
    ['e5-small-multilingual+llm64', 'bm25']
    """
    spec = parse(name)
    return [str(m) for m in spec.members] if spec.is_fusion else [str(spec)]


def _is_dense(spec: RankerSpec) -> bool:
    """Whether a bare model spec names a model that encodes: registered, a directory, a hub
    name."""
    return spec.model in MODELS or Path(spec.model).is_dir() or "/" in spec.model


def fusion_spec(name: str, corpus: Corpus | None, dense: str | None = None) -> RankerEntry:
    """What ``hybrid`` / ``hybrid-graph`` stand for here: the tuned spec, else
    :func:`default_spec` (also where ``openmsd train ranker`` kept the untuned fusion because no
    learned one won out of fold: its record says ``"tuned": false``)."""
    spec = tuned(corpus).get(name)
    if spec and spec.tuned:
        return spec
    return default_spec(name, corpus, dense)


def default_spec(name: str, corpus: Corpus | None, dense: str | None = None) -> RankerEntry:
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
    if english is not None and parse(dense).stored_model != ENGLISH_MODEL \
            and ENGLISH_MODEL not in adapted:
        # English pairs also hear the English-only model, where it can be had (whichever
        # backend embedded it): for English queries it outranks the multilingual one
        # (docs/ranking.md); an adapter over it already holds it
        members.append(str(replace(parse(english), language="en")))
    if name == HYBRID_GRAPH:
        # A paper query has an English view (free text has not): its words meet the other
        # languages' papers in English, where bm25@same would rank only its own language's.
        members = [dense, "bm25-en", *DEFAULT_GRAPH_MEMBERS]
    members = [str(parse(member)) for member in members]  # the canonical spelling
    weights = [GRAPH_WEIGHT if name == HYBRID_GRAPH and member in DEFAULT_GRAPH_MEMBERS
               else 1.0 for member in members]
    record = {} if adapter is None else {"adapter": {
        "name": adapter.name, "path": str(adapter.path),
        "bases": [b["key"] for b in adapter.bases]}}
    return RankerEntry(tuple(members), UNTUNED_METHODS[name], tuple(weights), tuned=False,
                       record=record)


def english_key(corpus: Corpus | None) -> str | None:
    """The vector key of the English-only model an untuned ``hybrid`` adds for English pairs:
    ``minilm-en`` over files, else the key of its stored vectors in ``corpus``, whichever
    backend made them (``minilm-en`` or ``minilm-en@onnx``, the newest); None without."""
    if corpus is None:
        return ENGLISH_MODEL
    return next((key for key in dense_models(corpus)
                 if parse(key).stored_model == ENGLISH_MODEL), None)


def corpus_adapter(corpus: Corpus | None) -> Adapter | None:
    """The adapter the untuned fusions use in place of their dense model: the most recently
    trained of :func:`adapters_of`; None without."""
    found = adapters_of(corpus)
    return found[0] if found else None


def adapters_of(corpus: Corpus | None) -> list[Adapter]:
    """The adapters in ``CORPUS/adapters`` whose adapted vectors are stored (``openmsd train
    adapter``), the most recently trained first. An adapter that cannot be read, or one a
    killed swap left beside its place (``.NAME.old`` without ``NAME``), is an
    :class:`~openmsd.models.AdapterError` naming it: never passed over in silence."""
    if corpus is None or not corpus_adapters(corpus).is_dir():
        return []
    found = []
    for directory in corpus_adapters(corpus).iterdir():
        if directory.name.startswith(".") and directory.name.endswith(".old") and not (
                directory.parent / directory.name[1:-4]).exists():
            raise AdapterError(f"{directory}: an adapter whose replacement was interrupted; "
                               f"train it again with 'openmsd train adapter {corpus.root}'")
        if directory.name.startswith(".") or not directory.is_dir():
            continue
        adapter = read_adapter(directory)
        if corpus.layout.vector_parts(model_slug(adapter.name)):
            found.append(((directory / ADAPTER_FILE).stat().st_mtime_ns, adapter.name, adapter))
    return [f[2] for f in sorted(found, key=lambda f: f[:2], reverse=True)]


def fallbacks(name: str, spec: RankerEntry) -> list[Fallback]:
    """A ranker's fallbacks (members by name) as :class:`Fallback` over its members.

    >>> fallbacks("hybrid", RankerEntry.from_json({"members": ["bm25", "authors"], "fallbacks": [
    ...     {"silent": ["authors"], "members": ["bm25"], "weights": [1.0], "method": "rrf"}]}))
    [Fallback(silent=(1,), members=(0,), weights=(1.0,), method='rrf')]
    """
    where = {member: i for i, member in enumerate(spec.members)}
    out = []
    for entry in spec.fallbacks:
        unknown = [m for m in (*entry.silent, *entry.members) if m not in where]
        if unknown:
            raise ValueError(f"{name}: a fallback names {', '.join(unknown)}, which "
                             f"{name} does not hold ({', '.join(spec.members)})")
        out.append(Fallback(tuple(where[m] for m in entry.silent),
                            tuple(where[m] for m in entry.members), entry.weights,
                            entry.method))
    return out


#: What the scorers that need a corpus read, and whether a citation table given in its place
#: will do.
NEEDS_CORPUS: dict[str, tuple[str, bool]] = {
    **{name: ("the papers' authors and years", False) for name in METADATA_SCORERS},
    **{name: ("the citation graph", True) for name in GRAPH_SCORERS},
    **{name: ("the papers' authors and the citation graph", False) for name in AUTHOR_SCORERS},
    "links": ("the citation graph", True),
}


def unknown_scorer(why: str, papers: Papers) -> UnknownScorerError:
    """The error of a name this collection cannot rank with: ``why``, then what it can rank
    with (:func:`available`) and the forms a name can take."""
    return UnknownScorerError(
        f"{why}; expected one of {', '.join(available(papers))}, a fusion A+B, NAME@LANG, "
        "NAME:BACKEND, NAME~prf, NAME~links, a SentenceTransformer directory or a Hugging "
        "Face name")


def _check_corpus(name: RankerSpec, what: str, papers: Papers,
                  citations: pa.Table | None) -> None:
    """:func:`unknown_scorer` when ``what`` (a scorer or a modifier of :data:`NEEDS_CORPUS`)
    needs a corpus that ``papers`` lack."""
    reads, cited = NEEDS_CORPUS.get(what, ("", False))
    if reads and papers.corpus is None and not (cited and citations is not None):
        raise unknown_scorer(f"scorer {str(name)!r} reads {reads}: it needs a corpus", papers)


def load_scorer(name: Name, papers: Papers, *, backend: str | None = None, seed: int = 0,
                citations: pa.Table | None = None,
                hidden: Collection[tuple[str, str]] = (),
                cache: dict[str, Scorer] | None = None) -> Scorer:
    """The scorer ``name`` over ``papers``. A dense model encodes with ``backend``, else the
    backend its vector key names, else (over files) its default backend, as ``embed`` does
    (:func:`openmsd.models.default_backend`). ``citations`` (``citing_id``, ``cited_id``)
    replaces the corpus's for graph scorers, ``hidden`` links are left out of the graph;
    ``cache`` shares members between the scorers of one run (keyed by canonical name, and by
    ``name`` as given)."""
    spec = as_spec(name)
    cache = {} if cache is None else cache
    key = str(spec)
    if key not in cache:
        def load(inner: RankerSpec) -> Scorer:
            return load_scorer(inner, papers, backend=backend, seed=seed, citations=citations,
                               hidden=hidden, cache=cache)
        cache[key] = _build(spec, papers, load, backend, seed, citations, hidden, cache)
    if isinstance(name, str):
        cache[name] = cache[key]
    return cache[key]


@dataclass(frozen=True)
class Context:
    """What a scorer family builds with beyond its spec and papers: the backend of a dense
    model, the seed, the citation table and hidden links of the graph scorers, and the run's
    cache of scorers (for one graph shared by all the graph scorers)."""

    backend: str | None
    seed: int
    citations: pa.Table | None
    hidden: Collection[tuple[str, str]]
    cache: dict[str, Scorer]

    def like(self, kind: type) -> Any:
        """A scorer of ``kind`` the run has built already (its structures are shared)."""
        return next((s for s in self.cache.values() if isinstance(s, kind)), None)


@dataclass(frozen=True)
class ScorerFamily:
    """A kind of single scorer: whether a spec names one of its kind (``matches(spec,
    corpus)``, a plain name for the built-in families) and how to build it (``build(spec,
    papers, context)``). A new family is its module and one entry of :data:`FAMILIES`."""

    name: str
    matches: Callable[[RankerSpec, Corpus | None], bool]
    build: Callable[[RankerSpec, Papers, Context], Scorer]


def _plain(names: Collection[str]) -> Callable[[RankerSpec, Corpus | None], bool]:
    """Whether a spec is one of ``names``, written plain (no backend, language or
    modifier)."""
    return lambda spec, corpus: str(spec) == spec.model and spec.model in names


#: The single scorers, asked in order; the first whose ``matches`` holds builds.
FAMILIES: tuple[ScorerFamily, ...] = (
    ScorerFamily("random", _plain({"random"}),
                 lambda spec, papers, c: RandomScorer(papers, c.seed)),
    ScorerFamily("lexical", _plain(VIEWS),
                 lambda spec, papers, c: LexicalScorer(papers, VIEWS[spec.model], spec.model,
                                                       like=c.like(LexicalScorer))),
    ScorerFamily("metadata", _plain(METADATA_SCORERS),
                 lambda spec, papers, c: metadata_scorer(papers, spec.model)),
    ScorerFamily("graph", _plain(GRAPH_SCORERS),
                 lambda spec, papers, c: GraphScorer(papers, spec.model, c.citations, c.hidden,
                                                     c.seed, like=c.like(GraphScorer))),
    ScorerFamily("authorship", _plain(AUTHOR_SCORERS),
                 lambda spec, papers, c: AuthorshipScorer(papers, spec.model, None,
                                                          c.citations, c.hidden,
                                                          like=c.like(AuthorshipScorer))),
    ScorerFamily("adapter", lambda spec, corpus: find_adapter(spec, corpus) is not None,
                 lambda spec, papers, c: _adapted(_adapter_path(spec, papers), papers)),
    ScorerFamily("dense", lambda spec, corpus: _is_dense(spec) or _stored_dense(spec, corpus),
                 lambda spec, papers, c: _dense(spec.vector_key, papers, c.backend)),
)


def _build(spec: RankerSpec, papers: Papers, load: Any, backend: str | None, seed: int,
           citations: pa.Table | None, hidden: Collection[tuple[str, str]],
           cache: dict[str, Scorer]) -> Scorer:
    """The scorer of one spec: a fusion, a modified or language-kept scorer (``load(spec)``
    gives those of the specs it is made of), or the first of :data:`FAMILIES` it names."""
    corpus = papers.corpus
    if spec.is_fusion or (spec.model in FUSIONS and str(spec) == spec.model):
        return _fusion(spec, corpus, load)
    if spec.modifiers:
        modifier = spec.modifiers[-1]
        inner = load(spec.inner)
        _check_corpus(spec, modifier, papers, citations)
        return Feedback(inner) if modifier == "prf" else Propagated(inner, citations, hidden)
    if spec.language:
        return LanguagePairScorer(load(spec.inner), spec.language)
    _check_corpus(spec, spec.model if str(spec) == spec.model else "", papers, citations)
    context = Context(backend, seed, citations, hidden, cache)
    for family in FAMILIES:
        if family.matches(spec, corpus):
            return family.build(spec, papers, context)
    raise unknown_scorer(f"unknown ranker {str(spec)!r}", papers)


def _fusion(spec: RankerSpec, corpus: Corpus | None, load: Any) -> Scorer:
    """A fusion: ``hybrid`` / ``hybrid-graph`` as :func:`fusion_spec` says, or ``A+B``
    (reciprocal-rank fusion, weighted where the name gives weights)."""
    if spec.is_fusion:
        members, weights, method = list(spec.members), spec.weights, "rrf"
        found: RankerEntry | None = None
    else:
        found = fusion_spec(spec.model, corpus)
        members = [parse(m) for m in found.members]
        weights, method = found.weights, found.method
    try:
        if method == LEARNED and found is not None:
            return learned_fusion(str(spec), [load(m) for m in members], found)
        calibration = (Calibration.from_dict(found.calibration)
                       if found and found.calibration is not None else None)
    except ArtifactError as error:
        raise ArtifactError.damaged(ranker_path(corpus) if corpus else "ranker", str(error),
                                    f"openmsd train ranker {corpus.root if corpus else 'CORPUS'}"
                                    ) from None
    return Fusion(str(spec), [load(m) for m in members], weights, method,
                  fallbacks=fallbacks(str(spec), found) if found else [],
                  calibration=calibration)


def _stored_dense(spec: RankerSpec, corpus: Corpus | None) -> bool:
    """Whether ``corpus`` holds vectors under the spec's vector key."""
    return corpus is not None and corpus.layout.vector_dir(model_slug(spec.vector_key)).is_dir()


def find_adapter(name: Name, corpus: Corpus | None) -> Path | None:
    """The adapter directory ``name`` stands for (a directory, or ``CORPUS/adapters/NAME``),
    or None (:func:`openmsd.models.find_adapter`): a name with a backend, a language or
    modifiers is none."""
    spec = as_spec(name)
    plain = not spec.is_fusion and str(spec) == spec.model
    return find(spec.model, corpus) if plain else None


def _adapter_path(spec: RankerSpec, papers: Papers) -> Path:
    """The adapter directory ``spec`` names (:func:`find_adapter`)."""
    path = find_adapter(spec, papers.corpus)
    if path is None:
        raise unknown_scorer(f"no adapter {str(spec)!r}", papers)
    return path


def _adapted(path: Path, papers: Papers) -> Scorer:
    """An adapter as a dense scorer: over a corpus, the adapted vectors stored under its name
    (``openmsd embed CORPUS --model NAME`` maps them); over files, its bases encode the texts
    and its head maps them. Free texts: encoded by its bases, then mapped."""
    adapter = read_adapter(path)  # a damaged one: AdapterError, naming its file
    # an identity head changes no vector: its results are the base's, said as such
    words = ("similar text" if adapter.head.kind == "identity" else
             f"similar text (adapter {adapter.name}, trained on this corpus's citations)")
    if papers.corpus is not None:
        check_mapped(papers.corpus, adapter)  # vectors of this head, not of the one before
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


def _dense(name: str, papers: Papers, backend: str | None) -> Scorer:
    """A dense model's scorer: over a corpus its stored vectors (a key without a backend:
    PyTorch's), over files its texts encoded now, with ``backend`` or the model's default."""
    if papers.corpus is not None:
        try:
            return DenseScorer.from_corpus(papers, name, backend or "torch")
        except FileNotFoundError as error:
            have = dense_models(papers.corpus)
            raise FileNotFoundError(f"{error}; models with vectors here: "
                                    f"{', '.join(have) or 'none'}") from None
    return DenseScorer.from_texts(
        papers, load_encoder(name, backend or default_backend(parse(name).model)), name)


def leaves(name: Name, corpus: Corpus | None) -> list[RankerSpec]:
    """The single scorers a name stands for (a fusion's members, recursively; ``NAME~prf``:
    those of ``NAME``), each once, in order."""
    spec = as_spec(name)
    if spec.modifiers:
        return leaves(replace(spec, modifiers=()), corpus)
    if spec.is_fusion:
        parts = list(spec.members)
    elif spec.model in FUSIONS and str(spec) == spec.model:
        parts = [parse(m) for m in fusion_spec(spec.model, corpus).members]
    else:
        return [spec]
    return list(dict.fromkeys(leaf for part in parts for leaf in leaves(part, corpus)))


BUILTIN = frozenset({"random", *VIEWS, *GRAPH_SCORERS, *AUTHOR_SCORERS, *METADATA_SCORERS,
                     *FUSIONS})
"""The scorers that are not a model."""


def is_builtin(name: Name) -> bool:
    """Whether ``name`` is one of the scorers that are not a model (``random``, the BM25 views,
    the graph scorers, ``hybrid``, ``hybrid-graph``), a modified one (``NAME~prf``) or a fusion
    of several; a name against the grammar is no model either."""
    try:
        spec = as_spec(name)
    except RankerSpecError:
        return True
    return spec.is_fusion or bool(spec.modifiers) or str(spec) in BUILTIN


def is_dense(name: Name, corpus: Corpus | None = None) -> bool:
    """Whether a single scorer name is a dense model (reads stored or encoded vectors): a
    registered model, a directory, a hub name, or a name with vectors in ``corpus``
    (``NAME@LANG``: the model ``NAME``); a name against the grammar is none."""
    try:
        spec = as_spec(name)
    except RankerSpecError:
        return False
    if not spec.is_fusion:
        spec = replace(spec, language=None)
    if is_builtin(spec):
        return False
    return _is_dense(spec) or _stored_dense(spec, corpus)
