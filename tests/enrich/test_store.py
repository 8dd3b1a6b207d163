"""author / topn summaries stored per paper, method and length; reruns; enriched vectors."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from openmsd.corpus import Corpus, current_summaries, enriched_name, parse_enriched, summaries_dir
from openmsd.corpus.summaries import read_summaries
from openmsd.enrich import EnrichError, SummaryTokenizer, enrich
from openmsd.models import embed_corpus, load_model, load_vectors, paper_input


def test_author_summaries_counts_and_rerun(corpus_dir):
    corpus = Corpus(corpus_dir)
    first = enrich(corpus, "author", 64)
    assert (first.enriched, first.cached, first.skipped_english, first.failed) == (2, 0, 1, 2)
    assert first.failed_reasons == {"the source has no English title or abstract": 2}
    summaries = current_summaries(corpus, "author", 64)
    assert summaries == {
        "fr-parse": "We present a statistical dependency parser for French, trained on a "
                    "treebank of newspaper sentences, and evaluate it on three corpora.",
        "fr-title": "A part-of-speech tagger for spoken French"}
    assert read_summaries(corpus, "author", 64)["source"].to_pylist() == ["author", "author"]
    again = enrich(corpus, "author", 64)
    assert (again.enriched, again.cached, again.failed) == (0, 2, 2)
    report = summaries_dir(corpus, "author", 64) / "report.json"
    assert report.exists() and b"fr-mt" in report.read_bytes()


def test_summaries_cut_to_length_and_kept_per_length(corpus_dir):
    corpus = Corpus(corpus_dir)
    enrich(corpus, "author", 64)
    enrich(corpus, "topn", 128)
    short = current_summaries(corpus, "author", 64)["fr-parse"]
    assert SummaryTokenizer().count(short) <= 64
    assert set(current_summaries(corpus, "topn", 128)) == {"fr-parse"}
    assert (summaries_dir(corpus, "author", 64) != summaries_dir(corpus, "topn", 128))


def test_topn_without_a_translator(corpus_dir):
    corpus = Corpus(corpus_dir)
    result = enrich(corpus, "topn", 64)
    assert result.enriched == 1  # fr-parse: its authors' English abstract
    assert result.no_abstract == 1  # fr-title: no abstract
    assert result.failed_reasons == {
        "no English abstract in the source and no translator backend": 2}


def test_stale_summary_is_redone_when_the_text_changes(corpus_dir):
    corpus = Corpus(corpus_dir)
    enrich(corpus, "author", 64)
    path = corpus.table_path("papers")
    table = pq.read_table(path)
    titles = table["title"].to_pylist()
    i = table["paper_id"].to_pylist().index("fr-parse")
    titles[i] = "Analyse syntaxique en dépendances du français, deuxième version"
    import pyarrow as pa

    table = table.set_column(table.schema.get_field_index("title"), "title",
                             pa.array(titles, pa.string()))
    pq.write_table(table.replace_schema_metadata(pq.read_schema(path).metadata), path)
    assert "fr-parse" not in current_summaries(corpus, "author", 64)
    assert enrich(corpus, "author", 64).enriched == 1


def test_bad_method_length_and_missing_backend(corpus_dir):
    corpus = Corpus(corpus_dir)
    with pytest.raises(EnrichError, match="unknown method"):
        enrich(corpus, "abstractive", 64)
    with pytest.raises(EnrichError, match="length must be one of 64, 128"):
        enrich(corpus, "author", 100)
    with pytest.raises(EnrichError, match="needs a generator"):
        enrich(corpus, "llm", 64)
    dry = enrich(corpus, "llm", 128, dry_run=True)
    assert dry.to_do == 4 and dry.max_generated_tokens == 3 * (128 + 16)
    assert not summaries_dir(corpus, "llm", 128).exists()


def test_enriched_names():
    assert enriched_name("muse-v3", "topn", 64) == "muse-v3+topn64"
    assert parse_enriched("muse-v3+topn64") == ("muse-v3", "topn", 64)
    assert parse_enriched("/models/a+b") is None


def test_enriched_vectors_embed_the_summary(corpus_dir):
    corpus = Corpus(corpus_dir)
    encoder = load_model("muse-v3")
    with pytest.raises(FileNotFoundError, match="openmsd enrich"):
        embed_corpus(corpus, encoder, "muse-v3+author64")
    enrich(corpus, "author", 64)
    embed_corpus(corpus, encoder, "muse-v3")
    result = embed_corpus(corpus, encoder, "muse-v3+author64")
    assert result.directory.endswith("vectors/muse-v3+author64")
    plain_ids, plain = load_vectors(corpus, "muse-v3")
    rich_ids, rich = load_vectors(corpus, "muse-v3+author64")
    assert plain_ids == rich_ids
    # unchanged texts: the same vectors up to batch composition (muse-v3, numpy 2.4: ~2e-7)
    same = {p: bool(np.allclose(plain[i], rich[i], atol=1e-5)) for i, p in enumerate(plain_ids)}
    assert same == {"en-parse": True, "es-parse": True, "fr-mt": True, "fr-parse": False,
                    "fr-title": False}
    summary = current_summaries(corpus, "author", 64)["fr-parse"]
    expected = encoder.encode([paper_input("Analyse syntaxique en dépendances du français",
                                           "Nous présentons un analyseur syntaxique "
                                           "statistique en dépendances pour le français, "
                                           "entraîné sur un corpus arboré de phrases "
                                           "journalistiques.", summary)], "passage")[0]
    assert np.allclose(rich[rich_ids.index("fr-parse")], expected, atol=1e-5)
