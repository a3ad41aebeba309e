"""What compiling costs in memory: each mode's figures as measured in a fresh process of its own
(`records.session.ModeMemory`), what a train pass saves for its backward and what the compiled backward recomputes
instead, one iteration's memory over time by the op that made each block, and the sentences that say the trade.

What a train pass recomputes comes from AOTAutograd's own graphs (`ModeRun.aot_graphs`): its partitioner copies a
node of the joint graph into the backward under the name it has in the forward, so a backward node named like a
forward node of the same compile is that node computed again (Inductor's min-cut partitioner recomputes cheap
pointwise ops rather than save their outputs). Views are left out: they compute nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import msgspec

from fusionviz.analysis.headline import MECHANISM_CHARS, WORDS, Headline, rate_words, read_size, size_words, word_count
from fusionviz.records.memory_events import BEFORE
from fusionviz.records.session import ModeMemory, ModeRun, SavedForBackward, Session

if TYPE_CHECKING:  # pandas is imported where the timeline's frame is built
    import pandas as pd

    from fusionviz.analysis.summary import Comparison

TIMELINE_COLUMNS = {"mode": "the mode", "t_us": "µs from the iteration's start",
                    "bytes_live": "bytes live that the op made, at that moment (above the baseline: the model's "
                                  "parameters are not counted)",
                    "op": "the op or kernel that made them; HELD for what was live when the iteration began"}
HELD = "held between calls"  # the timeline's band for what was live before the iteration
UNATTRIBUTED = "unattributed"  # a block whose maker the trace does not say
OTHER = "other ops"
TOP_OPS = 7  # ops drawn apart in the timeline, by the most each held at once; the rest are OTHER
SAME_BYTES = 0.05  # peaks within this share of each other (or 1 kB) are "as high"
VIEWS = frozenset({"view", "_unsafe_view", "reshape", "permute", "t", "transpose", "expand", "slice", "select",
                   "unsqueeze", "squeeze", "alias", "as_strided", "clone", "detach"})


class MemoryFigures(msgspec.Struct, frozen=True):
    """One mode's memory (`ModeMemory`'s figures), with what follows from them: `peak` is the most live at once
    in a steady call (what is held between calls plus the call's own peak above it), `beyond_inputs` what is
    held between calls beyond the inputs; `recomputed` the ops its backward recomputes, by op with their count
    (None where the session kept no AOT graphs: eager, an inference pass, an older session)."""

    mode: str
    memory: ModeMemory
    recomputed: tuple[tuple[str, int], ...] | None

    @property
    def peak(self) -> int:
        return self.memory.held_bytes + self.memory.peak_allocated_bytes

    @property
    def beyond_inputs(self) -> int:
        return self.memory.held_bytes - self.memory.inputs_bytes

    @property
    def saved(self) -> SavedForBackward | None:
        return self.memory.saved


def memory_figures(session: Session) -> dict[str, MemoryFigures]:
    """Each run's memory, by mode, for the runs that measured it."""
    return {r.mode: MemoryFigures(r.mode, r.memory, recomputed_ops(r)) for r in session.runs if r.memory is not None}


def recomputed_ops(run: ModeRun) -> tuple[tuple[str, int], ...] | None:
    """The ops the run's backward graphs compute again, each with how many nodes of it, in the backward's order;
    None where the run kept no forward and backward graph."""
    forward = {g.frame: {n.name for n in g.nodes} for g in run.aot_graphs if g.kind == "forward"}
    backward = [g for g in run.aot_graphs if g.kind == "backward"]
    if not forward or not backward:
        return None
    counted: Counter[str] = Counter()
    for graph in backward:
        names = forward.get(graph.frame, set())
        for node in graph.nodes:
            op = node.op.removeprefix("aten.")
            if node.name in names and op not in VIEWS:
                counted[op] += 1
    return tuple(counted.items())


def recomputed_words(ops: tuple[tuple[str, int], ...]) -> str:
    """"19 ops (mul ×9, add ×3, tanh, sigmoid, exp)"; "no op" where there are none."""
    total = sum(n for _, n in ops)
    if not total:
        return "no op"
    listed = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in ops)
    return f"{total} op{'s' if total > 1 else ''} ({listed})"


