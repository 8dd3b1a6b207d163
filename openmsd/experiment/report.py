"""What ``openmsd train ranker``, ``train adapter`` and ``train citrec-prefetch`` did, in words:
the lines a terminal shows of their JSON reports."""

from __future__ import annotations

from typing import Any

from openmsd.rank import RankerEntry, weighs

__all__ = ["adapter_line", "prefetch_line", "ranker_lines"]


def adapter_line(manifest: dict[str, Any]) -> str:
    """What an adapter run chose, on which figures, and where it went."""
    chosen, selection = manifest["training"]["chosen"], manifest["selection"]
    queries = selection["queries"]
    dev = (f" + {queries['dev']} dev" if selection["dev_used"] else
           f" (dev: {queries['dev']} queries, too few to select on)")
    if chosen["head"] == "identity":
        return (f"{manifest['name']}: the identity: no head trained on this corpus's citations "
                f"ranked held-out links better than the base (out-of-fold average MAP "
                f"{selection['identity_map']:.2f} on {queries['train_folds']} held-out train "
                f"queries{dev}), so the adapter leaves every vector as it is and ranks as "
                f"its base does; {manifest['mapped']:,} papers mapped -> {manifest['path']}")
    return (f"{manifest['name']}: {chosen['candidate']}"
            + (f", {chosen['epochs']} epochs" if chosen["epochs"] else "")
            + f"; out-of-fold average MAP {selection['identity_map']:.2f} (base) → "
            f"{selection['chosen_map']:.2f} on {queries['train_folds']} held-out train "
            f"queries{dev}; {manifest['training']['seconds']:.1f} s; {manifest['mapped']:,} "
            f"papers mapped and indexed -> {manifest['path']} (related, search and watch use "
            f"it now; --model {manifest['name']} names it)")


def prefetch_line(report: dict[str, Any]) -> str:
    """What ``train citrec-prefetch`` measured out of fold and kept."""
    if "skipped" in report:
        return report["skipped"]
    table = report["out_of_fold"]
    untrained = table["untrained"]
    head = f"{report['model']}: {report['locations']:,} citation contexts of " \
           f"{report['citing_papers']} citing papers, {report['candidates']:,} candidates; " \
           f"out of fold (folds by citing paper) Recall@10 / @50: untrained " \
           f"{untrained['Recall@10']:.3f} / {untrained['Recall@50']:.3f}"
    if report["kept"]:
        chosen = table[report["chosen"]]
        return (f"{head}, learned ({report['chosen']}) {chosen['Recall@10']:.3f} / "
                f"{chosen['Recall@50']:.3f}: kept -> {report['path']} (recommend's first stage "
                "uses it now)")
    return f"{head}; not kept: {report.get('why', '')}" + (
        f" (the stored head {report['path']} removed)" if report.get("removed") else "")


def ranker_lines(found: dict[str, Any]) -> str:
    """Per ranker: the out-of-fold table (each candidate's MAP), what was kept and why, and
    what a tree model weighs."""
    lines = [f"{run['base']}: no adapter: {run['skipped']}" if "skipped" in run
             else adapter_line(run) for run in found.get("adapters", [])]
    for name, fitted in found["report"].items():
        if "skipped" in fitted:
            lines.append(f"{name}: not learned: {fitted['skipped']}")
            continue
        queries = ", ".join(f"{n} {split}" for split, n in fitted["queries"].items())
        lines.append(f"{name} (queries with a link: {queries}):")
        for head in ("paper", "free_text"):
            if head not in fitted:
                continue
            chosen = fitted[head]
            table = chosen["out_of_fold_map"]
            ratio = chosen["gain_over_best_single"]
            p = chosen["p_against_best_single"]
            lines.append(
                f"  {'a paper' if head == 'paper' else 'free text'}: kept {chosen['chosen']}, "
                f"out-of-fold MAP {table[chosen['chosen']]:.2f}, "
                + (f"{ratio:.2f}x" if ratio else "n/a")
                + f" the best single signal ({chosen['best_single']} "
                f"{table[chosen['best_single']]:.2f}"
                + (f", p = {p:.3f}" if p is not None else "") + ")")
            lines.append("    " + "; ".join(f"{k} {v:.2f}" for k, v in sorted(
                table.items(), key=lambda item: -item[1])))
            weights = weighs(RankerEntry.from_json(found[name]) if name in found else None,
                             head)
            if weights:
                lines.append("    the trees weigh: " + ", ".join(
                    f"{k} {v:.0%}" for k, v in list(weights.items())[:6]))
    if "citrec_prefetch" in found:
        lines.append(f"recommend's first stage: {prefetch_line(found['citrec_prefetch'])}")
    lines.append(f"saved to {found['path']} in {found['seconds']:.0f} s; related, search, "
                 "recommend, watch and serve use it now")
    return "\n".join(lines)
