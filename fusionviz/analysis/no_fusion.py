"""Inductor's own reasons for the fusions it refused, in plain words, and the boundaries they explain (no torch).

While it schedules a graph, Inductor's scheduler logs each fusion it refuses with a reason; the worker keeps them
per compiled graph (`records.session.NoFusion`, in `GraphProvenance.no_fusion`). Each side of a refusal is mapped
to the kernels that compute it: the post-grad nodes its operations came from, less those the other side has too
(a pointwise op inlined into both), against each kernel's own post-grad nodes (Inductor's provenance). A refusal
whose two sides ended in different kernels explains the boundary between them (`separations`); one whose sides
fused later after all explains nothing, and is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fusionviz.analysis.provenance import KernelProvenance
from fusionviz.analysis.separations import Separation
from fusionviz.records.session import ModeRun, NoFusion

MAX_REASONS = 3  # Inductor's reasons shown for one boundary

# Inductor's reasons (their text before values are filled in, as `WhyNoFuse` is called) in plain words; `{loops}`
# becomes the two sides' loop sizes, `{text}` the reason as logged. Those not listed are shown as logged.
PLAIN: dict[str, str] = {
    "no shared data": "the two loops share no data{loops}: fusing them would save no memory traffic",
    "no shared data due to indexing mismatch": "the two loops touch the same tensor at different positions{loops}: "
                                               "fusing them would save no memory traffic",
    "intermediate nodes between node1 & node2": "the second needs a result computed between them, so it must wait",
    "will create cycle": "fusing them would make a kernel wait for its own output (through another kernel)",
    "memory deps did not match": "the second reads the first's result at other positions than the first writes "
                                 "them{loops}, so it must wait for all of it",
    "node1 is extern but not a triton kernel": "the first is a library call: nothing fuses into it",
    "node2 is extern or nop": "the second is a library call or does nothing: nothing fuses into it",
    "node1 is nop": "the first does no work of its own",
    "device mismatch (%s vs %s)": "they run on different devices ({text})",
    "exceeds max fusion": "the fused kernel would hold more ops than Inductor allows (max_fusion_size)",
    "Fusion will increase peak memory": "fusing them would raise the peak memory",
    "fusion_prevent_too_many_reads_and_writes": "the fused kernel would read and write too many tensors "
                                                "(max_fusion_unique_io_buffers)",
    "score_fusion_memory_threshold": "they share too little data for fusing side by side to pay{loops}",
    "Nodes are too far away. Fusing them may increase peak memory.": "they are too far apart in the program: "
                                                                     "fusing them may raise the peak memory",
    "numel/rnumel mismatch (reduce) (%s, %s), (%s, %s)": "the two loops have different sizes{loops}",
    "numel/rnumel mismatch (non-reduce) (%s, %s), (%s, %s)": "the two loops have different sizes{loops}",
    "nodes numel incompatibility": "the two loops have different sizes{loops}",
    "nodes numel/rnumel incompatibility": "the two loops have different sizes{loops}",
    "invalid tiling for reduction": "the loops would need a tiling the reduction cannot take{loops}",
    "tiling mismatch (%s, %s, %s)": "the loops would need different tilings ({text})",
    "template epilogue not satisfied": "the GEMM template's epilogue cannot take the second",
    "epilogue reads from buffers other than the mutated output": "the epilogue reads more than the template's output",
    "node1 and node2 uses different buf layouts": "the two write their results in different memory layouts",
    "node1 must go before node2": "the second must run before the first",
    "prologue fusion turned off": "fusing into a template's prologue is switched off",
    "Split scan cannot fuse with reductions": "a split scan cannot fuse with a reduction",
    "register spilling of the fused kernel": "the fused kernel would run out of registers",
    "grouped node must not be fused with other nodes": "one side is a group Inductor keeps whole",
    "fusion for buffer explicit disabled": "fusion is switched off for this buffer",
}


@dataclass(frozen=True)
class Refusal:
    """One of Inductor's refused fusions, with the kernels each side ended in (handles, `kernel:n`)."""

    graph: int  # the compiled graph, an index into ModeRun.provenance
    record: NoFusion
    kernels1: tuple[str, ...]
    kernels2: tuple[str, ...]
    words: str


def plain_words(record: NoFusion) -> str:
    """A refusal as one line for the user: "Inductor: the two loops have different sizes (512 vs 512×256)"."""
    template = PLAIN.get(record.reason)
    if template is None:
        return f"Inductor: {record.text or record.reason}"
    a, b = _loops(record.loops1), _loops(record.loops2)
    loops = f" ({a} vs {b})" if a and b and a != b else ""
    return "Inductor: " + template.format(loops=loops, text=record.text)


def _loops(loops: list[str]) -> str:
    """A side's loop sizes (`NoFusion.loops1`) in words: "8×32", a reduction's "8×1 ÷ 32" as "8×1 reducing 32"."""
    return " + ".join(loop.replace(" ÷ ", " reducing ") for loop in loops)


def refusals(run: ModeRun, kernels: list[KernelProvenance]) -> list[Refusal]:
    """The run's refused fusions whose two sides ended in different kernels (`kernels`: its kernels' provenance),
    in the order Inductor logged them."""
    by_graph: dict[int, list[KernelProvenance]] = {}
    for kernel in kernels:
        by_graph.setdefault(kernel.graph, []).append(kernel)
    found = []
    for index, graph in enumerate(run.provenance):
        mine = by_graph.get(index, [])
        for record in graph.no_fusion:
            one, two = set(record.post_grad1), set(record.post_grad2)
            k1, k2 = _computing(one - two or one, mine), _computing(two - one or two, mine)
            if k1 and k2 and not set(k1) & set(k2):
                found.append(Refusal(index, record, k1, k2, plain_words(record)))
    return found


def _computing(nodes: set[str], kernels: list[KernelProvenance]) -> tuple[str, ...]:
    return tuple(k.handle for k in kernels if nodes & set(k.post_grad))


def explained(found: list[Separation], refused: list[Refusal]) -> list[Separation]:
    """Each boundary with the words of the refusals that lie across it (one side's kernels among those before
    it, the other's among those after), each once, at most MAX_REASONS."""
    out = []
    for sep in found:
        before, after = set(sep.before_kernels), set(sep.after_kernels)
        words = [r.words for r in refused
                 if (before & set(r.kernels1) and after & set(r.kernels2))
                 or (before & set(r.kernels2) and after & set(r.kernels1))]
        out.append(replace(sep, inductor=tuple(dict.fromkeys(words))[:MAX_REASONS]) if words else sep)
    return out