def memory_words(found: MemoryFigures) -> str:
    """One mode's figures in a sentence, each exact: "default holds 64.0 MB between calls (its inputs), peaks
    64.0 MB above that in a call and keeps 0 B from compiling (CUDA caching allocator)."""
    m = found.memory
    beyond = found.beyond_inputs
    held = (f"holds {size_words(m.held_bytes)} between calls ("
            + ("its inputs" if beyond == 0 else
               f"{size_words(m.inputs_bytes)} of inputs, {'+' if beyond > 0 else '-'}{size_words(abs(beyond))}") + ")")
    said = f"{found.mode} {held}, peaks {size_words(m.peak_allocated_bytes)} above that in a call"
    if m.peak_reserved_bytes is not None:
        said += f", reserves up to {size_words(m.peak_reserved_bytes)}"
    said += f" and kept {size_words(m.pool_bytes)} from compiling and its first calls"
    if m.graph_pool_bytes:
        said += f"; its CUDA-graph pool reserves {size_words(m.graph_pool_bytes)}"
    how = "the CUDA caching allocator" if m.method == "cuda_allocator" else "the profiler's memory events"
    return f"{said} ({how}, in a fresh process)."


def saved_words(found: MemoryFigures, eager: MemoryFigures | None) -> str | None:
    """What the mode's forward saved for its backward, against eager's, and what its backward recomputes; None
    for a mode that saved nothing measured (inference, a graph replayed whole)."""
    saved = found.saved
    if saved is None:
        return None
    said = f"{found.mode} saves {size_words(saved.activation_bytes)} of activations for its backward"
    if eager is not None and eager.saved is not None and found.mode != "eager":
        said += f" against eager's {size_words(eager.saved.activation_bytes)}"
    said += f" ({saved.activations} of {saved.tensors} saved storages are activations)"
    if found.recomputed is not None:
        said += f", and its backward recomputes {recomputed_words(found.recomputed)}"
    return said + "."


def memory_fields(found: MemoryFigures | None) -> dict[str, object] | None:
    """A mode's `memory` as `inspect --json` gives it: {"method", "inputs_bytes", "held_bytes",
    "peak_allocated_bytes", "peak_reserved_bytes", "pool_bytes", "graph_pool_bytes", "peak_bytes", "process",
    "saved": {"bytes", "tensors", "activation_bytes", "activations"} or null, "recomputed": [{"op", "count"}] or
    null, "timeline_events"}; None where the run measured none."""
    if found is None:
        return None
    m = found.memory
    return {"method": m.method, "inputs_bytes": m.inputs_bytes, "held_bytes": m.held_bytes,
            "peak_allocated_bytes": m.peak_allocated_bytes, "peak_reserved_bytes": m.peak_reserved_bytes,
            "pool_bytes": m.pool_bytes, "graph_pool_bytes": m.graph_pool_bytes, "peak_bytes": found.peak,
            "process": m.process,
            "saved": None if m.saved is None else {"bytes": m.saved.bytes, "tensors": m.saved.tensors,
                                                   "activation_bytes": m.saved.activation_bytes,
                                                   "activations": m.saved.activations},
            "recomputed": None if found.recomputed is None else [{"op": op, "count": n} for op, n in found.recomputed],
            "timeline_events": len(m.timeline)}


def _peak_change(found: MemoryFigures, eager: MemoryFigures) -> tuple[str, int]:
    """"lower", "higher" or "as high", and by how much, of a mode's call peak against eager's (above what each
    holds between calls)."""
    change = found.memory.peak_allocated_bytes - eager.memory.peak_allocated_bytes
    if abs(change) <= max(1024, SAME_BYTES * max(eager.memory.peak_allocated_bytes, 1)):
        return "as high", 0
    return ("lower" if change < 0 else "higher"), abs(change)


