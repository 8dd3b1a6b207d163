"""Citation-graph scorers for a paper of the corpus.

Over the corpus citation graph (``citations.parquet``; every corpus paper is a node, whether it
is a candidate or not), with ``A`` the citing → cited adjacency matrix:

* ``citation``: a direct citation, either way (``A + Aᵀ``, 0 or 1);
* ``co-citation``: papers citing both (``AᵀA``);
* ``coupling``: references both cite (``AAᵀ``, bibliographic coupling);
* ``adamic-adar``: shared neighbours of the undirected graph, each weighted by 1 / log(degree);
* ``ppr``: personalised PageRank from the query paper (scikit-network);
* ``scincl-graph``: cosine of the RandNE graph embedding SciNCL mines its triples from
  (:mod:`openmsd.relations.scincl`), the teacher of OpenMSD's Table 7, as a ranker;
* ``shared-references``: bibliographic coupling through **every** reference
  (``references.parquet``), inside the corpus or not: two papers citing the same work (the
  corpus paper it resolved to, else its normalised title) are coupled, each shared work weighted
  by 1 / log(1 + the number of corpus papers citing it). Most references of a corpus point
  outside it (TALN: 14,900 references, 644 resolved), so this couples far more pairs than
  ``coupling``.

A free-text query, or a paper with no link, gets no graph score (``-inf``: no evidence, as
for every pair without a shared link): fusion then ranks it by text alone. ``hidden`` links
(pairs of paper ids) are left out of the graph (the hidden-links evaluation).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import sparse

from openmsd.identifiers import normalize_title
from openmsd.io import arrow_table, numbers
from openmsd.models import normalise
from openmsd.rank.scorer import ExactScorer, Papers, Queries, best_of

GRAPH_SCORERS = ("citation", "co-citation", "coupling", "adamic-adar", "ppr", "scincl-graph",
                 "shared-references")
#: The scorers whose scores for a query are a sparse row of the graph (the papers it links to)
SPARSE = ("citation", "co-citation", "coupling", "adamic-adar", "shared-references")
#: A reference title shorter than this (characters, normalised) names no work ("Introduction").
MIN_TITLE = 15


def corpus_citations(papers: Papers) -> pa.Table:
    """``citing_id``, ``cited_id`` of the collection's corpus, both ends corpus papers."""
    if papers.corpus is None:
        return pa.table({"citing_id": pa.array([], pa.string()),
                         "cited_id": pa.array([], pa.string())})
    return arrow_table(papers.corpus.connect(),
                       "SELECT DISTINCT citing_id, cited_id FROM citations "
                       "WHERE citing_id IS NOT NULL AND cited_id IS NOT NULL "
                       "AND citing_id <> cited_id ORDER BY ALL")


