"""The learned ranker per language direction, on a bilingual view of TALN.

TALN's links are almost all French → French, so its SDSM figures have one direction. The view
makes the other three out of real papers: a stable half (by the sha1 of the id) of the French
papers whose authors wrote an English title and abstract become English papers (their English
title, abstract and keywords; their French title kept as their only translation, so the
ParsCit references, which cite the French title, resolve as before: the check is that the view
has as many resolved citations as TALN). Two variants:

- ``own-language-only``: the other French papers lose their English translations too (one
  with no French title keeps the English one as its title, as a record fetched from OpenAlex
  would have it); only the multilingual dense model bridges the two languages;
- ``with-english-abstracts``: the other French papers keep their English translations, as in
  TALN (``bm25-en`` and ``minilm-en`` read them).

The view is built the way a user builds a corpus::

    openmsd ingest WORK/VARIANT/view.jsonl ../shared/data/taln/parscit --out WORK/VARIANT/corpus
    openmsd relations WORK/VARIANT/corpus --top-languages 2 --idt 0.15 --odt 0.15 --dev 0.1
    openmsd embed WORK/VARIANT/corpus && openmsd embed WORK/VARIANT/corpus --model minilm-en

(and plain TALN is ingested with the same relations, to compare citations and splits). Then,
on a fresh copy of that corpus, as ``ranker_taln.py`` does: the untuned ``hybrid`` and
``hybrid-graph`` and every single member are scored, ``train_ranker`` fits the learned ones on
train and dev (out of fold), and the learned rankers and the adapters are scored: MAP per
language direction (en->en, en->non-en, non-en->en, non-en->non-en) and on average, against the
untuned fusion, e5 alone and the best single member.

    python benchmarks/ranker_directions.py WORK --variant own-language-only         # dev split
    python benchmarks/ranker_directions.py WORK --variant own-language-only --split test --record

``--split dev`` (the default) scores the dev split, which training reads too (its learned
figures are not held out): it is for building and checking the view. ``--split test`` scores
IDT and ODT apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from ranker_taln import before_and_after, out_of_fold, singles_of
from record import write_record

from openmsd.corpus import Corpus
from openmsd.eval.sdsm import DIRECTIONS
from openmsd.rank import HYBRID, HYBRID_GRAPH
from openmsd.relations import read_split

ROOT = Path(__file__).resolve().parents[1]
TALN = ROOT.parent / "shared" / "data" / "taln"
E5 = "e5-small-multilingual:onnx-sq8"
VARIANTS = ("own-language-only", "with-english-abstracts")
RELATIONS = ["--top-languages", "2", "--idt", "0.15", "--odt", "0.15", "--dev", "0.1"]
SPLITS = {"dev": ("dev",), "test": ("idt", "odt")}
ENOUGH = 10
"""A direction with fewer queries than this is reported but left out of the headline."""


def becomes_english(paper_id: str) -> bool:
    """The stable half: the sha1 of the id is even."""
    return hashlib.sha1(paper_id.encode("utf-8")).digest()[-1] % 2 == 0


def bilingual_view(papers: list[dict[str, Any]], variant: str
                   ) -> tuple[list[dict[str, Any]], list[str]]:
    """TALN's ``papers`` as the bilingual view of ``variant`` and the ids of the papers made
    English. A paper written in English (no French title or abstract) is left as it is."""
    out, made = [], []
    for paper in papers:
        english = (paper.get("translations") or {}).get("en") or {}
        written_in_french = bool(paper.get("title") or paper.get("abstract"))
        view = dict(paper)
        if not written_in_french:
            out.append(view)
            continue
        if english.get("title") and english.get("abstract") and becomes_english(paper["id"]):
            view.update(title=english["title"], abstract=english["abstract"],
                        keywords=english.get("keywords") or [])
            view.pop("translations", None)
            if paper.get("title"):
                view["translations"] = {"fr": {"title": paper["title"]}}
            made.append(paper["id"])
        elif variant == "own-language-only":
            others = {k: v for k, v in (paper.get("translations") or {}).items() if k != "en"}
            view.pop("translations", None)
            if others:
                view["translations"] = others
            if not view.get("title") and english.get("title"):
                view["title"] = english["title"]  # its only title, the one references cite
        out.append(view)
    return out, made


def write_jsonl(rows: list[dict[str, Any]], path: Path) -> str:
    """Write ``rows`` to ``path`` (through a temp file); their sha1."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def openmsd(*args: str) -> None:
    """Run ``openmsd ARGS`` as a user would, with this checkout's code."""
    print("$ openmsd " + " ".join(args), file=sys.stderr, flush=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "openmsd", *args], check=True, cwd=ROOT, env=env)


