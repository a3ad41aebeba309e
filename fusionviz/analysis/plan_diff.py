"""The plan diff between two runs: which fusion groups split, merged, appeared or vanished from A's plan to B's.

A and B are any two runs with kernels: two modes of one session, or runs of two sessions (two torch versions,
two devices). Kernels are matched by what they compute, not by their names (whose indices shift): two compiled
runs by Inductor's provenance records (`provenance.kernel_provenance`: the pre-grad nodes each kernel computes),
an eager run against a compiled one by the fusion links (`links.run_links`, from the eager ops' lines where both
kept them), and what neither says (two eager runs, kernels outside every compiled graph such as a CUDA graph's
input copies, sessions recorded without provenance) by their names in launch order.

A kernel here is one compiled kernel however many launches it takes (a split GEMM's two), or one eager op call
(its kernels). Two kernels either side that share work are one fusion group: the connected parts of the graph
whose edges are the matches. A group's change follows from its kernels on each side (`CHANGES`). Figures are
those of each run's representative profiled iteration, so µs are profiled (slowed a little by the profiler).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from fusionviz.analysis.headline import MECHANISM_CHARS, WORDS, Headline, micros, signed, size_words, word_count
from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import run_links
from fusionviz.analysis.op_costs import Cost
from fusionviz.analysis.provenance import (
    KernelProvenance,
    iteration_provenance,
    kernel_origins,
    of_iteration,
    op_sources,
)
from fusionviz.records.session import ModeRun

Change = Literal["merged", "split", "regrouped", "replaced", "kept", "appeared", "vanished"]
PlanLinks = Literal["provenance", "names"]

# What happened to a group, from its kernels in A (m) and in B (n); in the order the headline lists them.
CHANGES: dict[Change, str] = {
    "merged": "several of A's kernels became one of B's (m > 1, n = 1)",
    "split": "one of A's kernels became several of B's (m = 1, n > 1)",
    "regrouped": "several became several: the work was cut up anew (m > 1, n > 1)",
    "appeared": "kernels of B's that compute nothing A's kernels did (m = 0)",
    "vanished": "kernels of A's whose work no kernel of B's computes (n = 0)",
    "replaced": "one kernel for one, under another name (m = n = 1): a library GEMM become a Triton template",
    "kept": "the same kernels by name on both sides (m = n): a GEMM and its epilogue that compiled again alike",
}

GROUP_COLUMNS: dict[str, str] = {
    "group": "the fusion group, numbered in launch order (A's; a group B alone has after its neighbour)",
    "change": "what happened to it (CHANGES)",
    "kernels_a": "A's kernels in it (a compiled kernel however many launches it takes; an eager op call)",
    "kernels_b": "B's kernels in it",
    "launches_a": "A's launches per iteration in it",
    "launches_b": "B's launches per iteration in it",
    "us_a": "A's kernel µs per iteration in it (the representative profiled iteration)",
    "us_b": "B's kernel µs per iteration in it",
    "us_diff": "us_b - us_a",
    "bytes_a": "bytes A's kernels in it move per iteration (kernel_costs); NaN unless every one's are known",
    "bytes_b": "likewise for B",
    "names_a": "A's kernels in it, short names, each ×launches",
    "names_b": "B's kernels in it, likewise",
    "computes": "what it computes: the pre-grad nodes as `op (module)` where provenance says, else the eager "
                "ops, else the kernel names",
}

KERNEL_COLUMNS: dict[str, str] = {
    "side": "'A' or 'B'",
    "group": "its fusion group (GROUP_COLUMNS.group)",
    "change": "its group's change",
    "name": "short name",
    "kernel_class": "its class",
    "launches": "launches per iteration",
    "us": "kernel µs per iteration",
    "bytes": "bytes moved per iteration (kernel_costs); NaN where not known",
    "computes": "where it came from (provenance.kernel_origins), without its lines",
    "counterparts": "the other side's kernels it shares work with, short names in launch order",
}

RUN_COLUMNS: dict[str, str] = {
    "quantity": "what is counted (RUN_QUANTITIES)",
    "a": "A's figure (NaN where the run has none: an eager run's graphs)",
    "b": "B's figure",
}
RUN_QUANTITIES = ("kernels per iteration", "launches per iteration", "kernel µs per iteration",
                  "bytes per iteration", "graphs", "graph breaks", "recompiles")
BREAK_COLUMNS: dict[str, str] = {"side": "'A' or 'B'", "reason": "Dynamo's reason", "user_frame": "where it broke"}


@dataclass(frozen=True)
class PlanDiff:
    """Two runs' plans set against each other. `a` and `b` label the runs; `links` says what matched them:
    "provenance" (Inductor's records, or eager's ops' lines against them) or "names" (neither run kept them);
    `by_name` counts the kernels matched by name all the same (no records said: a CUDA graph's input copy).
    `groups`: GROUP_COLUMNS, in launch order; `kernels`: KERNEL_COLUMNS, A's then B's; `runs`: RUN_COLUMNS, one
    row per RUN_QUANTITIES; `breaks`: BREAK_COLUMNS, each run's graph breaks."""

    a: str
    b: str
    links: PlanLinks
    groups: pd.DataFrame
    kernels: pd.DataFrame
    runs: pd.DataFrame
    breaks: pd.DataFrame
    headline: Headline
    by_name: int = 0
    templates: tuple[int, int, int] = field(default=(0, 0, 0))  # B's templates, A's GEMMs they took, kernels absorbed

    def changed(self) -> pd.DataFrame:
        """The groups that split, merged, were regrouped, appeared or vanished (not those kept or replaced)."""
        return self.groups[~self.groups.change.isin(["kept", "replaced"])]


@dataclass(frozen=True)
class _Side:
    """One run's representative iteration, cut into kernels (`units`: the rows of each). Each unit's main row
    (its longest launch: what names it, an eager convolution's GEMM, not its layout copies), name and label are
    taken once: a diff of a transformer's runs asks for them tens of thousands of times."""

    run: ModeRun
    kernels: pd.DataFrame
    provenance: list[KernelProvenance | None]
    units: list[list[int]]
    unit_of: list[int]
    costs: list[Cost | None]
    origins: list[str]
    dur: np.ndarray  # each row's kernel µs
    short: list[str]  # each row's short name
    classes: list[str]  # each row's kernel class
    main: list[int]  # each unit's main row
    names: list[str]  # each unit's name: its main row's short name
    labels: list[str]  # what a unit is called when matched by name: its launching op, else its short name

    @property
    def compiled(self) -> bool:
        return any(p is not None for p in self.provenance)


def _side(run: ModeRun, costs: Sequence[Cost | None] | None) -> _Side:
    kernels = iteration_kernels(run)
    provenance = iteration_provenance(run)
    units: list[list[int]] = []
    unit_of: list[int] = []
    by_handle: dict[tuple[int, str], int] = {}
    previous_op: int | None = None
    for i, (prov, op_id, launch_op) in enumerate(zip(provenance, kernels.op_id, kernels.launch_op, strict=True)):
        if prov is not None:
            key = (prov.graph, prov.handle)
            if key not in by_handle:
                by_handle[key] = len(units)
                units.append([])
            unit = by_handle[key]
            previous_op = None
        elif op_id != -1 and "::" in str(launch_op) and op_id == previous_op and unit_of:
            unit = unit_of[-1]  # another kernel of the same op call
        else:
            unit = len(units)
            units.append([])
            previous_op = int(op_id) if op_id != -1 and "::" in str(launch_op) else None
        units[unit].append(i)
        unit_of.append(unit)
    picked = of_iteration(run, list(costs)) if costs is not None else [None] * len(kernels)
    origins = [o.partition(" · ")[0] if " · " in o else o for o in of_iteration(run, kernel_origins(run))]
    dur = kernels.dur_us.to_numpy(dtype=float)
    us = dur.tolist()
    short = [str(x) for x in kernels.short_name]
    main = [max(rows, key=lambda r: (us[r], -r)) for rows in units]
    ops = [(str(op), int(op_id)) for op, op_id in zip(kernels.launch_op, kernels.op_id, strict=True)]
    labels = [ops[r][0] if "::" in ops[r][0] and ops[r][1] != -1 else short[r] for r in main]
    return _Side(run, kernels, provenance, units, unit_of, picked, origins, dur=dur, short=short,
                 classes=[str(x) for x in kernels.kernel_class], main=main, names=[short[r] for r in main],
                 labels=labels)


def _provenance_edges(a: _Side, b: _Side) -> set[tuple[int, int]]:
    """Kernels of A and B that compute a pre-grad node in common (a kernel that only reads nodes, through views,
    counts those)."""
    def nodes(side: _Side) -> dict[tuple[int | None, str], set[int]]:
        found: dict[tuple[int | None, str], set[int]] = {}
        for i, prov in enumerate(side.provenance):
            if prov is not None:
                for name in prov.computes or prov.pre_grad:
                    found.setdefault((prov.dynamo_graph, name), set()).add(side.unit_of[i])
        return found
    na, nb = nodes(a), nodes(b)
    return {(ua, ub) for key, units in na.items() for ua in units for ub in nb.get(key, ())}


def _name_edges(a: _Side, b: _Side, skip_a: set[int], skip_b: set[int]) -> set[tuple[int, int]]:
    """The kernels left unmatched, matched by name (launching op, else short name) in launch order."""
    left_a = [u for u in range(len(a.units)) if u not in skip_a]
    left_b = [u for u in range(len(b.units)) if u not in skip_b]
    matcher = difflib.SequenceMatcher(a=[a.labels[u] for u in left_a], b=[b.labels[u] for u in left_b],
                                      autojunk=False)
    return {(left_a[block.a + k], left_b[block.b + k]) for block in matcher.get_matching_blocks()
            for k in range(block.size)}


def _line_edges(eager: _Side, compiled: _Side, linked: set[int]) -> set[tuple[int, int]]:
    """An eager op call the fusion links left out (a convolution's bias `add_`, which no pre-grad node is) joins
    the compiled kernels that compute its module's nodes of its line: its work went into one of them."""
    sources = of_iteration(eager.run, op_sources(eager.run))
    where: dict[tuple[int | None, str], tuple[str, str]] = {(n.graph, n.name): (n.module, n.source)
                                                           for n in compiled.run.graph_nodes if n.source}
    by_line: dict[tuple[str, str], set[int]] = {}
    for i, prov in enumerate(compiled.provenance):
        if prov is None:
            continue
        for name in prov.computes:
            if (prov.dynamo_graph, name) in where:
                by_line.setdefault(where[(prov.dynamo_graph, name)], set()).add(compiled.unit_of[i])
    found = set()
    for unit, rows in enumerate(eager.units):
        source = sources[rows[0]]
        if unit not in linked and source is not None and source.source:
            found |= {(unit, c) for c in by_line.get((source.module, source.source), ())}
    return found


def _edges(a: _Side, b: _Side) -> tuple[set[tuple[int, int]], PlanLinks, int]:
    """The matches between A's and B's kernels (unit indices), what they came from, and how many kernels were
    matched by name though the rest came from records."""
    links: PlanLinks = "names"
    edges: set[tuple[int, int]] = set()
    if a.compiled and b.compiled:
        edges, links = _provenance_edges(a, b), "provenance"
    elif a.compiled or b.compiled or (a.run.mode == "eager") != (b.run.mode == "eager"):
        # eager (or a run of no records) against a compiled run: the fusion links (by op families without records)
        eager, compiled = (b, a) if a.compiled or b.run.mode == "eager" else (a, b)
        found = run_links(eager.run, compiled.run, eager.kernels, compiled.kernels)
        pairs = {(eager.unit_of[int(e)], compiled.unit_of[int(c)])
                 for e, c in zip(found.table.eager_index, found.table.compiled_index, strict=True)}
        pairs |= _line_edges(eager, compiled, {e for e, _ in pairs})
        edges = pairs if eager is a else {(c, e) for e, c in pairs}
        links = found.kind
    named = _name_edges(a, b, {x for x, _ in edges}, {y for _, y in edges})
    return edges | named, links, len(named) if links == "provenance" else 0


def _components(m: int, n: int, edges: set[tuple[int, int]]) -> list[tuple[list[int], list[int]]]:
    """The connected parts of the match graph: (A's units, B's units), each sorted."""
    parent = list(range(m + n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for ua, ub in edges:
        parent[root(ua)] = root(m + ub)
    parts: dict[int, tuple[list[int], list[int]]] = {}
    for x in range(m + n):
        members = parts.setdefault(root(x), ([], []))
        (members[0] if x < m else members[1]).append(x if x < m else x - m)
    return list(parts.values())


def _change(a: _Side, b: _Side, units_a: list[int], units_b: list[int]) -> Change:
    m, n = len(units_a), len(units_b)
    if m == 0:
        return "appeared"
    if n == 0:
        return "vanished"
    if sorted(a.names[u] for u in units_a) == sorted(b.names[u] for u in units_b):
        return "kept"
    if m == 1 and n == 1:
        return "replaced"
    if m == 1:
        return "split"
    return "merged" if n == 1 else "regrouped"


def _counted(names: list[str]) -> str:
    return ", ".join(f"{name} ×{count}" for name, count in Counter(names).items())


def _bytes(side: _Side, rows: list[int]) -> float:
    costs = [side.costs[i] for i in rows]
    return float(sum(c.total for c in costs if c is not None)) if rows and all(c is not None for c in costs) \
        else math.nan


def _computes(side: _Side, rows: list[int]) -> list[str]:
    words = [w.strip() for i in rows for w in side.origins[i].split(", ") if w.strip()]
    return list(dict.fromkeys(words))


def plan_diff(a: ModeRun, b: ModeRun, costs_a: Sequence[Cost | None] | None = None,
              costs_b: Sequence[Cost | None] | None = None, label_a: str | None = None,
              label_b: str | None = None) -> PlanDiff:
    """The plan diff of B against A (`costs_*`: each run's kernel costs aligned with its `kernels`,
    `kernel_costs.RunCosts.costs`; None: bytes unknown). `label_*` name the runs (default: their modes)."""
    sa, sb = _side(a, costs_a), _side(b, costs_b)
    edges, links, by_name = _edges(sa, sb)
    parts = _components(len(sa.units), len(sb.units), edges)
    first_a = {i: min(sa.units[u][0] for u in ua) for i, (ua, _) in enumerate(parts) if ua}
    first_b = {i: min(sb.units[u][0] for u in ub) for i, (_, ub) in enumerate(parts) if ub}
    order: dict[int, float] = dict(first_a)
    for i in (i for i in range(len(parts)) if i not in first_a):  # B's alone: after the group launched before
        before = [j for j in first_a if j in first_b and first_b[j] < first_b[i]]
        order[i] = (first_a[max(before, key=lambda j: first_b[j])] if before else -1) + 0.5 + first_b[i] * 1e-6
    partners: tuple[dict[int, set[int]], dict[int, set[int]]] = ({}, {})  # of each A unit in B; of each B unit in A
    for x, y in edges:
        partners[0].setdefault(x, set()).add(y)
        partners[1].setdefault(y, set()).add(x)
    rows, kernels = [], []
    for number, i in enumerate(sorted(order, key=lambda j: order[j]), start=1):
        ua, ub = parts[i]
        change = _change(sa, sb, ua, ub)
        rows_a = sorted(r for u in ua for r in sa.units[u])
        rows_b = sorted(r for u in ub for r in sb.units[u])
        us_a = float(sa.dur[rows_a].sum()) if rows_a else 0.0
        us_b = float(sb.dur[rows_b].sum()) if rows_b else 0.0
        words = _computes(sb, rows_b) if sb.compiled or not rows_a else _computes(sa, rows_a)
        words = words or _computes(sa, rows_a) or [sa.names[u] for u in ua] + [sb.names[u] for u in ub]
        rows.append({"group": number, "change": change, "kernels_a": len(ua), "kernels_b": len(ub),
                     "launches_a": len(rows_a), "launches_b": len(rows_b), "us_a": us_a, "us_b": us_b,
                     "us_diff": us_b - us_a, "bytes_a": _bytes(sa, rows_a) if rows_a else 0.0,
                     "bytes_b": _bytes(sb, rows_b) if rows_b else 0.0,
                     "names_a": _counted([sa.short[r] for r in rows_a]),
                     "names_b": _counted([sb.short[r] for r in rows_b]),
                     "computes": ", ".join(words)})
        for side, own, other, units, mine in (("A", sa, sb, ua, 0), ("B", sb, sa, ub, 1)):
            for u in units:
                kernels.append({"side": side, "group": number, "change": change, "name": own.names[u],
                                "kernel_class": own.classes[own.main[u]],
                                "launches": len(own.units[u]),
                                "us": float(own.dur[own.units[u]].sum()),
                                "bytes": _bytes(own, own.units[u]),
                                "computes": ", ".join(_computes(own, own.units[u])),
                                "counterparts": ", ".join(other.names[p] for p in sorted(partners[mine].get(u, ())))})
    groups = pd.DataFrame(rows, columns=list(GROUP_COLUMNS))
    table = pd.DataFrame(kernels, columns=list(KERNEL_COLUMNS))
    table = table.sort_values(["side", "group"], kind="stable").reset_index(drop=True)
    la, lb = label_a or a.mode, label_b or b.mode
    templates = _templates(table)
    runs = _runs(sa, sb)
    breaks = pd.DataFrame([{"side": side, "reason": br.reason, "user_frame": br.user_frame}
                           for side, run in (("A", a), ("B", b)) for br in run.graph_breaks],
                          columns=list(BREAK_COLUMNS))
    headline = plan_headline(la, lb, links, groups, runs, templates, by_name)
    return PlanDiff(la, lb, links, groups, table, runs, breaks, headline, by_name, templates)


def _templates(kernels: pd.DataFrame) -> tuple[int, int, int]:
    """B's Triton templates that took the place of A's library GEMMs: how many templates, how many GEMMs, and
    how many of A's other kernels they absorbed (their epilogues and prologues)."""
    b = kernels[(kernels.side == "B") & (kernels.kernel_class == "triton_template")]
    took = kernels[(kernels.side == "A") & kernels.group.isin(b.group)]
    gemms = took[took.kernel_class == "gemm"]
    if b.empty or gemms.empty:
        return (0, 0, 0)
    return (len(b), len(gemms), len(took) - len(gemms))


def _runs(a: _Side, b: _Side) -> pd.DataFrame:
    def figures(side: _Side) -> list[float]:
        run = side.run
        known = [c.total for c in side.costs if c is not None]
        return [float(len(side.units)), float(len(side.kernels)), float(side.kernels.dur_us.sum()),
                float(sum(known)) if known and len(known) == len(side.costs) else math.nan,
                float(run.graph_count) if run.graph_count is not None else math.nan,
                float(len(run.graph_breaks)) if run.graph_count is not None else math.nan,
                float(run.recompiles) if run.recompiles is not None else math.nan]
    return pd.DataFrame({"quantity": list(RUN_QUANTITIES), "a": figures(a), "b": figures(b)},
                        columns=list(RUN_COLUMNS))


def _fewer(n: int) -> str:
    if n == 0:
        return "as many kernels"
    return f"{abs(n)} kernel{'' if abs(n) == 1 else 's'} {'fewer' if n < 0 else 'more'}"


def plan_headline(a: str, b: str, links: PlanLinks, groups: pd.DataFrame, runs: pd.DataFrame,
                  templates: tuple[int, int, int] = (0, 0, 0), by_name: int = 0) -> Headline:
    """What a plan diff leads with: B against A, the groups that changed by kind (the two most common) and the
    change in launches per iteration ("default+freezing against default: 3 groups merged, 2 kernels fewer");
    as its mechanism, the GEMMs that became Triton templates and what they absorbed, else the group whose time
    changed most; the exact figures as its details."""
    counts = groups.change.value_counts()
    shown = [c for c in CHANGES if c not in ("kept", "replaced") and counts.get(c, 0)]
    figures = runs.set_index("quantity")
    la, lb = figures.at["launches per iteration", "a"], figures.at["launches per iteration", "b"]
    ua, ub = figures.at["kernel µs per iteration", "a"], figures.at["kernel µs per iteration", "b"]
    said = sorted(shown, key=lambda c: -int(counts[c]))[:2]
    phrases = [f"{int(counts[c])} group{'' if counts[c] == 1 else 's'} {c}" for c in said] or ["same fusion groups"]
    # the first that keeps the headline's budgets (words, one line on a slide): fewer kinds, then "B against A"
    # for runs whose labels are long (a mode of each of two sessions)
    tried = [f"{nb} against {na}: {', '.join(phrases[:n])}, {_fewer(int(lb - la))}"
             for na, nb in ((a, b), ("A", "B")) for n in range(len(phrases), 0, -1)]
    text = next((t for t in tried if word_count(t) <= WORDS and not Headline(t).problems()), tried[-1])
    if templates[0]:
        t, g, absorbed = templates
        mechanism = (f"{g} GEMM{'' if g == 1 else 's'} became {t} Triton template{'' if t == 1 else 's'}"
                     + (f", absorbing {absorbed} other kernel{'' if absorbed == 1 else 's'}." if absorbed else "."))
    elif groups.empty:
        mechanism = ""
    else:
        top = groups.loc[groups.us_diff.abs().idxmax()]
        says = f" {top.change}: {signed(float(top.us_diff))} µs per iteration."
        what = str(top.computes)
        room = MECHANISM_CHARS - len(says) - len("Most changed: ")
        mechanism = "Most changed: " + (what if len(what) <= room else what[:room - 1] + "…") + says
    if links == "names" and len("By kernel names: ") + len(mechanism) <= MECHANISM_CHARS:
        mechanism = "By kernel names: " + mechanism[:1].lower() + mechanism[1:]
    matched = ("Kernels matched by Inductor's provenance records (the pre-grad nodes each computes)"
               + (f", {by_name} more by name (no record covers them)" if by_name else "") + "."
               if links == "provenance" else
               "Kernels matched by their names in launch order: a run kept no provenance records (older sessions), "
               "so a renamed kernel reads as one vanished and one appeared.")
    listed = ", ".join(f"{int(counts[c])} {c}" for c in CHANGES if counts.get(c, 0)) or "no groups"
    details = [f"{a} launches {la:g} kernels per iteration in {micros(ua)}, {b} {lb:g} in {micros(ub)} (each run's "
               "representative profiled iteration).", matched, f"Fusion groups: {listed}."]
    ba, bb = figures.at["bytes per iteration", "a"], figures.at["bytes per iteration", "b"]
    if math.isfinite(ba) and math.isfinite(bb):
        details.append(f"Bytes moved per iteration: {a} {size_words(ba)}, {b} {size_words(bb)}.")
    graphs = [(q, figures.at[q, "a"], figures.at[q, "b"]) for q in ("graphs", "graph breaks", "recompiles")]
    if any(math.isfinite(x) or math.isfinite(y) for _, x, y in graphs):
        details.append("Graphs, graph breaks and recompiles: " + "; ".join(
            f"{q} {_count(x)} against {_count(y)}" for q, x, y in graphs) + f" ({a} against {b}).")
    return Headline(text, mechanism, tuple(details))


def _count(x: float) -> str:
    return f"{x:g}" if math.isfinite(x) else "–"


def baseline(runs: Sequence[ModeRun], mode: str) -> str | None:
    """The run a mode's plan is set against in one session: `default` for another compiled mode (what
    max-autotune or freezing changed), eager for `default` and for a run not compiled; None where neither ran."""
    modes = [r.mode for r in runs]
    run = next((r for r in runs if r.mode == mode), None)
    if run is not None and mode != "default" and "default" in modes and run.graph_count is not None:
        return "default"
    return "eager" if "eager" in modes and mode != "eager" else None