def _strings(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as one string array (a column of nulls only, typed ``null``, as strings)."""
    if isinstance(column, pa.ChunkedArray):
        column = (column.combine_chunks() if column.num_chunks
                  else pa.array([], column.type))  # type: ignore[assignment]
    return column.cast(pa.string())


def _not_hidden(citing: pa.Array, cited: pa.Array, hidden: Collection[tuple[str, str]]
                ) -> np.ndarray:
    """Per row, whether the pair ``(citing, cited)`` is none of the ``hidden`` pairs (either
    direction); a row without a cited paper is never hidden."""
    secret = {frozenset(pair) for pair in hidden}
    return np.array([b is None or frozenset((a, b)) not in secret
                     for a, b in zip(citing.to_pylist(), cited.to_pylist(), strict=True)],
                    bool)


def _codes(values: list[pa.Array], known: dict[str, int]) -> list[np.ndarray]:
    """Node numbers of the ids in ``values`` (arrays read in turn, element by element across
    them: ``values[0][0], values[1][0], values[0][1], ...``): an id of ``known`` its number
    there, any other the next number after them in the order first seen (a null is one id too),
    as ``dict.setdefault(id, len(dict))`` over that sequence numbers them, without a Python
    object per id."""
    keys = pa.array(list(known), pa.string())
    numbers_of = np.array(list(known.values()), np.int64)
    found = [numbers(pc.fill_null(pc.index_in(v, value_set=keys), -1)).astype(np.int64)
             for v in values]
    out = [np.where(f >= 0, numbers_of[np.maximum(f, 0)], -1) if len(numbers_of)
           else np.full(len(f), -1, np.int64) for f in found]
    # the unknown ids, in the order they are met, numbered after the known ones
    where = np.concatenate([np.flatnonzero(f < 0) * len(values) + i
                            for i, f in enumerate(found)])
    if len(where):
        order = np.argsort(where, kind="stable")
        met = pa.concat_arrays([v.filter(pa.array(f < 0)) for v, f in zip(values, found,
                                                                           strict=True)])
        first = pc.dictionary_encode(met.take(pa.array(order)), null_encoding="encode")
        new = np.empty(len(where), np.int64)
        new[order] = len(known) + numbers(first.indices).astype(np.int64)
        start = 0
        for i, f in enumerate(found):
            unknown = np.flatnonzero(f < 0)
            out[i][unknown] = new[start:start + len(unknown)]
            start += len(unknown)
    return out


def adjacency(papers: Papers, citations: pa.Table,
              hidden: Collection[tuple[str, str]] = (),
              others: Sequence[str] = ()) -> tuple[sparse.csr_matrix, int]:
    """The citing → cited 0/1 matrix over the collection's papers first (rows 0..n-1), then
    ``others`` (more node ids, in order: linked or not) and the other papers of the citations
    after them; hidden pairs (either direction) left out. The ids are numbered with Arrow, not
    as Python strings (a million-paper corpus has tens of millions of citations)."""
    nodes = dict(papers.position)
    for paper in others:
        nodes.setdefault(paper, len(nodes))
    citing, cited = _strings(citations["citing_id"]), _strings(citations["cited_id"])
    if hidden:
        keep = pa.array(_not_hidden(citing, cited, hidden))
        citing, cited = citing.filter(keep), cited.filter(keep)
    src, dst = _codes([citing, cited], nodes)
    n = max(len(nodes), int(max(src.max(initial=-1), dst.max(initial=-1))) + 1)
    matrix = sparse.csr_matrix((np.ones(len(src), np.float32), (src, dst)), shape=(n, n))
    matrix.data[:] = 1.0  # repeated rows count once
    return matrix, n


def work_key(cited_id: str | None, title: str | None, target: str | None = None
             ) -> str | None:
    """The work a reference names: the corpus paper it resolved to, else the identifier it
    gives (an OpenAlex id, a DOI: ``target``), else its title folded
    (:func:`openmsd.identifiers.normalize_title`), ``None`` when it has none of them (or a
    title too short to name a work).

    >>> work_key(None, "Introduction to WordNet: an on-line lexical database")
    't:introduction to wordnet an on line lexical database'
    >>> work_key("taln-2004-001", "whatever"), work_key(None, "Introduction")
    ('p:taln-2004-001', None)
    >>> work_key(None, None, "openalex:W9000")
    'i:openalex:W9000'
    """
    if cited_id:
        return f"p:{cited_id}"
    if target:
        return f"i:{target}"
    if not title:
        return None
    key = normalize_title(title)
    return f"t:{key}" if len(key) >= MIN_TITLE else None


def corpus_references(papers: Papers) -> pa.Table:
    """``citing_id``, ``cited_id`` (null when unresolved) and ``title`` of every reference of
    the collection's corpus (``shared-references`` over given ``citations`` reads those
    instead, with no title)."""
    empty = pa.table({"citing_id": pa.array([], pa.string()),
                      "cited_id": pa.array([], pa.string()), "title": pa.array([], pa.string()),
                      "target": pa.array([], pa.string())})
    if papers.corpus is None:
        return empty
    con = papers.corpus.connect()
    if "references" not in {row[0] for row in con.execute("SHOW TABLES").fetchall()}:
        return empty
    return arrow_table(con, 'SELECT citing_id, cited_id, title, targets[1] AS target '
                            'FROM "references" WHERE citing_id IS NOT NULL ORDER BY ALL')


def _work_keys(cited: pa.Array, titles: pa.Array, targets: pa.Array) -> pa.Array:
    """:func:`work_key` of each reference: the corpus paper's and the identifier's with
    Arrow, a title folded in Python only where the reference has neither."""
    resolved = pc.fill_null(pc.not_equal(cited, ""), False)
    named = pc.and_(pc.invert(resolved), pc.fill_null(pc.not_equal(targets, ""), False))
    keys = pc.if_else(resolved, pc.binary_join_element_wise("p:", cited, ""),
                      pc.if_else(named, pc.binary_join_element_wise("i:", targets, ""),
                                 pa.scalar(None, pa.string())))
    by_title = np.flatnonzero(numbers(pc.and_(pc.invert(resolved), pc.invert(named))
                                      .cast(pa.uint8())).astype(bool))
    if not len(by_title):
        return keys
    folded = [work_key(None, title) for title in titles.take(pa.array(by_title)).to_pylist()]
    replace = np.zeros(len(keys), bool)
    replace[by_title] = True
    values = np.empty(len(keys), object)
    values[by_title] = folded
    return pc.if_else(pa.array(replace), pa.array(values, pa.string(), from_pandas=True), keys)


def reference_works(papers: Papers, references: pa.Table,
                    hidden: Collection[tuple[str, str]] = ()
                    ) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The collection's papers × the works they cite (:func:`work_key`), each work weighted by
    1 / log(1 + its number of citing corpus papers), and for each column whether the work is
    outside the corpus (named by an identifier or its title: no reference to it resolved to a
    corpus paper); a
    reference whose (citing, cited) pair is hidden (either direction) is left out, before the
    weights are counted. Works and citing papers are numbered in the order the references
    first name them, with Arrow (tens of millions of references at a million papers)."""
    citing, cited = _strings(references["citing_id"]), _strings(references["cited_id"])
    titles = _strings(references["title"])
    targets = (_strings(references["target"]) if "target" in references.column_names
               else pa.nulls(references.num_rows, pa.string()))
    keys = _work_keys(cited, titles, targets)
    keep = pc.and_(keys.is_valid(), pc.invert(pc.fill_null(pc.equal(citing, cited), False)))
    keep = pc.and_(keep, pc.invert(pc.and_(citing.is_null(), cited.is_null())))
    if hidden:
        keep = pc.and_(keep, pa.array(_not_hidden(citing, cited, hidden)))
    citing, keys = citing.filter(keep), keys.filter(keep)
    if len(keys) == 0:
        return sparse.csr_matrix((len(papers), 1), dtype=np.float32), np.zeros(1, bool)
    # each citing paper and each work numbered in the order first met
    by_paper = pc.dictionary_encode(citing, null_encoding="encode")
    by_work = pc.dictionary_encode(keys)
    works = len(by_work.dictionary)
    pairs = np.sort(numbers(by_paper.indices).astype(np.int64) * works
                    + numbers(by_work.indices).astype(np.int64))
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]]  # sorted, once each
    rows, columns = pairs // works, pairs % works
    df = np.bincount(columns, minlength=works).astype(np.float32)
    weight = (1 / np.log1p(df)).astype(np.float32)
    # re-index the citing papers to the collection's rows (others count only in the weights)
    position = papers.position
    row_of = np.array([position.get(paper, -1) for paper in by_paper.dictionary.to_pylist()],
                      np.int64)
    keep_rows = row_of[rows] >= 0
    outside = numbers(pc.invert(pc.starts_with(by_work.dictionary, "p:")).cast(pa.uint8())
                      ).astype(bool)
    return sparse.csr_matrix((weight[columns[keep_rows]],
                              (row_of[rows[keep_rows]], columns[keep_rows])),
                             shape=(len(papers), works)), outside