def build(inputs: list[Path], out: Path, key: str, embed: bool) -> None:
    """``ingest`` ``inputs`` into ``out``, its ``relations`` and (``embed``) its e5 and
    minilm-en vectors; skipped where ``out`` was built from the same ``key`` (a file's
    sha1) already."""
    marker = out.with_name(out.name + ".built")
    if marker.exists() and marker.read_text(encoding="utf-8") == key and out.is_dir():
        return
    if out.exists():
        shutil.rmtree(out)
    marker.unlink(missing_ok=True)
    openmsd("ingest", *map(str, inputs), "--out", str(out))
    openmsd("relations", str(out), *RELATIONS)
    if embed:
        openmsd("embed", str(out))
        openmsd("embed", str(out), "--model", "minilm-en")
    marker.write_text(key, encoding="utf-8")


def citations(corpus: Corpus) -> int:
    """The corpus's resolved citation links."""
    return corpus.connect().execute(
        "SELECT count(*) FROM citations WHERE cited_id IS NOT NULL").fetchone()[0]


def splits_of(corpus: Corpus) -> dict[str, str]:
    """Paper id → split of the corpus's relations."""
    out: dict[str, str] = {}
    for name in ("train", "dev", "idt", "odt"):
        out.update(dict.fromkeys(read_split(corpus, name)["paper_id"].to_pylist(), name))
    return out


def compare_splits(view: Corpus, plain: Corpus, made: set[str]) -> dict[str, Any]:
    """How many of the view's split papers have TALN's split: the papers left French, the
    papers made English (English papers draw from other ranges: IDT, dev or train only)."""
    ours, theirs = splits_of(view), splits_of(plain)
    out: dict[str, Any] = {"papers_in_splits": len(ours), "taln_papers_in_splits": len(theirs)}
    for name, keep in (("left_french", lambda p: p not in made),
                       ("made_english", lambda p: p in made)):
        shared = [p for p in ours if keep(p) and p in theirs]
        out[name] = {"in_both": len(shared),
                     "same_split": sum(ours[p] == theirs[p] for p in shared),
                     "only_in_view": sum(keep(p) and p not in theirs for p in ours)}
    out["view_counts"] = {s: sum(v == s for v in ours.values()) for s in sorted(set(ours.values()))}
    out["taln_counts"] = {s: sum(v == s for v in theirs.values())
                          for s in sorted(set(theirs.values()))}
    return out


def directions(before: dict[str, Any], after: dict[str, Any], fused: str) -> dict[str, Any]:
    """One split's figures of one protocol: per direction (and on average) the learned ranker,
    the untuned fusion, e5 alone and the best single member there, with its queries."""
    singles = singles_of(before, after, but=fused)
    counts = before["queries_by_direction"]
    out: dict[str, Any] = {}
    for direction in ("average", *DIRECTIONS):
        def figure(entry: dict[str, Any], d: str = direction) -> float | None:
            return entry["average"] if d == "average" else entry["by_direction"].get(d)

        learned = figure(after[fused])
        if learned is None:
            out[direction] = {"queries": counts.get(direction, 0)}
            continue
        present = {m: figure(v) for m, v in singles.items() if figure(v) is not None}
        best = max(present, key=lambda m: present[m])
        out[direction] = {
            "queries": counts.get(direction),
            "learned": learned, "untuned": figure(before[fused]), "e5": present.get(E5),
            "best_single": best, "best_single_map": present[best],
            "learned_over_best_single": (round(learned / present[best], 3)
                                         if present[best] else None),
            "learned_over_e5": (round(learned / present[E5], 3)
                                if present.get(E5) else None)}
    out["average"]["relevant_pairs"] = before["queries"]
    out["singles"] = singles
    return out


def table(figures: dict[str, Any]) -> str:
    """The figures as text lines, one per protocol, split and direction."""
    lines = []
    for name, found in figures.items():
        for direction, f in found.items():
            if direction == "singles":
                continue
            n = f["queries"] if f.get("queries") is not None else "-"
            if "learned" not in f:
                lines.append(f"{name:<22} {direction:<15} n={n:<4} (no query)")
                continue
            lines.append(
                f"{name:<22} {direction:<15} n={n:<4} learned {f['learned']:6.2f}"
                f"  untuned {f['untuned']:6.2f}  e5 {f['e5'] or 0:6.2f}  best "
                f"{f['best_single']} {f['best_single_map']:6.2f}  ratio "
                f"{f['learned_over_best_single']}")
    return "\n".join(lines)


