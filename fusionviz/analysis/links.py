"""Which eager kernels each compiled kernel absorbed: links by op family, in launch order."""

from __future__ import annotations

import pandas as pd

from fusionviz.records.kernels import op_family

LINK_COLUMNS: dict[str, str] = {
    "eager_index": "row of the eager iteration's kernel table",
    "compiled_index": "row of the compiled iteration's kernel table",
    "family": "the op family they share (matmul, layer_norm, gelu...)",
}


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