def describe_shared(count: int, outside: int) -> str:
    """What a result's shared references say, in words.

    >>> describe_shared(3, 2), describe_shared(1, 0)
    ('3 shared references, 2 outside the corpus', '1 shared reference')
    """
    said = f"{count} shared reference{'s' if count > 1 else ''}"
    return f"{said}, {outside} outside the corpus" if outside else said


def shared_works(works: sparse.csr_matrix, outside: np.ndarray, row: int,
                 candidates: np.ndarray) -> list[str | None]:
    """What each candidate row shares with paper ``row`` through :func:`reference_works`'s
    ``works`` and ``outside``, in words (:func:`describe_shared`); None where nothing, and for
    the paper itself or a free-text query (row -1)."""
    if row < 0:
        return [None] * len(candidates)
    mine = works[row].indices
    out: list[str | None] = []
    for candidate in np.asarray(candidates, np.int64):
        both = np.intersect1d(mine, works[candidate].indices)
        out.append(describe_shared(len(both), int(outside[both].sum()))
                   if len(both) and candidate != row else None)
    return out


class GraphScorer(ExactScorer):
    """One of :data:`GRAPH_SCORERS` over the collection's citation graph."""

    signal = "graph"
    positive_only = True

    def __init__(self, papers: Papers, kind: str, citations: pa.Table | None = None,
                 hidden: Collection[tuple[str, str]] = (), seed: int = 0,
                 like: GraphScorer | None = None):
        """``like``: another graph scorer of the same collection, citations and hidden links,
        whose graph this one shares (read and built once for several kinds)."""
        if kind not in GRAPH_SCORERS:
            raise ValueError(f"unknown graph scorer {kind!r}: expected one of "
                             f"{', '.join(GRAPH_SCORERS)}")
        self.papers, self.name, self.seed = papers, kind, seed
        given = citations if citations is None else citations.select(["citing_id", "cited_id"])
        self.generates = kind in SPARSE  # its top_k: the query's sparse row, not every paper
        self.source = (id(citations) if citations is not None else None,
                       frozenset(frozenset(pair) for pair in hidden))
        if like is not None and like.papers is papers and like.source == self.source:
            self.adjacency, self.n_nodes = like.adjacency, like.n_nodes
            self.undirected, self.cited_by = like.undirected, like.cited_by
            self.inverse_log_degree = like.inverse_log_degree
        else:
            citations = corpus_citations(papers) if citations is None else citations
            self.adjacency, self.n_nodes = adjacency(papers, citations, hidden)
            a = self.adjacency
            self.undirected = ((a + a.T) > 0).astype(np.float32).tocsr()
            self.cited_by = a.T.tocsr()  # row n: the papers citing n
            degree = np.asarray(self.undirected.sum(axis=1)).ravel()
            self.inverse_log_degree = sparse.diags(
                np.where(degree > 1, 1 / np.log(np.maximum(degree, 2)), 0.0).astype(np.float32))
        self.works: sparse.csr_matrix | None = None  # papers × cited works, weighted
        self.outside = np.zeros(0, bool)  # per work: outside the corpus
        if kind == "shared-references":
            shared = (like if like is not None and like.papers is papers
                      and like.source == self.source and like.works is not None else None)
            self.works, self.outside = (shared.works, shared.outside) if shared else \
                reference_works(papers, corpus_references(papers) if given is None else
                                given.append_column("title", pa.nulls(given.num_rows,
                                                                      pa.string())), hidden)
            self.cites = (self.works > 0).astype(np.float32).T.tocsr()
        self.embedding = self._embed(self.undirected) if kind == "scincl-graph" else None

    def rows(self, nodes: np.ndarray) -> sparse.csr_matrix:
        """The scores of every node for query ``nodes`` (sparse rows, computed per query: a
        whole co-citation matrix of a large graph would not fit in memory)."""
        a, u = self.adjacency, self.undirected
        if self.name == "citation":
            return u[nodes]
        if self.name == "co-citation":
            return self.cited_by[nodes] @ a
        if self.name == "coupling":
            return a[nodes] @ self.cited_by
        if self.works is not None:  # shared-references (query nodes are collection rows)
            return self.works[nodes] @ self.cites
        return u[nodes] @ self.inverse_log_degree @ u  # adamic-adar

    def describe(self, row: int, candidates: np.ndarray) -> list[str | None]:
        """For ``shared-references``, what each candidate row shares with paper ``row`` in
        words ("3 shared references, 2 outside the corpus"); None where nothing (and for the
        other kinds, which :func:`openmsd.search.related.explain` describes from the graph)."""
        if self.works is None:
            return [None] * len(candidates)
        return shared_works(self.works, self.outside, row, candidates)

    def top_k(self, queries: Queries, k: int, filters: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best linked papers; for :data:`SPARSE` scorers only the query's sparse
        row is read (the same ranking as scoring every paper)."""
        if not self.generates:
            return super().top_k(queries, k, filters)
        rows = np.full((len(queries), k), -1, np.int64)
        scores = np.full((len(queries), k), -np.inf, np.float32)
        for i, (linked, values) in self._sparse_rows(queries).items():
            node = queries.rows[i]
            keep = (linked < len(self.papers)) & (linked != node) & (values > 0)
            if filters is not None:
                keep &= np.asarray(filters, bool)[np.minimum(linked, len(self.papers) - 1)]
            order = np.argsort(linked[keep], kind="stable")
            found, value = best_of(values[keep][order][None, :], linked[keep][order], k)
            rows[i, :found.shape[1]], scores[i, :found.shape[1]] = found[0], value[0]
        return rows, scores

    def _sparse_rows(self, queries: Queries) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """For each paper query (by position), the nodes its :meth:`rows` links and their
        float32 scores: one sparse product for all of them."""
        linked = np.flatnonzero(queries.rows >= 0)
        if len(linked) == 0:
            return {}
        block = self.rows(queries.rows[linked]).tocsr()
        block.sum_duplicates()
        out = {}
        for j, i in enumerate(linked):
            start, end = block.indptr[j], block.indptr[j + 1]
            out[int(i)] = (block.indices[start:end], block.data[start:end].astype(np.float32))
        return out

    def score_pools(self, queries: Queries, pools: list[np.ndarray]) -> list[np.ndarray]:
        """:func:`openmsd.rank.scorer.score_pools`: for :data:`SPARSE` scorers, every query's
        row in one sparse product."""
        if self.name not in SPARSE:
            return [self.score(queries.subset([i]), pool)[0] for i, pool in enumerate(pools)]
        found = self._sparse_rows(queries)
        out = []
        for i, pool in enumerate(pools):
            scores = np.full(len(pool), -np.inf, np.float32)
            if i in found and len(pool):
                linked, values = found[i]
                at = np.minimum(np.searchsorted(pool, linked), len(pool) - 1)
                hit = (pool[at] == linked) & (values > 0)
                scores[at[hit]] = values[hit]
            out.append(scores)
        return out

    def _embed(self, undirected: sparse.csr_matrix) -> np.ndarray:
        from openmsd.relations import RandomProjectionEmbedder  # lazy: loads pandas (~1.4 s)

        coo = sparse.triu(undirected).tocoo()
        if coo.nnz == 0:
            return np.zeros((self.n_nodes, 1), np.float32)
        dim = min(128, self.n_nodes)
        vectors = RandomProjectionEmbedder(dim=dim, seed=self.seed)((coo.row, coo.col),
                                                                    self.n_nodes)
        linked = np.asarray(undirected.sum(axis=1)).ravel() > 0
        vectors[~linked] = 0  # no link: no position in the graph
        return normalise(vectors)

    def _ppr(self, node: int) -> np.ndarray:
        from sknetwork.ranking import PageRank  # lazy: sknetwork takes ~1.1 s to import

        if self.undirected[node].nnz == 0:
            return np.zeros(self.n_nodes, np.float32)
        scores = PageRank(damping_factor=0.85).fit_predict(self.undirected, weights={node: 1})
        scores = np.asarray(scores, np.float32)
        scores[node] = 0
        return scores

    def score(self, queries: Queries, candidates: np.ndarray) -> np.ndarray:
        candidates = np.asarray(candidates, np.int64)
        out = np.full((len(queries), len(candidates)), -np.inf, np.float32)
        linked = np.flatnonzero(queries.rows >= 0)
        if len(linked) == 0:
            return out
        nodes = queries.rows[linked]
        if self.name in SPARSE:
            block = self.rows(nodes)[:, candidates].toarray()
        elif self.embedding is not None:
            block = self.embedding[nodes] @ self.embedding[candidates].T
            block[~self.embedding[nodes].any(axis=1)] = -np.inf
            block[:, ~self.embedding[candidates].any(axis=1)] = -np.inf
            out[linked] = block
            return out
        else:
            block = np.vstack([self._ppr(int(n))[candidates] for n in nodes])
        out[linked] = np.where(block > 0, block, -np.inf)
        return out
