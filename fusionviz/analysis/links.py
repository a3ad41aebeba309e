"""Which eager kernels each compiled kernel absorbed: from Inductor's provenance where the session holds it,
else by op family in launch order (sessions and traces recorded without it)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.provenance import (
    KernelProvenance,
    LinkKind,
    iteration_provenance,
    iteration_sources,
    kernel_origins,
    link_kind,
    of_iteration,
)
from fusionviz.analysis.sentences import collapse_title
from fusionviz.records.kernels import op_family
from fusionviz.records.session import GraphNode, ModeRun, OpSource

LINK_COLUMNS: dict[str, str] = {
    "eager_index": "row of the eager iteration's kernel table",
    "compiled_index": "row of the compiled iteration's kernel table",
    "family": "the op family they share (matmul, layer_norm, gelu...)",
}


LINK_WORDS: dict[LinkKind, str] = {"provenance": "links from Inductor's records",
                                   "names": "links matched by kernel names"}


@dataclass(frozen=True)
class Links:
    """The links of one steady iteration of two runs (`table`: LINK_COLUMNS), and what they come from:
    "provenance" (Inductor's records and the eager ops' modules and lines) or "names" (op families)."""

    kind: LinkKind
    table: pd.DataFrame


def run_links(eager: ModeRun, compiled: ModeRun, ek: pd.DataFrame | None = None,
              ck: pd.DataFrame | None = None) -> Links:
    """The links between the representative iterations of an eager and a compiled run (`ek`, `ck`: their
    kernels, `kernel_tables.iteration_kernels`, taken here when not given): from provenance when the compiled
    run kept Inductor's records and the eager run its ops' lines, else by names."""
    ek = iteration_kernels(eager) if ek is None else ek
    ck = iteration_kernels(compiled) if ck is None else ck
    if link_kind(eager, compiled) == "provenance":
        return Links("provenance", provenance_links(ek, iteration_sources(eager), iteration_provenance(compiled),
                                                    compiled.graph_nodes))
    return Links("names", fusion_links(ek, ck))


def provenance_links(eager: pd.DataFrame, sources: list[OpSource | None], provenance: list[KernelProvenance | None],
                     nodes: list[GraphNode]) -> pd.DataFrame:
    """Exact links: each eager op (its kernels, one unit) is the pre-grad node of the same module, line and op
    family, the i-th such op the i-th such node; it links to each compiled kernel that computes that node.
    An eager op no node matches by family (`table[idx]`, an `index` in eager, is a `getitem` node; the ops
    inside a custom op) links to its line's kernel when that line (in its module) ended in exactly one."""
    computes: dict[tuple[int, str], list[int]] = {}  # (Dynamo graph, pre-grad node) -> compiled kernels
    for ci, prov in enumerate(provenance):
        if prov is None or prov.dynamo_graph is None:
            continue
        for name in prov.computes:
            kernels = computes.setdefault((prov.dynamo_graph, name), [])
            if ci not in kernels:
                kernels.append(ci)
    queue: dict[tuple[str, str, str], list[GraphNode]] = {}
    by_line: dict[tuple[str, str], set[int]] = {}
    for node in nodes:
        covered = computes.get((node.graph, node.name), [])
        if covered:
            queue.setdefault((node.module, node.source, op_family(node.op)), []).append(node)
            by_line.setdefault((node.module, node.source), set()).update(covered)
    links = []
    for unit in _op_units(eager):
        source = sources[unit[0]]
        if source is None or not source.source:
            continue
        family = op_family(source.launch_op or str(eager.name.iloc[unit[0]]))
        waiting = queue.get((source.module, source.source, family))
        if waiting:
            node = waiting.pop(0)
            targets = computes[(node.graph, node.name)]
        else:
            line = by_line.get((source.module, source.source), set())
            targets = sorted(line) if len(line) == 1 else []
        links += [{"eager_index": ei, "compiled_index": ci, "family": family} for ci in targets for ei in unit]
    return pd.DataFrame(links, columns=list(LINK_COLUMNS))


@dataclass(frozen=True)
class Collapse:
    """What fused into what in one steady iteration: eager's kernels, the compiled mode's, their links and
    where each kernel came from."""

    mode: str  # the compiled mode
    eager: pd.DataFrame  # eager's kernels of one iteration, in launch order (kernel_tables.iteration_kernels)
    compiled: pd.DataFrame  # the mode's, likewise
    links: Links  # LINK_COLUMNS, and whether from Inductor's records or names
    eager_origins: list[str]  # kernel_origins of each eager kernel
    compiled_origins: list[str]  # and of each compiled one
    title: str  # what happened to the kernel count (sentences.collapse_title)