def run_variant(work: Path, taln: Path, variant: str, split: str) -> dict[str, Any]:
    """Build (or reuse) the view of ``variant`` and plain TALN under ``work``, check them, and
    score the view's fresh copy before and after training on ``split``: its figures."""
    source = taln / "papers.jsonl"
    papers = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()
              if line.strip()]
    view, made = bilingual_view(papers, variant)
    folder = work / variant
    key = write_jsonl(view, folder / "view.jsonl")
    parscit = taln / "parscit"
    build([folder / "view.jsonl", parscit], folder / "corpus", key, embed=True)
    build([source, parscit], work / "taln", hashlib.sha1(source.read_bytes()).hexdigest(),
          embed=False)
    plain, built = Corpus(work / "taln"), Corpus(folder / "corpus")
    links = {"taln": citations(plain), "view": citations(built)}
    split_check = compare_splits(built, plain, set(made))
    languages = dict(built.connect().execute(
        "SELECT language, count(*) FROM papers GROUP BY 1 ORDER BY 1").fetchall())
    print(f"{variant}: made English {len(made)}; languages {languages}; resolved citations "
          f"{links}; splits {split_check}", file=sys.stderr, flush=True)
    scratch = folder / "scored"
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(folder / "corpus", scratch)  # train_ranker writes adapters and rankers
    corpus = Corpus(scratch)
    splits = SPLITS[split]
    before, after, trained, seconds = before_and_after(corpus, splits, contexts=False)
    figures = {f"{protocol} {name}": directions(before[protocol][name],
                                                after[protocol][name], fused)
               for protocol, fused in (("text-only", HYBRID), ("hidden-links", HYBRID_GRAPH))
               for name in splits}
    print(f"{variant}, {split}:\n{table(figures)}", flush=True)
    report = trained["report"]
    return {"papers": len(view), "made_english": len(made), "languages": languages,
            "train_seconds": seconds,
            "resolved_citations": {**links, "same": links["taln"] == links["view"]},
            "splits_against_taln": split_check, "out_of_fold": out_of_fold(trained),
            "train_queries": {n: f["queries"] for n, f in report.items() if "queries" in f},
            "figures": figures}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("work", type=Path, help="the work folder (views, corpora)")
    parser.add_argument("--variant", choices=[*VARIANTS, "both"], default=VARIANTS[0],
                        help="the view (both: one after the other, own-language-only first)")
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev",
                        help="dev (default) or test: IDT and ODT apart")
    parser.add_argument("--taln", type=Path, default=TALN, help="the TALN data folder")
    parser.add_argument("--record", action="store_true", help="write "
                        "benchmarks/results/ranker_directions.json (with --split test)")
    args = parser.parse_args()
    if args.record and args.split != "test":
        parser.error("--record writes the test splits' figures: add --split test")
    load_before = os.getloadavg()[0]
    variants = VARIANTS if args.variant == "both" else (args.variant,)
    found = {variant: run_variant(args.work, args.taln, variant, args.split)
             for variant in variants}
    ratios = [f["learned_over_best_single"] for v in found.values()
              for per_split in v["figures"].values() for d, f in per_split.items()
              if d in DIRECTIONS and (f.get("queries") or 0) >= ENOUGH
              and f.get("learned_over_best_single") is not None]
    numbers = {
        "headline": f"{min(ratios):.2f}",
        "headline_means": "the lowest ratio, over the language directions with at least "
                          f"{ENOUGH} queries, IDT and ODT, both protocols and the views "
                          f"({', '.join(variants)}), of the learned ranker's MAP to the best "
                          "single member's in that direction on the test splits of the "
                          "bilingual view of TALN",
        "peer": "the best single member in each direction, test split and view",
        "variants": found}
    print(f"headline (lowest ratio, directions with >= {ENOUGH} queries): "
          f"{numbers['headline']}", flush=True)
    if args.record:
        write_record("ranker_directions", numbers,
                     data={"source": str(args.taln / "papers.jsonl"),
                           "papers": next(iter(found.values()))["papers"],
                           "made_english": {v: f["made_english"] for v, f in found.items()}},
                     load_before=load_before,
                     notes="TALN's test links (IDT, ODT) were read before, by ranker_taln.json "
                           "among others; nothing in this benchmark (the view, its variants, "
                           "the members, the headline's threshold) was chosen on them: it was "
                           "built and checked on the dev split, then the test splits were read "
                           "once, by this run, after training on train and dev.")


if __name__ == "__main__":
    main()
