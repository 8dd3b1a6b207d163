"""The docs' Benchmarks page, rendered from the records in ``benchmarks/results/*.json``.

Each record (written by ``benchmarks/record.py``'s ``write_record``) becomes one section: its
headline figure and what it means, the peer it is measured against, the command that reruns
it, the commit, date, machine and load it ran at, the data (synthetic or real) and every number
it holds. ``scripts/docs_reference.py`` writes the page; ``tests/test_records.py`` checks that
the README quotes each record's headline as the record has it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

TITLES = {
    "demo_wall": "The demo, end to end",
    "langid_accuracy": "Language identification",
    "mcp_latency": "MCP tool calls on the demo corpus (openmsd mcp)",
    "embedding_throughput": "Embedding on a CPU: ONNX against PyTorch",
    "crosslingual_taln": "Cross-lingual retrieval: French abstracts find their English version",
    "ingest_throughput": "Ingest throughput",
    "ingest_parallel": "Ingest of a folder: its files staged in parallel",
    "sdsm_scoring": "SDSM evaluation speed against trec_eval",
    "embed_spark": "Embedding on Spark against one process",
    "index_scale": "Approximate vector index at scale (IVF-PQ)",
    "adapter_taln": "Adapters: a head over e5 trained on TALN's own citations",
    "fusion_evidence": "Fusion that weighs the evidence: z-scores against reciprocal ranks",
    "fetch_cost": "What an OpenAlex crawl costs under the 2026 prices",
    "graph_watch": "The neighbourhood picture and the watch feed",
    "adapter_crosslingual": "Adapters across languages: French abstracts find their English",
    "embed_memory": "Peak memory of openmsd embed",
    "recommend_memory": "Peak memory of openmsd recommend on long manuscripts",
    "server_load": "The web server under load: 20 clients on related and fused search",
    "server_load_1m": "The web server under load at 1,000,000 papers",
    "embedding_sdsm_dev": "Embedding quality: the CPU builds against PyTorch on TALN dev",
    "embedding_candidates": "int8 builds against float32 on TALN dev",
    "adapter_samples": "Adapters on the unarXive and S2ORC samples: contexts and citrec",
    "non_papers": "Records that are not papers, left out of related papers",
    "citrec_time": "Citation recommendation (MP-BERT4CR) on a time-ordered split",
    "citrec_prefetch": "recommend's first stage learned from citation contexts",
    "training_taln": "Training on TALN: OpenMSD's Tables 5/6",
    "xpac_share": "Works gained with xpac, and the share not in English (loopback server)",
    "ranker_directions": "The learned ranker per language direction (a bilingual view of TALN)",
    "untuned_cross_dense": "The untuned hybrid with its dense model heard again across "
                           "languages (DENSE@cross)",
}
"""Section titles by record name (a record without one is titled by its name)."""

def _adapter(record: dict[str, Any]) -> str:
    test = record["numbers"]["sdsm"]["test"]["hybrid_with_adapter_vs_hybrid_base"]
    return f"{test['ratio']:.2f}×"


def _fusion(record: dict[str, Any]) -> str:
    hybrid = record["numbers"]["taln_train_dev"]["hybrid"]
    return f"{hybrid['zscore']:.2f} against {hybrid['rrf']:.2f}"


def _fetch(record: dict[str, Any]) -> str:
    return f"{record['numbers']['cost']['ratio_to_peer']['list_calls']:.3f}×"


def _graph(record: dict[str, Any]) -> str:
    return f"{record['numbers']['demo']['n30']['svg_total_ms']:.0f} ms"


def _embed_memory(record: dict[str, Any]) -> str:
    return f"{max(row['peak_rss_mib'] for row in record['numbers']['rows']):,.0f} MiB"


def _embedding_dev(record: dict[str, Any]) -> str:
    """The default build's TALN dev avg MAP against PyTorch's (and the per-batch int8's)."""
    numbers = record["numbers"]
    default = next(label for label in numbers if label.endswith("(default)"))
    return (f"{default.split()[0]} {numbers[default]['average_map']:.2f} against "
            f"{numbers['torch (sentence-transformers)']['average_map']:.2f} "
            f"(int8 per batch {numbers['onnx']['average_map']:.2f})")


def _candidates(record: dict[str, Any]) -> str:
    """The int8 builds against fp32 on TALN dev: the best one and how far it falls short."""
    candidates = record["numbers"]["candidates"]
    fp32 = candidates["fp32"]["average_map"]
    int8 = {k: v for k, v in candidates.items() if k.startswith("int8")}
    best = max(int8, key=lambda k: int8[k]["average_map"])
    return (f"best int8 build ({best}): TALN dev avg MAP {int8[best]['average_map']:.2f} "
            f"against fp32 {fp32:.2f}")


def _adapter_scale(record: dict[str, Any]) -> str:
    """The training command's wall time and peak memory on the generated corpus."""
    numbers, data = record["numbers"], record["data"]
    return (f"{numbers['train_seconds_command']:.0f} s, peak {numbers['peak_rss_gib']:.2f} GiB, "
            f"for {numbers['rows']['positives']:,} positive pairs of {data['papers']:,} papers")


def _snapshot(record: dict[str, Any]) -> str:
    """The snapshot reader's works/s from Parquet against JSON lines."""
    numbers = record["numbers"]
    return (f"{numbers['parquet_read_works_per_s']:,.0f} works/s from Parquet, "
            f"{numbers['jsonl_read_works_per_s']:,.0f} from JSON lines "
            f"(×{numbers['parquet_over_jsonl_read']:.2f})")


def _citrec(record: dict[str, Any]) -> str:
    """MP-BERT4CR's trained heads against the untrained start, and the two stages against the
    prefetch (Recall@10 of at least one cited paper, means over the seeds)."""
    numbers = record["numbers"]
    trained = next(iter(numbers["trained_over_start"].values()))
    fused = max(numbers["fused_over_prefetch"].values())
    return (f"trained {trained:.2f}× the untrained start; two stages {fused:.2f}× the "
            "prefetch (Recall@10)")


def _training(record: dict[str, Any]) -> str:
    """The best trained row's average MAP on the last split scored, against the base's."""
    numbers = record["numbers"]
    split = list(numbers["splits"])[-1]
    rows = numbers["splits"][split]["rows"]
    trained = {row: rows[row]["average"]["MAP"] for row in numbers["training"] if row in rows}
    best = max(trained, key=lambda row: trained[row])
    base = record["data"]["defaults"].get("base", "e5-small-multilingual")
    return (f"{split} avg MAP: best trained row ({best}) {trained[best]:.2f} against "
            f"{rows[base]['average']['MAP']:.2f} untrained")


def _ranker_cost(record: dict[str, Any]) -> str:
    """What ``openmsd train ranker`` took at each size: wall and CPU seconds, peak memory."""
    return "; ".join(f"{run['train_s']:.0f} s wall, {run['train_cpu_s']:.0f} CPU-s, peak "
                     f"{run['peak_rss_gib']:.2f} GiB at {run['papers']:,} papers"
                     for run in record["numbers"]["runs"])


FALLBACK: dict[str, Any] = {"adapter_scale": _adapter_scale, "ranker_cost": _ranker_cost,
                            "citrec_time": _citrec,
                            "training_taln": _training, "snapshot_ingest": _snapshot,
                            "embedding_candidates": _candidates, "adapter_taln": _adapter,
                            "fusion_evidence": _fusion,
                            "fetch_cost": _fetch, "graph_watch": _graph,
                            "embed_memory": _embed_memory, "embedding_sdsm_dev": _embedding_dev}
"""Headline formatters for records whose numbers carry no ``headline`` string:
record name -> function(record) -> the text the README quotes."""


CITREC_GROUPS = {"positive=1": "one cited", "positive>=1": "at least one",
                 "positive>=2": "at least two"}
"""MP-BERT4CR's Table 3 groups of citation locations, by how many papers each cites."""


def citrec_table(record: dict[str, Any]) -> str:
    """A Table 3 record (``benchmarks/citrec_table3.py --record``) as a Markdown table:
    Recall@10 and MAP@10 per group and MRR, mean ± sd over the seeds, in %."""
    rows = record["numbers"]["rows_percent"]

    def cell(stats: dict[str, float] | None) -> str:
        return f"{stats['mean']:.1f} ± {stats['sd']:.1f}" if stats else "–"

    head = ["ranker", *[f"{name} {metric}" for name in CITREC_GROUPS.values()
                        for metric in ("R@10", "MAP@10")], "MRR"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for model, groups in rows.items():
        cells = [cell(groups.get(group, {}).get(metric)) for group in CITREC_GROUPS
                 for metric in ("Recall@10", "MAP@10")]
        cells.append(cell(groups.get("positive>=1", {}).get("MRR")))
        lines.append(f"| `{model}` | " + " | ".join(cells) + " |")
    data = record["data"]
    seeds = ", ".join(str(seed) for seed in data["seeds"])
    lines += ["", f"{data['test_locations']:,} test citation locations of "
              f"{data['held_out_citing_papers']:,} held-out citing papers, "
              f"{data['candidates']:,} candidates, split {data['split']}, seeds {seeds}; "
              f"[{headline(record)}](benchmarks.md#{record['name']})."]
    return "\n".join(lines)


def directions_table(record: dict[str, Any]) -> str:
    """A ``benchmarks/ranker_directions.py`` record as Markdown: per view, the MAP of the
    learned ranker, the untuned fusion, e5 alone and the best single member in each language
    direction that has test queries, on IDT and ODT and both protocols (for a page in
    ``docs/guides/``: its link to the Benchmarks page goes one folder up)."""
    lines: list[str] = []
    for variant, found in record["numbers"]["variants"].items():
        links = found["resolved_citations"]
        lines += [f"View **{variant}** ({found['made_english']:,} of TALN's French papers made "
                  f"English; {links['view']:,} resolved citations, TALN {links['taln']:,}):", "",
                  "| protocol, split | direction | queries | learned | untuned | e5 alone | "
                  "best single member | learned / best single |",
                  "|---|---|---:|---:|---:|---:|---|---:|"]
        empty = set()
        for name, per in found["figures"].items():
            for direction, f in per.items():
                if direction == "singles":
                    continue
                if "learned" not in f:
                    empty.add(direction)
                    continue
                queries = "" if f.get("queries") is None else f"{f['queries']:,}"
                e5 = "–" if f.get("e5") is None else f"{f['e5']:.2f}"
                protocol, split = name.rsplit(" ", 1)
                lines.append(f"| {protocol}, {split.upper()} | {direction} | {queries} | "
                             f"{f['learned']:.2f} | "
                             f"{f['untuned']:.2f} | {e5} | {f['best_single_map']:.2f} "
                             f"(`{f['best_single']}`) | {f['learned_over_best_single']:.2f}× |")
        none = f"; no test query in {', '.join(sorted(empty))}" if empty else ""
        lines += ["", f"MAP in %, average: over the split's queries{none}.", ""]
    lines.append(f"Lowest ratio of the learned ranker to the best single member, over the "
                 f"directions with enough queries: [{headline(record)}]"
                 f"(../benchmarks.md#{record['name']}).")
    return "\n".join(lines)


RENDERED = {"citrec_time": citrec_table, "ranker_directions": directions_table}
"""Records whose tables a guide shows (between ``<!-- record:NAME -->`` and
``<!-- /record:NAME -->``), with the function that renders them."""


def render_blocks(text: str, results: Path = RESULTS) -> str:
    """``text`` with each ``<!-- record:NAME -->`` block rendered from its record (a record
    not there yet leaves the block as it is)."""
    for name, render in RENDERED.items():
        start, end = f"<!-- record:{name} -->", f"<!-- /record:{name} -->"
        path = results / f"{name}.json"
        if start not in text or not path.is_file():
            continue
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        record = json.loads(path.read_text(encoding="utf-8"))
        text = f"{head}{start}\n{render(record)}\n{end}{tail}"
    return text


def records(results: Path = RESULTS) -> list[dict[str, Any]]:
    """Every record in ``results``, by name."""
    return [json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(results.glob("*.json"))]


def headline(record: dict[str, Any]) -> str:
    """The record's headline figure as the README and this page quote it."""
    numbers = record.get("numbers", {})
    if isinstance(numbers.get("headline"), str) and numbers["headline"]:
        return numbers["headline"]
    if record["name"] in FALLBACK:
        return FALLBACK[record["name"]](record)
    raise KeyError(f"benchmarks/results/{record['name']}.json: numbers.headline is missing "
                   "(or add a formatter to FALLBACK in scripts/benchmarks_page.py)")


def _load(record: dict[str, Any]) -> str:
    before = record.get("load_before")
    after = record.get("machine", {}).get("load_1min")
    return " → ".join(f"{x:.1f}" for x in (before, after) if isinstance(x, int | float))


def section(record: dict[str, Any]) -> str:
    """One record as a Markdown section."""
    numbers = {k: v for k, v in record.get("numbers", {}).items()
               if k not in ("headline", "headline_means", "peer")}
    machine = record.get("machine", {})
    data = record.get("data", {})
    sizes = ", ".join(f"{k}: {v:,}" if isinstance(v, int) else f"{k}: {v}"
                      for k, v in data.items())
    rows = [("headline", f"**{headline(record)}**"),
            ("what it is", record["numbers"].get("headline_means", "")),
            ("against", record["numbers"].get("peer", "")),
            ("data", ("**synthetic** (generated); " if record.get("synthetic") else "") + sizes),
            ("command", f"`{record.get('command', '')}`"),
            ("commit", f"`{record.get('commit', '')[:10]}`"
             + (" (with uncommitted changes)" if record.get("dirty") else "")),
            ("date", record.get("date", "")),
            ("machine", f"{machine.get('cpus')} CPUs, {machine.get('memory_gib')} GiB, "
                        f"{machine.get('platform', '')}, Python {machine.get('python', '')}"),
            ("load average (1 min)", f"{_load(record)} (start → end; a shared machine)")]
    lines = [f"## {TITLES.get(record['name'], record['name'])} {{#{record['name']}}}", "",
             "| | |", "|---|---|"]
    lines += [f"| {key} | {' '.join(str(value).split()).replace('|', '/')} |"
              for key, value in rows if value]
    lines.append("")
    if record.get("notes"):
        lines += [record["notes"], ""]
    lines += [f"Record: `benchmarks/results/{record['name']}.json`. All its numbers:", "",
              "```json", json.dumps(numbers, indent=1, ensure_ascii=False)[:6000], "```", ""]
    return "\n".join(lines)


def benchmarks_page(results: Path = RESULTS) -> str:
    """The whole page: an index table of headlines, then one section a record."""
    found = records(results)
    lines = ["# Benchmarks", "",
             "The figures openmsd quotes, each rendered from its record in "
             "`benchmarks/results/` (written by the benchmark that measured it; "
             "`python scripts/docs_reference.py` renders this page). Every record names the "
             "command that reruns it, the commit it ran at and the load of the machine: the "
             "machine is 2 CPU cores shared with other work, so wall times are upper bounds "
             "and ratios against a peer measured in the same run are the figures to compare. "
             "`bash benchmarks/headline.sh` reruns every record the README links but "
             "`fetch_cost` and `cli_start` (their commands build an earlier openmsd from git "
             "to compare against), and most of the others; each record's command reruns it "
             "alone.", "",
             "**Test splits read before.** TALN's test splits (IDT, ODT and their union) had "
             "been read many times during development, each time after a design change, "
             "before the records here that report figures on them (`adapter_taln`, "
             "`ranker_taln`, `ranker_directions`, `training_taln`) read them once more each. "
             "The unarXive sample's held-out citing papers have been read several times too. A "
             "figure on them is not a clean held-out figure, and a record on one of them says "
             "so in its notes. The figures here are on "
             "data nothing was tuned on (generated data, every TALN paper for language "
             "identification and cross-lingual retrieval, SciELO titles held out when a "
             "setting was chosen) unless their notes say otherwise.", "",
             "| figure | headline | data |", "|---|---|---|"]
    for record in found:
        kind = "synthetic" if record.get("synthetic") else "real"
        lines.append(f"| [{TITLES.get(record['name'], record['name'])}](#{record['name']}) | "
                     f"{headline(record)} | {kind} |")
    lines.append("")
    lines += [section(record) for record in found]
    return "\n".join(lines).rstrip() + "\n"
