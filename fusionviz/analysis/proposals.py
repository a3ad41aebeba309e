"""What to try next: the variants (or, where no option does it, the advice) that a session's diagnosis points to,
each with the evidence in plain words and what it expects to change.

Each rule reads data the session already has: a graph break at `.item()` (`ModeRun.graph_breaks`) points to
`capture_scalar_outputs` where the value feeds arithmetic, and to advice where it decides a Python branch; a
host-bound compiled mode (`bound.bounds`) to a CUDA graph (reduce-overhead, and on a GPU eager as one CUDA graph);
recompiles to `mark_dynamic=0`; a graph tree's input copies (`cuda_graphs.coverage`) to static input buffers,
advice only; a fusion boundary at an opaque custom op (`separations`) to what Inductor needs to see into it,
advice only. A variant the session already ran is never proposed. No torch, no plotly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fusionviz.analysis.bound import Bound
from fusionviz.analysis.cuda_graphs import Coverage
from fusionviz.analysis.headline import micros, size_words
from fusionviz.analysis.separations import Separation
from fusionviz.errors import ConfigError
from fusionviz.records.session import GraphBreak, ModeRun, Session
from fusionviz.records.variants import (
    GRAPHED_EAGER,
    check_mode,
    is_compiled,
    parse_variant,
    replays_graphs,
)

Rule = Literal["scalar break", "host-bound", "recompiles", "input copies", "custom op"]
SCALAR_WORDS = (".item()", "capture_scalar_outputs", "scalar output")  # how Dynamo's reason names the break
CUDA_GRAPHS = "reduce-overhead"


@dataclass(frozen=True)
class Proposal:
    """One thing to try: the mode string to re-run with (`variant`; None where no option does it and the
    proposal is advice), the diagnosis that points to it (the mode, the line, the figures), and what it expects
    to change."""

    rule: Rule
    variant: str | None
    diagnosis: str
    expects: str

    @property
    def advice(self) -> bool:
        """Whether this is advice only: no variant to re-run with."""
        return self.variant is None


def proposals(session: Session, bounds: Mapping[str, Bound], coverage: Mapping[str, Coverage],
              separations: Mapping[str, Sequence[Separation]]) -> list[Proposal]:
    """The proposals for `session` (its runs' graph breaks and recompiles, each mode's `bounds`, each CUDA-graph
    mode's `coverage`, each compiled mode's `separations`), variants first, each variant once and only where the
    session has not run it."""
    if session.source == "trace" or session.grid is not None or session.sweep is not None:
        return []
    ran = {check_mode(m) for m in (*session.config.modes, *(r.mode for r in session.runs)) if _known(m)}
    found: list[Proposal] = []
    for run in session.runs:
        if run.ok and is_compiled(run.mode):
            found += _scalar_break(run) + _recompiles(run)
    found += _host_bound(session, bounds)
    variants: dict[str, Proposal] = {}  # each variant once, with its first diagnosis
    advice: dict[str, Proposal] = {}  # each piece of advice once (one break seen by several modes)
    for p in found:
        if p.variant is not None and p.variant not in ran:
            variants.setdefault(p.variant, p)
        elif p.variant is None:
            advice.setdefault(p.diagnosis.partition(" compiled ")[2] or p.diagnosis, p)
    return [*variants.values(), *advice.values(), *_input_copies(coverage), *_custom_ops(separations)]


def _known(mode: str) -> bool:
    try:
        check_mode(mode)
    except ConfigError:
        return False
    return True


def _with(mode: str, option: str) -> str | None:
    """`mode` with `option` added, as a session names it; None where `mode` has that option already."""
    name = option.partition("=")[0]
    variant = parse_variant(mode)
    if any(given == name for given, _ in variant.options):
        return None
    return parse_variant(f"{mode}+{option}").name


def _frame(brk: GraphBreak) -> tuple[str, str]:
    """("graph_break.py:42", "y = x.item()") from a break's "file:line in function: source line", its comment
    left out."""
    place, _, line = brk.user_frame.partition(": ")
    return place.split(" in ")[0].rsplit("/", 1)[-1], line.split("#")[0].strip()


def _scalar_break(run: ModeRun) -> list[Proposal]:
    """capture_scalar_outputs where the value of `.item()` feeds arithmetic; where it decides a Python branch,
    advice: the option alone moves the break to the branch (measured on the zoo's graph_break: 2 graphs → 2)."""
    scalar = [b for b in run.graph_breaks if any(w in b.reason for w in SCALAR_WORDS)]
    variant = _with(run.mode, "capture_scalar_outputs") if scalar else None
    if variant is None:
        return []
    graphs = run.graph_count or len(run.graph_breaks) + 1
    place, line = _frame(scalar[0])
    where = (f" at {place}" if place else "") + (f" ({line})" if line else "")
    diagnosis = f"{run.mode} compiled {graphs} graphs: Dynamo broke at a tensor's .item(){where}."
    if line.startswith(("if ", "elif ", "while ")) or " if " in line:
        return [Proposal(
            "scalar break", None, diagnosis,
            "no option alone does this: the value decides a Python branch, so with capture_scalar_outputs the "
            "break moves to the branch; compute both sides as tensors and pick with torch.where (or "
            f"torch.cond), then {variant} can compile it as one graph.")]
    return [Proposal("scalar break", variant, diagnosis,
                     f"graphs {graphs} → {graphs - len(scalar)}: the value stays on the device, and the break's "
                     "host round trip is gone.")]


def _recompiles(run: ModeRun) -> list[Proposal]:
    if not run.recompiles:
        return []
    variant = _with(run.mode, "mark_dynamic=0")
    if variant is None:
        return []
    n = run.recompiles
    return [Proposal(
        "recompiles", variant,
        f"{run.mode} recompiled {n} time{'s' if n != 1 else ''} after its first compile (a guard failed, most "
        "often on a new input shape).",
        f"recompiles {n} → 0 where the shape that changes is the first input's batch: it is compiled as a "
        "symbol, so one graph serves every size.")]


def _host_bound(session: Session, bounds: Mapping[str, Bound]) -> list[Proposal]:
    host = [b for b in bounds.values()
            if b.kind == "host-bound" and is_compiled(b.mode) and not replays_graphs(b.mode)]
    if not host:
        return []
    first = host[0]
    others = f" ({', '.join(b.mode for b in host[1:])} too)" if host[1:] else ""
    diagnosis = (f"{first.mode} is host-bound{others}: {micros(first.host_us)} of host work per call against "
                 f"{micros(first.gpu_us)} of GPU time, so the GPU waits for the host.")
    found = [Proposal("host-bound", CUDA_GRAPHS, diagnosis,
                      f"the host's {micros(first.host_us, read=True)} per call replaced by replaying CUDA graphs: "
                      f"time per call toward the GPU's {micros(first.gpu_us, read=True)}.")]
    if session.environment.device_kind == "cuda":
        found.append(Proposal("host-bound", GRAPHED_EAGER, diagnosis,
                              "eager's own kernels replayed as one CUDA graph, no compiler: what the launches "
                              "alone cost, beside what fusion saves."))
    return found


def _input_copies(coverage: Mapping[str, Coverage]) -> list[Proposal]:
    found = []
    for mode, c in coverage.items():
        copies = c.copies
        if copies is None or not copies.kernels:
            continue
        moved = f"{size_words(copies.bytes)}, " if copies.bytes is not None else ""
        n = f"{copies.kernels:g}"
        found.append(Proposal(
            "input copies", None,
            f"{mode} copies its inputs into the CUDA graphs' static buffers on every call: {n} cop"
            f"{'y' if copies.kernels == 1 else 'ies'} ({moved}{micros(copies.us)}).",
            "no option does this: keep each input in one static buffer (mark it with "
            "torch._dynamo.mark_static_address and copy new data into it yourself), and the copy per call is "
            f"gone ({micros(copies.us)} of GPU time)."))
    return found


def _custom_ops(separations: Mapping[str, Sequence[Separation]]) -> list[Proposal]:
    seen: dict[str, str] = {}  # the op's handle → the mode it was seen in first
    for mode, found in separations.items():
        for s in found:
            if s.reason == "custom op":
                op = next((h.rpartition(":")[0] for h in (*s.before_kernels, *s.after_kernels)
                           if h.startswith("torch.ops.") and not h.startswith("torch.ops.aten.")), "")
                seen.setdefault(op or s.detail, mode)
    return [Proposal(
        "custom op", None,
        f"{mode}: {op if op.startswith('torch.ops.') else 'a custom op'} is opaque to Inductor: no "
        "fusion crosses it, so the ops before and after it run as kernels of their own.",
        "no option does this: Inductor needs a registered fake (meta) implementation to trace it "
        "(torch.library.register_fake) and a decomposition into ATen ops or a lowering of its own to fuse "
        "through it; with only the fake it stays one boundary.")
        for op, mode in seen.items()]
