"""Why neighbouring source ops did not fuse, from what the compiler's records show (no torch).

Walking the pre-grad nodes of the forward in Dynamo's order, two neighbours that some kernel computes but no
kernel computes both were kept apart. What separated them is read off the records: a graph break (they are in
different Dynamo graphs), a library call Inductor makes as is (`extern_kernels.mm`, a convolution), a GEMM
template, a fallback op or an opaque custom op (`torch.ops.<ns>.<op>`), a reduction whose result more than one
kernel reads, or an index computed from data (`argmax` feeding `index`). Where Inductor's scheduler said why it
refused a fusion across the boundary, its words are added beside (`no_fusion.explained`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fusionviz.analysis.provenance import KernelProvenance
from fusionviz.records.session import GraphBreak, GraphNode

Reason = Literal["graph break", "library call", "template", "fallback op", "custom op", "shared reduction",
                 "data-dependent index", "scheduler"]

_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "var_mean", "var", "argmax", "argmin", "prod",
                         "any", "all"})
_INDEX_PRODUCERS = frozenset({"argmax", "argmin", "topk", "sort", "nonzero"})
_NODE_INDEX = re.compile(r"_\d+$")


# Kernels no fusion crosses, told by their handle's name, in the order they are looked for, with what they say.
_BOUNDARIES: tuple[tuple[Reason, Callable[[str], bool], str], ...] = (
    ("custom op", lambda n: n.startswith("torch.ops.") and not n.startswith("torch.ops.aten."),
     "{} is an opaque custom op: the compiler cannot see inside it or fuse across it"),
    ("fallback op", lambda n: n.startswith("torch.ops.aten."),
     "{} runs as ATen's own kernel (Inductor has no lowering for it): a boundary no fusion crosses"),
    ("template", lambda n: n.startswith("triton_tem_") or "template" in n,
     "{} is a GEMM template: only an epilogue of pointwise ops fuses into it"),
    ("library call", lambda n: n.startswith("extern_kernels."),
     "{} is a library call Inductor makes as is: nothing fuses into it, so what comes before and after it runs "
     "as kernels of their own"),
)


@dataclass(frozen=True)
class Separation:
    """Two neighbouring source ops that ended in different kernels, and what separated them."""

    before: GraphNode
    after: GraphNode
    before_kernels: tuple[str, ...]  # the handles that compute `before`
    after_kernels: tuple[str, ...]
    reason: Reason
    detail: str  # one sentence for the user
    inductor: tuple[str, ...] = ()  # Inductor's own reasons, where its scheduler logged one (`no_fusion`)


def separations(nodes: list[GraphNode], kernels: list[KernelProvenance], breaks: list[GraphBreak]
                ) -> list[Separation]:
    """Each place where neighbouring pre-grad nodes (in graph order, views and nodes no kernel computes left
    out) ended in different forward kernels, once per pair of kernels, with its reason."""
    forward = {k.handle: k for k in kernels if not k.backward and k.dynamo_graph is not None}
    computing: dict[tuple[int, str], list[str]] = {}
    reading: dict[tuple[int, str], set[str]] = {}
    for kernel in forward.values():
        for name in kernel.computes:
            computing.setdefault((kernel.dynamo_graph, name), []).append(kernel.handle)  # type: ignore[arg-type]
        for name in kernel.pre_grad:
            reading.setdefault((kernel.dynamo_graph, name), set()).add(kernel.handle)  # type: ignore[arg-type]
    computed = [n for n in nodes if (n.graph, n.name) in computing]
    found: list[Separation] = []
    seen: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for before, after in itertools.pairwise(computed):
        ka, kb = computing[(before.graph, before.name)], computing[(after.graph, after.name)]
        pair = (tuple(ka), tuple(kb))
        if set(ka) & set(kb) or pair in seen:
            continue
        seen.add(pair)
        reason, detail = _reason(before, after, [forward[h] for h in ka], [forward[h] for h in kb], breaks,
                                 reading.get((before.graph, before.name), set()))
        found.append(Separation(before, after, pair[0], pair[1], reason, detail))
    return found


def _reason(before: GraphNode, after: GraphNode, ka: list[KernelProvenance], kb: list[KernelProvenance],
            breaks: list[GraphBreak], readers: set[str]) -> tuple[Reason, str]:
    if before.graph != after.graph:
        why = breaks[before.graph].reason if before.graph < len(breaks) else "Dynamo stopped the graph"
        return "graph break", f"a graph break between them ({why}): each side is compiled on its own"
    names = [k.handle.rpartition(":")[0] for k in ka + kb]
    for reason, matches, words in _BOUNDARIES:
        hit = next((n for n in names if matches(n)), None)
        if hit is not None:
            return reason, words.format(f"`{hit}`")
    posts = [_op(n) for k in ka for n in k.post_grad]
    if any(op in _INDEX_PRODUCERS for op in posts) and any(_op(n) == "index" for k in kb for n in k.post_grad):
        return "data-dependent index", ("the next op's addresses come from data computed before it (an index from "
                                        f"`{before.op}`): it must wait for that result in memory")
    if any(op in _REDUCTIONS for op in posts) and len(readers) > 1:
        return "shared reduction", (f"`{before.name}` is read by {len(readers)} kernels: a reduction's result that "
                                    "feeds more than one consumer goes through memory")
    return "scheduler", "Inductor's scheduler kept them in separate kernels (no shared loop it could fuse them into)"


def _op(post_grad_node: str) -> str:
    """A post-grad node's op, from the name FX gives it (`amax_1` → `amax`)."""
    return _NODE_INDEX.sub("", post_grad_node)