def collapse(eager: ModeRun, compiled: ModeRun, ek: pd.DataFrame, ck: pd.DataFrame) -> Collapse:
    """The links between one iteration's kernels of eager (`ek`) and of the compiled run (`ck`), where each
    came from, and their title."""
    return Collapse(compiled.mode, ek, ck, run_links(eager, compiled, ek, ck),
                    of_iteration(eager, kernel_origins(eager)), of_iteration(compiled, kernel_origins(compiled)),
                    collapse_title(compiled.mode, len(ek), len(ck)))


def fusion_links(eager: pd.DataFrame, compiled: pd.DataFrame) -> pd.DataFrame:
    """Which eager kernels each compiled kernel absorbed, matched by op family in launch order.

    Kernels launched by one op call (a GEMM split in two kernels) count as one unit on either side. A
    compiled GEMM takes the next eager GEMM; a fused kernel that names a matmul without being one
    (Inductor's `addmm_relu` bias epilogue) points back at the GEMM it follows; other ops take the next
    eager unit of their family. Eager kernels left unmatched did not map to anything.
    """
    units = _op_units(eager)
    by_family: dict[str, list[list[int]]] = {}
    for unit in units:
        first = eager.iloc[unit[0]]
        for family in _families(first.fused_ops, first.kernel_class):
            by_family.setdefault(family, []).append(unit)
    taken: dict[str, int] = {}
    last: dict[str, list[int]] = {}
    links = []
    previous: tuple[int, dict[str, list[int]]] | None = None
    for ci, (ops, kernel_class, op_id) in enumerate(
            zip(compiled.fused_ops, compiled.kernel_class, compiled.op_id, strict=True)):
        if previous is not None and op_id != -1 and op_id == previous[0]:
            chosen = previous[1]  # another kernel of the same op call: same eager counterparts
        else:
            chosen = {}
            makes_gemm = kernel_class in ("gemm", "triton_template")
            for family in _families(ops, kernel_class):
                candidates = by_family.get(family)
                if not candidates:
                    continue
                if family == "matmul" and not makes_gemm and family in last:
                    chosen[family] = last[family]
                elif taken.get(family, 0) < len(candidates):
                    chosen[family] = last[family] = candidates[taken.get(family, 0)]
                    taken[family] = taken.get(family, 0) + 1
                elif family in last:
                    chosen[family] = last[family]
        previous = (op_id, chosen)
        links += [{"eager_index": ei, "compiled_index": ci, "family": family}
                  for family, unit in chosen.items() for ei in unit]
    return _link_leftovers(eager, compiled, pd.DataFrame(links, columns=list(LINK_COLUMNS)))


def _link_leftovers(eager: pd.DataFrame, compiled: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Link the eager kernels left over because Inductor names each op once (`cpp_fused_add_mul_0` may
    absorb five muls): each goes to the compiled kernel covering its op family whose already linked eager
    kernels are nearest to it in launch order."""
    families = [set(_families(ops, kc)) for ops, kc in zip(compiled.fused_ops, compiled.kernel_class, strict=True)]
    anchor = {ci: float(group.eager_index.mean()) for ci, group in links.groupby("compiled_index")}
    linked = set(links.eager_index)
    extra = []
    for ei, (ops, kernel_class) in enumerate(zip(eager.fused_ops, eager.kernel_class, strict=True)):
        if ei in linked:
            continue
        for family in _families(ops, kernel_class):
            covering = [ci for ci, fams in enumerate(families) if family in fams]
            if covering:
                ci = min(covering, key=lambda c: abs(anchor.get(c, float(ei)) - ei))
                extra.append({"eager_index": ei, "compiled_index": ci, "family": family})
                break
    if not extra:
        return links
    return pd.concat([links, pd.DataFrame(extra, columns=links.columns)], ignore_index=True)


def _op_units(kernels: pd.DataFrame) -> list[list[int]]:
    """Consecutive kernels launched by one op call, grouped: [[0], [1, 2], [3]...]."""
    units: list[list[int]] = []
    last_id = None
    for i, op_id in enumerate(kernels.op_id):
        if units and op_id != -1 and op_id == last_id:
            units[-1].append(i)
        else:
            units.append([i])
        last_id = op_id
    return units


def _families(ops: list[str], kernel_class: str) -> list[str]:
    """Op families of a kernel; a library GEMM replayed in a CUDA graph has no launching op, but is a matmul."""
    if not ops and kernel_class == "gemm":
        return ["matmul"]
    return list(dict.fromkeys(op_family(op) for op in ops))
