"""``openmsd fetch openalex --dry-run``: the calls a plan will make and what they will cost,
before spending anything.

The seeds given by id are read with free singleton calls (their references and citation
counts are what the first step will fetch); nothing billed is called. The first step's list
calls follow from them exactly; deeper steps are extrapolated from the seeds' mean numbers of
references and citers, and everything is capped by ``max_works``. A search or a filter is
counted as its first page (how many pages follow is known only once it has run).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from rich.table import Table

from openmsd.fetch.budget import FREE_KEY_USD, KEYLESS_USD, PRICES
from openmsd.fetch.crawler import BATCH, SINGLETONS_BELOW, FetchPlan, check_plan
from openmsd.fetch.ids import work_id
from openmsd.fetch.openalex import OpenAlex
from openmsd.fetch.session import BadAnswer

__all__ = ["Estimate", "estimate", "estimate_view"]


@dataclass
class Estimate:
    """Calls by kind (``singleton``, ``list``, ``search``), their cost, the works expected."""

    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PRICES, 0))
    cost_usd: float = 0.0
    works: int = 0
    seeds_resolved: int = 0
    seeds_unresolved: int = 0
    budget_limit_usd: float | None = None
    budget_remaining_usd: float | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _list_calls(ids: int) -> int:
    """OR-filter calls for ``ids`` referenced works (a short last batch goes free)."""
    full, rest = divmod(ids, BATCH)
    return full + (1 if rest >= SINGLETONS_BELOW else 0)


def estimate(client: OpenAlex, plan: FetchPlan) -> Estimate:
    """The calls and cost of ``plan`` on ``client``'s API (only free calls are made)."""
    check_plan(plan)
    result = Estimate()
    calls = result.calls
    found: list[dict[str, Any]] = []
    for seed in plan.seeds:
        if not seed.key:
            calls["search"] += 1  # a title looked up: one search call, not made now
            continue
        calls["singleton"] += 1
        try:
            work = client.work(seed.key)
        except BadAnswer:
            work = None
        if work is not None and work_id(work.get("id")):
            found.append(work)
    titled = sum(1 for s in plan.seeds if not s.key)
    result.seeds_resolved, result.seeds_unresolved = len(found), \
        len(plan.seeds) - titled - len(found)
    level = len(found) + titled
    if plan.search:
        calls["search"] += 1
        result.notes.append("--search: one search call a page of "
                            f"{plan.per_page} results; counted as one")
    if plan.filters:
        calls["list"] += 1
        result.notes.append(f"--filter: one list call a page of {plan.per_page} results; "
                            "counted as one")
    refs_of = [len(w.get("referenced_works") or []) for w in found]
    citers_of = [int(w.get("cited_by_count") or 0) for w in found]
    mean_refs = sum(refs_of) / len(refs_of) if refs_of else 0.0
    mean_citers = sum(citers_of) / len(citers_of) if citers_of else 0.0
    total = min(level, plan.max_works)
    known = {work_id(w.get("id")) for w in found}
    for depth in range(plan.depth):
        room = plan.max_works - total
        if room <= 0 or level <= 0:
            break
        if depth == 0 and found:
            refs = len({work_id(r) for w in found for r in w.get("referenced_works") or []}
                       - known)
            citers = sum(citers_of) if plan.citing else 0
        else:
            refs = round(level * mean_refs)
            citers = round(level * mean_citers) if plan.citing else 0
        wanted = refs + citers
        share = min(1.0, room / wanted) if wanted else 0.0
        ref_calls = _list_calls(refs)
        cite_calls = max(math.ceil(level / BATCH), math.ceil(citers / plan.per_page)) \
            if plan.citing else 0
        calls["list"] += math.ceil((ref_calls + cite_calls) * share)
        calls["singleton"] += math.ceil((refs % BATCH if refs % BATCH < SINGLETONS_BELOW
                                         else 0) * share)
        level = math.floor(wanted * share)
        total += level
        if depth == 1:
            result.notes.append("from step 2 on, the counts are estimates: each paper is taken "
                                f"to have the seeds' mean of {mean_refs:.1f} references"
                                + (f" and {mean_citers:.1f} citing papers" if plan.citing
                                   else ""))
    result.works = total
    result.cost_usd = round(sum(calls[kind] * PRICES[kind] for kind in calls), 6)
    result.budget_limit_usd = client.budget.limit_usd
    result.budget_remaining_usd = client.budget.left()
    if result.budget_limit_usd is None:  # no answer said: OpenAlex's published daily budget
        published = FREE_KEY_USD if client.budget.keyed else KEYLESS_USD
        result.budget_limit_usd = result.budget_remaining_usd = published
        result.notes.append(f"the API sent no budget headers: OpenAlex's published ${published:g} "
                            f"a day {'with a free key' if client.budget.keyed else 'without a key'}"
                            " counted on")
    return result


def estimate_view(data: dict[str, Any]) -> Any:
    """A dry run's estimate (:func:`estimate` as a dict) as a Rich table: the calls by kind,
    their price and cost, and in the caption the works, the cost in all and the budget left."""
    table = Table(title="dry run: the calls this fetch would make (only free calls were made)",
                  title_justify="left")
    for name in ("calls", "kind", "price each", "cost"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for kind, count in data["calls"].items():
        table.add_row(f"{count:,}", kind, f"${PRICES[kind]:g}", f"${count * PRICES[kind]:.4f}")
    left, limit = data["budget_remaining_usd"], data["budget_limit_usd"]
    table.caption = (f"about {data['works']:,} works, ${data['cost_usd']:.4f} in all; "
                     + (f"${left:.4f} left today of ${limit:g} a day"
                        if left is not None and limit is not None
                        else "the API sent no budget headers")
                     + "".join(f"; {note}" for note in data["notes"]))
    table.caption_justify = "left"
    return table
