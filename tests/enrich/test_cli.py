"""``openmsd enrich`` and ``openmsd embed --enrich`` as a user runs them."""

from __future__ import annotations

import orjson
from typer.testing import CliRunner

from openmsd.cli import app

runner = CliRunner()
CONTRACT = {"method", "length", "enriched", "cached", "skipped_english", "failed"}


def test_enrich_json_contract_and_dry_run(corpus_dir):
    result = runner.invoke(app, ["enrich", str(corpus_dir), "--method", "author",
                                 "--length", "64", "--json"])
    assert result.exit_code == 0, result.output
    counts = orjson.loads(result.stdout)
    assert set(counts) >= CONTRACT
    assert {k: counts[k] for k in CONTRACT} == {
        "method": "author", "length": 64, "enriched": 2, "cached": 0, "skipped_english": 1,
        "failed": 2}
    dry = runner.invoke(app, ["enrich", str(corpus_dir), "--method", "llm", "--length", "64",
                              "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    plan = orjson.loads(dry.stdout)
    assert (plan["dry_run"], plan["to_do"], plan["backend"]) == (True, 4, "gemma")
    assert plan["input_tokens"] > 0 and plan["max_generated_tokens"] == 3 * 80


def test_enrich_errors_are_clear(corpus_dir, tmp_path):
    bad = runner.invoke(app, ["enrich", str(corpus_dir), "--method", "author",
                              "--length", "100"])
    assert bad.exit_code == 2 and "length must be one of 64, 128" in bad.output
    nowhere = runner.invoke(app, ["enrich", str(corpus_dir), "--method", "llm", "--backend",
                                  "http://127.0.0.1:9/v1"])
    assert nowhere.exit_code == 2 and "http://127.0.0.1:9/v1/models" in nowhere.output
    no_split = runner.invoke(app, ["enrich", str(corpus_dir), "--method", "author",
                                   "--split", "test"])
    assert no_split.exit_code == 2 and "no relations" in no_split.output
    not_corpus = runner.invoke(app, ["enrich", str(tmp_path), "--method", "author"])
    assert not_corpus.exit_code == 2 and "not a corpus directory" in not_corpus.output


def test_embed_enriched(corpus_dir):
    missing = runner.invoke(app, ["embed", str(corpus_dir), "--model", "muse-v3",
                                  "--enrich", "author-64"])
    assert missing.exit_code == 2 and "openmsd enrich" in missing.output
    runner.invoke(app, ["enrich", str(corpus_dir), "--method", "author", "--length", "64"])
    done = runner.invoke(app, ["embed", str(corpus_dir), "--model", "muse-v3",
                               "--enrich", "author-64", "--json"])
    assert done.exit_code == 0, done.output
    counts = orjson.loads(done.stdout)
    assert counts["model"] == "muse-v3+author64" and counts["embedded"] == 5
