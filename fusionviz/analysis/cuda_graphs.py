"""What a mode's CUDA graphs really cover: which compiled graphs were captured and which were not (with
Inductor's own reason), which were recorded again for new shapes, and what each call pays to copy its inputs
into the graphs' static buffers, with what would avoid it.

A graph tree (`reduce-overhead`, `max-autotune`) replays each compiled graph from a CUDA graph whose inputs live at
fixed addresses: parameters and buffers are static already, but an input that arrives at a new address each call
is copied into the graph's own buffer first, one `aten::_foreach_copy_` a call (its kernel
`multi_tensor_apply_kernel` on the GPU). The capture keeps Inductor's skip reasons (its `cudagraphs` log), the
graphs the tree recorded and the model's inputs (`records.session.CudaGraphs`); the copies are read off the
profiled trace, so sessions recorded before those records still count them.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import msgspec

from fusionviz.analysis.headline import size_words
from fusionviz.analysis.op_costs import DTYPE_ITEMSIZE
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.op_args import OpArgs, run_op_args
from fusionviz.records.session import ModeRun, Session
from fusionviz.records.variants import replays_graphs

INPUT_COPY_OPS = frozenset({"aten::_foreach_copy_"})  # what a graph tree copies its non-static inputs with
_CALL_ARGS = re.compile(r"def call\(self, args\):\s*\n\s*(.*?)\s*=\s*args\b")


class InputCopies(msgspec.Struct, frozen=True):
    """The copies of a call's inputs into the graphs' static buffers, per profiled iteration: copy kernels
    (`kernels`), their GPU time (`us`) and the bytes they copy (`bytes`: None where an element's size is not
    known). `bytes_from` says where the element sizes came from: "inputs" (the model's inputs, as the capture
    kept them) or "dtype" (a zoo model's inputs are all made in the run's dtype)."""

    kernels: float
    us: float
    bytes: int | None
    bytes_from: str = ""


class GraphCoverage(msgspec.Struct, frozen=True):
    """One compiled graph under a graph tree: captured or not (`reason`: Inductor's, "" where captured), how many
    CUDA graphs were recorded for it (more than one: recorded again, for the `shapes` listed), forward or
    backward."""

    graph: int  # an index into ModeRun.provenance
    backward: bool
    captured: bool
    reason: str
    recordings: int
    shapes: tuple[str, ...]


class Coverage(msgspec.Struct, frozen=True):
    """A CUDA-graph mode's coverage: each compiled graph's (`graphs`; empty where the session kept no provenance),
    the skip reasons not tied to a graph, the recordings of the tree, the input copies per call, and what would
    avoid them (`avoid`, "" where nothing needs avoiding)."""

    mode: str
    graphs: tuple[GraphCoverage, ...]
    skips: tuple[str, ...]
    recorded: int | None  # None: the session did not record the tree (recorded before it was kept)
    rerecorded: tuple[str, ...]  # "function 0: 4096x4096, 2048x4096"
    copies: InputCopies | None
    avoid: str

    @property
    def all_captured(self) -> bool | None:
        """Every compiled graph captured; None where the session cannot tell."""
        if self.recorded is None:
            return None
        return not self.skips and all(g.captured for g in self.graphs)


def uses_graphs(mode: str) -> bool:
    """A graph tree's mode (a variant of one, or one with triton.cudagraphs) or eager as one CUDA graph."""
    return replays_graphs(mode)


def input_copies(run: ModeRun, session: Session | None = None) -> InputCopies | None:
    """The input copies of one profiled iteration of a CUDA-graph mode (None for any other mode, or an unprofiled
    run): the kernels launched by the graph tree's copy op, their time and bytes."""
    if not uses_graphs(run.mode) or run.summary is None:
        return None
    iterations = max(run.summary.iterations, 1)
    rows = [r for r in run.kernels if r.launch_op in INPUT_COPY_OPS and r.kernel_class != MEMORY_CLASS]
    if not rows:
        return InputCopies(0.0, 0.0, 0, "")
    args = run_op_args(run)
    itemsizes, source = _itemsizes(run, session)
    total: int | None = 0
    for op_id in dict.fromkeys((r.iteration, r.op_id) for r in rows):
        copied = copied_bytes(args.get(op_id[1]), itemsizes)
        total = None if copied is None or total is None else total + copied
    return InputCopies(kernels=len(rows) / iterations, us=sum(float(r.dur_us) for r in rows) / iterations,
                       bytes=None if total is None else round(total / iterations),
                       bytes_from=source if total is not None else "")


def copy_itemsizes(run: ModeRun, session: Session | None) -> dict[tuple[int, ...], int] | int | None:
    """The element size of the tensors a graph tree copies, by shape (the model's inputs the capture kept), or one
    size for all (a zoo model's inputs, all made in the run's dtype), or None where unknown."""
    return _itemsizes(run, session)[0]


def _itemsizes(run: ModeRun, session: Session | None) -> tuple[dict[tuple[int, ...], int] | int | None, str]:
    if run.cuda_graphs is not None and run.cuda_graphs.inputs:
        return {tuple(t.shape): t.itemsize for t in run.cuda_graphs.inputs}, "inputs"
    if session is not None and session.source != "trace" and ":" not in session.config.model:
        size = DTYPE_ITEMSIZE.get(session.config.dtype)
        return (size, "dtype") if size else (None, "")
    return None, ""


def copied_bytes(op: OpArgs | None, itemsizes: dict[tuple[int, ...], int] | int | None) -> int | None:
    """The bytes one `_foreach_copy_(dst, src)` call copies: its destinations' elements (its first argument, a
    tensor list the profiler records as shapes without dtypes) times their element size."""
    if op is None or not op.dims or not isinstance(op.dims[0], list) or itemsizes is None:
        return None
    total = 0
    for shape in op.dims[0]:
        if not isinstance(shape, list) or not all(isinstance(d, int) for d in shape):
            return None
        size = itemsizes if isinstance(itemsizes, int) else itemsizes.get(tuple(shape))
        if size is None:
            return None
        total += math.prod(shape) * size
    return total


def coverage(run: ModeRun, session: Session | None = None) -> Coverage | None:
    """The CUDA-graph coverage of a mode that uses graphs; None for any other mode. A graph tree numbers its
    functions in the order they first ran, which is the order the graphs it wrapped were compiled in: the k-th
    compiled graph Inductor did not skip is function k."""
    if not uses_graphs(run.mode):
        return None
    copies = input_copies(run, session)
    record = run.cuda_graphs
    if run.mode == GRAPHED_EAGER:
        return Coverage(run.mode, (), (), 1 if record is not None else None, (), copies,
                        "Nothing to avoid: eager's whole step is one CUDA graph and its inputs stay where it "
                        "captured them.")
    if record is None:
        return Coverage(run.mode, (), (), None, (), copies, avoid_words(copies, (), ()))
    per_function = Counter(g.function for g in record.recorded)
    shapes: dict[int, list[str]] = {}
    for g in record.recorded:
        shapes.setdefault(g.function, []).append("/".join(g.output_shapes) or "?")
    skipped = dict(zip(record.skipped_graphs, record.skips, strict=False))
    graphs, function = [], 0
    for index, provenance in enumerate(run.provenance):
        code = run.output_code[provenance.output_code] if 0 <= provenance.output_code < len(run.output_code) else ""
        args = _CALL_ARGS.search(code)
        backward = bool(args and "tangents_" in args.group(1))
        if index in skipped:
            graphs.append(GraphCoverage(index, backward, False, skipped[index], 0, ()))
            continue
        count = per_function.get(function, 0)
        graphs.append(GraphCoverage(index, backward, count > 0, "" if count else "never recorded", count,
                                    tuple(shapes.get(function, ()))))
        function += 1
    loose = tuple(reason for graph, reason in skipped.items() if not 0 <= graph < len(run.provenance))
    rerecorded = tuple(f"function {f}: {', '.join(s)}" for f, s in sorted(shapes.items()) if len(s) > 1)
    reasons = tuple(g.reason for g in graphs if g.reason) + loose
    return Coverage(run.mode, tuple(graphs), loose, len(record.recorded), rerecorded, copies,
                    avoid_words(copies, reasons, rerecorded))


def avoid_words(copies: InputCopies | None, reasons: tuple[str, ...], rerecorded: tuple[str, ...]) -> str:
    """What would avoid the costs a graph tree shows: the input copies, a skip for a mutated input, re-recordings
    for new shapes; "" where there are none."""
    said = []
    if copies is not None and copies.kernels:
        said.append("The input copies go where each input stays at one address and is marked static "
                    "(torch._dynamo.mark_static_address, new data copied into that one tensor by the caller); "
                    "parameters and buffers are static already.")
    if any("mutat" in r for r in reasons):
        said.append("A graph skipped for a mutated input is captured with "
                    "torch._inductor.config.triton.cudagraph_support_input_mutation = True.")
    if rerecorded:
        said.append("Each new input shape records a graph again: pad inputs to a few fixed shapes, or set "
                    "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs = True.")
    return " ".join(said)


def coverage_words(found: Coverage) -> str:
    """The coverage in one sentence: "reduce-overhead: all 1 compiled graph captured; 1 input copy a call (67.1 MB,
    9.02 µs)"."""
    if found.mode == GRAPHED_EAGER:
        head = f"{found.mode}: the whole step is one CUDA graph"
    elif found.all_captured is None:
        head = f"{found.mode}: which graphs were captured was not recorded in this session"
    elif found.all_captured:
        head = f"{found.mode}: all captured ({_count(len(found.graphs) or found.recorded or 0, 'compiled graph')})"
    else:
        missed = [g for g in found.graphs if not g.captured]
        head = f"{found.mode}: {len(missed) + len(found.skips)} not captured (" + "; ".join(
            [f"graph {g.graph}: {g.reason}" for g in missed] + list(found.skips)) + ")"
    if found.rerecorded:
        head += f"; recorded again for new shapes: {'; '.join(found.rerecorded)}"
    copies = found.copies
    if copies is not None and copies.kernels:
        moved = size_words(copies.bytes) if copies.bytes is not None else "bytes unknown"
        head += (f"; {copies.kernels:g} input cop{'y' if copies.kernels == 1 else 'ies'} a call ({moved}, "
                 f"{copies.us:.3g} µs)")
    elif copies is not None:
        head += "; no input copies"
    return head + "."


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def coverage_fields(found: Coverage | None) -> dict[str, object] | None:
    """A mode's `cuda_graphs` as `inspect --json` gives it: {"all_captured", "recorded", "graphs": [{"graph",
    "backward", "captured", "reason", "recordings", "shapes"}], "skips", "rerecorded", "input_copies": {"kernels",
    "us", "bytes", "bytes_from"} or null, "avoid", "words"}; None for a mode without CUDA graphs."""
    if found is None:
        return None
    copies = found.copies
    return {"all_captured": found.all_captured, "recorded": found.recorded,
            "graphs": [{"graph": g.graph, "backward": g.backward, "captured": g.captured, "reason": g.reason,
                        "recordings": g.recordings, "shapes": list(g.shapes)} for g in found.graphs],
            "skips": list(found.skips), "rerecorded": list(found.rerecorded),
            "input_copies": None if copies is None else {"kernels": copies.kernels, "us": copies.us,
                                                         "bytes": copies.bytes, "bytes_from": copies.bytes_from},
            "avoid": found.avoid, "words": coverage_words(found)}