def trade_sentence(figures: dict[str, MemoryFigures], main: str, vs: Comparison | None) -> str | None:
    """The verdict's sentence on the trade: "default is 11x faster and peaks 192 MB lower per call than eager
    (64.0 MB against 256 MB above what each holds between calls); reduce-overhead holds 134 MB in its graph pool."
    None where eager's or `main`'s memory was not measured."""
    eager, found = figures.get("eager"), figures.get(main)
    if eager is None or found is None:
        return None
    direction, by = _peak_change(found, eager)
    speed = ("shows no clear difference in time" if vs is None or vs.verdict == "no clear difference"
             else f"is {rate_words(vs.speedup.median)}")
    peaks = "as high as eager's" if direction == "as high" else f"{read_size(by)} {direction} than eager's"
    said = (f"In memory, {main} {speed} and its call peaks {peaks} ({size_words(found.memory.peak_allocated_bytes)} "
            f"against {size_words(eager.memory.peak_allocated_bytes)} above what each holds between calls)")
    pools = [f"{f.mode} holds {read_size(f.memory.graph_pool_bytes)} in its graph pool"
             for f in figures.values() if f.memory.graph_pool_bytes]
    return said + (f"; {', and '.join(pools)}" if pools else "") + "."


def memory_headline(figures: dict[str, MemoryFigures], focus: str | None) -> Headline:
    """The memory view's headline: how the focus mode's call peaks against eager's, rounded for reading; its
    mechanism what it holds between calls beyond its inputs (a graph pool's outputs and static buffers), and its
    details every mode's figures (`memory_words`), the saved activations and the trade (`saved_words`)."""
    details = tuple(memory_words(f) for f in figures.values()) + tuple(
        s for f in figures.values() if (s := saved_words(f, figures.get("eager"))) is not None)
    eager, found = figures.get("eager"), figures.get(focus) if focus else None
    if not figures:
        return Headline("No mode's memory was measured in this session", "", details)
    if eager is None or found is None:
        some = found or next(iter(figures.values()))
        return Headline(f"{some.mode} peaks at {read_size(some.peak)} in a call", "", details)
    direction, by = _peak_change(found, eager)
    text = (f"{found.mode} peaks as high as eager in a call" if direction == "as high" else
            f"{found.mode} peaks {read_size(by)} {direction} than eager per call")
    if word_count(text) > WORDS:
        text = f"{found.mode}: call peak {read_size(by)} {direction} than eager's"
    extra = found.beyond_inputs - eager.beyond_inputs
    mechanism = (f"It holds {read_size(extra)} more between calls: outputs and static buffers."
                 if extra > max(1024, SAME_BYTES * max(eager.memory.held_bytes, 1)) else
                 f"Above what it holds: {read_size(found.memory.peak_allocated_bytes)}, eager "
                 f"{read_size(eager.memory.peak_allocated_bytes)}.")
    return Headline(text, mechanism if len(mechanism) <= MECHANISM_CHARS else "", details)


def memory_timeline(session: Session, top: int = TOP_OPS) -> pd.DataFrame:
    """One iteration's memory per mode, in the long form the chart stacks (TIMELINE_COLUMNS): at each allocation
    or free, every op's live bytes, what was live before the iteration as HELD, the `top` ops that held most at
    once by name and the rest as OTHER. Empty where no mode recorded a timeline."""
    import pandas as pd

    rows: list[tuple[str, float, int, str]] = []
    for run in session.runs:
        memory = run.memory
        if memory is None or not memory.timeline:
            continue
        most: Counter[str] = Counter()
        live: Counter[str] = Counter()
        for event in memory.timeline:
            if event.op != BEFORE:
                live[_op(event.op)] += event.bytes
                most[_op(event.op)] = max(most[_op(event.op)], live[_op(event.op)])
        named = [op for op, _ in most.most_common(top)]
        bands = [HELD, *named] + ([OTHER] if len(most) > len(named) else [])
        level = dict.fromkeys(bands, 0)
        level[HELD] = memory.timeline_start_bytes
        rows += [(run.mode, 0.0, level[b], b) for b in bands]
        for event in memory.timeline:
            band = HELD if event.op == BEFORE else _op(event.op) if _op(event.op) in level else OTHER
            level[band] += event.bytes
            rows += [(run.mode, float(event.t_us), level[b], b) for b in bands]
    return pd.DataFrame(rows, columns=list(TIMELINE_COLUMNS))


def _op(name: str) -> str:
    return name or UNATTRIBUTED
