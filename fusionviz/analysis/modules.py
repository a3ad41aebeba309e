"""Kernel time per module of the model, eager against each compiled mode: where in the model fusion paid, and
where it did not.

Every kernel of a run is given one module, as `named_modules` names it (`h.0.attn.c_attn`, `layer3.1.conv2`; ""
is the model itself, for ops its own `forward` makes):

- an eager kernel: the innermost module whose `forward` made the op that launched it (`OpSource.module`, from the
  marked pass of `measure.provenance.op_sources`);
- a compiled kernel of a forward graph: the module of the last op it computes (views and other relabelling ops
  aside, `_PASSIVE_OPS`), in the order Dynamo captured the ops (Inductor's provenance maps the kernel to the
  pre-grad nodes it computes, Dynamo's graph each node to its module). That op's result is what the kernel writes
  out: a kernel that fuses GPT-2's residual add with the next block's LayerNorm counts for that LayerNorm, and a
  kernel that recomputes a cheap earlier op (Inductor rematerialises them instead of reading them back) counts
  once, where its result goes, not where the op first ran. A kernel that computes nothing itself (only reads
  through views) takes the last node it reads;
- OUTSIDE: a kernel launched outside the model's forward. Eager: an op in no module's `forward` with no line of
  the model (a train pass's loss and its backward, which autograd runs outside every module). Compiled: a kernel
  of a backward graph (Inductor maps only the forward's nodes) or outside every compiled graph (the loss, a CUDA
  graph's input copy);
- COPIES: a copy kernel that no compiled kernel's record names, inside a compiled graph's call: the copy of the
  inputs into a CUDA graph's static buffers (reduce-overhead, max-autotune), the price of the graph's replay;
- UNKNOWN: a kernel the session keeps no record for (a session recorded before schema 3, a plain trace, an eager
  row the marked pass did not align with).

Eager replayed as one CUDA graph (`eager_cuda_graph`) launches eager's kernels: they take eager's modules, aligned
by name as eager's own profiled iterations are.

So each mode's rows add up to its kernel time per iteration (`kernel_tables.KERNEL_US`: every stream, memory
operations out), and the eager and compiled totals of one module compare what the same part of the model cost.
`module_tree` adds each module's ancestors, so that a tree, a treemap or an icicle can show `h.0` as the sum of
`h.0.attn`, `h.0.mlp` and its own ops.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
import pandas as pd

from fusionviz.analysis.headline import MECHANISM_CHARS, Headline, micros
from fusionviz.analysis.provenance import kernel_provenance, op_sources
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.derived import derived
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.session import GraphNode, ModeRun

OUTSIDE = "(outside the forward)"
COPIES = "(input copies)"
UNKNOWN = "(no record)"
PSEUDO_MODULES: tuple[str, ...] = (OUTSIDE, COPIES, UNKNOWN)

MODULE_COLUMNS: dict[str, str] = {
    "module": "the module's path as named_modules names it (`h.0.attn`); '' for the model itself; OUTSIDE, "
              "COPIES or UNKNOWN for kernels of no module of the forward",
    "mode": "the run's mode (eager first, then each compiled mode in the session's order)",
    "kernel_us": "kernel time per profiled iteration of the kernels given to the module itself, not to its "
                 "children (µs; every stream added, memory operations out)",
    "kernels": "kernels given to the module, per iteration",
    "share": "kernel_us over the mode's kernel time per iteration (0-1): a mode's shares add up to 1",
    "order": "the module's place in the model: the launch order of its first kernel in the first run that has one",
}

TREE_COLUMNS: dict[str, str] = {
    "module": "the module's path ('' the model itself), every ancestor of a module of `module_table` included",
    "parent": "its parent's path ('' for a top-level module and the pseudo-modules; None for the model itself)",
    "label": "its own name: the last part of its path, with its container's where that is an index ('h.0'); the "
             "model for ''",
    "depth": "0 for the model, 1 for its children, …",
    "mode": "the run's mode",
    "kernel_us": "kernel time per iteration of the module and everything under it (µs): a parent holds at least "
                 "the sum of its children (its own kernels besides)",
    "own_us": "kernel time per iteration given to the module itself (module_table's kernel_us)",
    "kernels": "kernels per iteration of the module and everything under it",
    "share": "kernel_us over the mode's kernel time per iteration (0-1)",
    "order": "the module's place in the model (the least order under it), to lay siblings out in model order",
}


@derived
def kernel_modules(run: ModeRun) -> list[str | None]:
    """For each of the run's kernel records (in stored order), the module it is given (see the module's
    docstring), or None for a memory operation (not a kernel)."""
    if any(run.provenance):
        return _compiled_modules(run)
    sources = op_sources(run)
    found: list[str | None] = []
    for row, source in zip(run.kernels, sources, strict=True):
        if row.kernel_class == MEMORY_CLASS:
            found.append(None)
        elif source is None:
            found.append(UNKNOWN)
        elif not source.module and not source.source:
            found.append(OUTSIDE)
        else:
            found.append(source.module)
    return found


def _compiled_modules(run: ModeRun) -> list[str | None]:
    nodes: dict[tuple[int | None, str], tuple[int, GraphNode]] = {
        (n.graph, n.name): (i, n) for i, n in enumerate(run.graph_nodes)}
    found: list[str | None] = []
    for row, prov in zip(run.kernels, kernel_provenance(run), strict=True):
        if row.kernel_class == MEMORY_CLASS:
            found.append(None)
        elif prov is None:
            found.append((COPIES if row.kernel_class == "copy" else UNKNOWN) if row.graph else OUTSIDE)
        elif prov.backward:
            found.append(OUTSIDE)
        else:
            known = sorted(nodes[(prov.dynamo_graph, name)] for name in prov.computes or prov.pre_grad
                           if (prov.dynamo_graph, name) in nodes)
            acting = [n for _, n in known if n.op not in _PASSIVE_OPS] or [n for _, n in known]
            found.append(acting[-1].module if acting else UNKNOWN)
    return found


# Pre-grad ops that only reshape, pick or relabel (Dynamo names a node's op after what it calls): the last op a
# kernel computes is taken among the others, so that GPT-2's final LayerNorm, whose kernel also writes the
# model's `view` of its output, counts for `ln_f` and not for the model.
_PASSIVE_OPS = frozenset({"view", "reshape", "transpose", "permute", "getitem", "contiguous", "expand", "unsqueeze",
                          "squeeze", "split", "size", "flatten", "unflatten", "t", "view_as", "expand_as", "chunk",
                          "unbind", "narrow", "select", "to", "type_as", "float", "detach"})


def module_table(runs: Iterable[ModeRun]) -> pd.DataFrame:
    """Kernel time per module and mode (columns: MODULE_COLUMNS), for every run that was profiled; each mode's
    rows add up to its kernel time per iteration, and its shares to 1. Rows in the modes' order, each mode's
    modules in model order."""
    rows: list[dict[str, object]] = []
    order: dict[str, int] = {}
    runs = list(runs)
    eager = next((r for r in runs if r.mode == "eager"), None)
    for run in runs:
        if run.summary is None or not run.kernels:
            continue
        iterations = max(run.summary.iterations, 1)
        if run.mode == GRAPHED_EAGER and not run.op_sources and eager is not None:
            run = msgspec.structs.replace(run, op_sources=eager.op_sources)  # eager's kernels, replayed
        per: dict[str, list[float]] = {}
        ordered = sorted(zip(run.kernels, kernel_modules(run), strict=True),
                         key=lambda pair: (pair[0].iteration, pair[0].start_us))
        for row, module in ordered:
            if module is None:
                continue
            order.setdefault(module, len(order))
            us_and_count = per.setdefault(module, [0.0, 0.0])
            us_and_count[0] += row.dur_us
            us_and_count[1] += 1
        total = sum(us for us, _ in per.values())
        for module, (us, count) in per.items():
            rows.append({"module": module, "mode": run.mode, "kernel_us": us / iterations,
                         "kernels": count / iterations, "share": us / total if total > 0 else 0.0,
                         "order": order[module]})
    table = pd.DataFrame(rows, columns=list(MODULE_COLUMNS))
    modes = list(dict.fromkeys(table["mode"]))
    return (table.assign(_mode=table["mode"].map(modes.index)).sort_values(["_mode", "order"], kind="stable")
            .drop(columns="_mode").reset_index(drop=True))


def ancestors(module: str) -> list[str]:
    """The module's ancestors from the model down, itself last: "h.0.attn" → ["", "h", "h.0", "h.0.attn"]; a
    pseudo-module (OUTSIDE, COPIES, UNKNOWN) hangs from the model."""
    if not module:
        return [""]
    if module in PSEUDO_MODULES:
        return ["", module]
    parts = module.split(".")
    return ["", *(".".join(parts[:i]) for i in range(1, len(parts) + 1))]


def _label(module: str) -> str:
    """A module's own name on a chart: the last part of its path, with its container's name where it is an index
    ("h.0", "layer3.1"); a pseudo-module as it is."""
    if module in PSEUDO_MODULES:
        return module
    parts = module.split(".")
    return ".".join(parts[-2:]) if parts[-1].isdigit() and len(parts) > 1 else parts[-1]


def module_tree(table: pd.DataFrame, model: str = "the model") -> pd.DataFrame:
    """`module_table`'s rows with every ancestor added and each module's time summed over everything under it
    (columns: TREE_COLUMNS), per mode: the ids, parents and values a tree, treemap or icicle is drawn from.
    `model` labels the root."""
    rows: list[dict[str, object]] = []
    for mode, part in table.groupby("mode", sort=False):
        mode_total = float(part.kernel_us.sum())
        totals: dict[str, list[float]] = {}
        for module, us, count, order in zip(part.module, part.kernel_us, part.kernels, part.order, strict=True):
            for ancestor in ancestors(module):
                entry = totals.setdefault(ancestor, [0.0, 0.0, 0.0, float(order)])
                entry[0] += us
                entry[1] += count
                entry[3] = min(entry[3], float(order))
            totals[module][2] += us
        for module, (us, count, own, order) in totals.items():
            chain = ancestors(module)
            rows.append({"module": module, "parent": chain[-2] if len(chain) > 1 else None,
                         "label": model if not module else _label(module), "depth": len(chain) - 1, "mode": mode,
                         "kernel_us": us, "own_us": own, "kernels": count,
                         "share": us / mode_total if mode_total > 0 else 0.0, "order": order})
    tree = pd.DataFrame(rows, columns=list(TREE_COLUMNS))
    modes = list(dict.fromkeys(tree["mode"]))
    return (tree.assign(_mode=tree["mode"].map(modes.index)).sort_values(["_mode", "depth", "order"], kind="stable")
            .drop(columns="_mode").reset_index(drop=True))


def kind_of(module: str, containers: frozenset[str] | set[str] = frozenset()) -> str:
    """A module's kind: its path with the index of each repeated block that holds modules (`containers`: every
    path that is another module's ancestor) as `*`, so that the same part of every block reads as one ("h.0.mlp.act"
    → "h.*.mlp.act", "layer3.1.conv2" → "layer3.*.conv2", a block's own ops "h.0" → "h.*"), while the numbered
    layers of a Sequential stay apart ("net.0", "net.2"); "" is "the model's own ops"."""
    if not module:
        return "the model's own ops"
    parts = module.split(".")
    return ".".join("*" if part.isdigit() and ".".join(parts[:i + 1]) in containers else part
                    for i, part in enumerate(parts))


def module_kinds(table: pd.DataFrame, mode: str) -> pd.DataFrame:
    """Eager's kernel time per iteration against `mode`'s per module kind (`kind_of`), each module's own time:
    columns kind, eager_us, mode_us, saved_us (eager less the mode), modules (how many modules of the kind ran in
    either); most saved first, model order among equals."""
    both = table[table["mode"].isin(["eager", mode])]
    containers = {a for m in set(both.module) if m not in PSEUDO_MODULES for a in ancestors(m)[1:-1]}
    both = both.assign(kind=[kind_of(m, containers) for m in both.module])
    kinds = (both.pivot_table(index="kind", columns="mode", values="kernel_us", aggfunc="sum", fill_value=0.0)
             .reindex(columns=["eager", mode], fill_value=0.0))
    counts = both.groupby("kind").module.nunique()
    order = both.groupby("kind").order.min()
    frame = pd.DataFrame({"kind": kinds.index, "eager_us": kinds["eager"].to_numpy(dtype=float),
                          "mode_us": kinds[mode].to_numpy(dtype=float),
                          "modules": counts.reindex(kinds.index).to_numpy(), "_order": order.reindex(kinds.index)})
    frame["saved_us"] = frame.eager_us - frame.mode_us
    return (frame.sort_values(["saved_us", "_order"], ascending=[False, True], kind="stable")
            .drop(columns="_order").reset_index(drop=True)[["kind", "eager_us", "mode_us", "saved_us", "modules"]])


def module_headline(table: pd.DataFrame, mode: str | None) -> Headline:
    """Where in the model `mode` saved the most kernel time against eager, where it saved least or lost, and the
    figures per module kind (`module_kinds`)."""
    modes = set(table["mode"])
    if mode is None or "eager" not in modes or mode not in modes:
        return Headline("No module-by-module record of this session's kernels")
    known = table[~table.module.isin([UNKNOWN])]
    if known.empty:
        return Headline("No module-by-module record of this session's kernels")
    kinds = module_kinds(table, mode)
    top = kinds.iloc[0]
    if top.saved_us > 0:
        text = f"{mode}: {top.kind} saved most, {micros(top.eager_us, True)} → {micros(top.mode_us, True)}"
    else:
        text = f"{mode}: no module's kernels got faster than eager's"
    eager_total = float(table[table["mode"] == "eager"].kernel_us.sum())
    worst = kinds[(kinds.eager_us >= 0.05 * eager_total) | (kinds.saved_us < 0)].iloc[-1:]
    mechanism = ""
    if not worst.empty and worst.iloc[0].kind != top.kind:
        w = worst.iloc[0]
        verb = "grew" if w.mode_us > 1.05 * w.eager_us else "changed least"
        mechanism = next((m for m in (f"{w.kind} {verb}, {micros(w.eager_us, True)} → {micros(w.mode_us, True)}.",
                                      f"{w.kind} {verb}.") if len(m) <= MECHANISM_CHARS), "")
    mode_total = float(table[table["mode"] == mode].kernel_us.sum())
    details = [f"Kernel time per iteration: {micros(eager_total)} in eager, {micros(mode_total)} in {mode}."]
    details += [f"{k.kind}: {micros(k.eager_us)} → {micros(k.mode_us)} ({k.modules} "
                f"module{'' if k.modules == 1 else 's'})." for k in kinds.head(3).itertuples()]
    return Headline(text, mechanism, tuple(details))
