"""Bytes and FLOPs per kernel, how fast each kernel moved and computed them, and how far that is from the
device's ceilings; per run, the bytes of one iteration and its GPU time.

Where a figure comes from (`Cost.source`):
- an Inductor kernel: Inductor's own estimate where the trace carries it (`kernel_num_gb`, `kernel_flop` on
  the launching event, with `benchmark_kernel`), else the buffers of its call in the generated wrapper
  (`inductor_buffers`); "inductor" either way;
- a library or ATen kernel: its launching op's input shapes and dtypes, a rule per kind of op (`op_costs`),
  "shapes". Kernels that one op call launched together (a split-K GEMM's two kernels) share its figures in
  proportion to their durations. A kernel replayed from a CUDA graph has no launching op in the trace: it
  takes the figures of the same kernel at the same place in the iteration of another run of the session that
  launched it from Python (eager for eager as a CUDA graph).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import msgspec

from fusionviz.analysis.cuda_graphs import INPUT_COPY_OPS, copied_bytes, copy_itemsizes
from fusionviz.analysis.inductor_buffers import run_kernel_calls
from fusionviz.analysis.op_costs import Cost, op_cost
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.derived import derived
from fusionviz.records.kernels import MEMORY_CLASS, KernelRow
from fusionviz.records.op_args import OpArgs, run_op_args
from fusionviz.records.session import ModeRun, Session

INDUCTOR_PREFIXES = ("triton_", "cpp_fused")


class Achieved(msgspec.Struct, frozen=True):
    """How fast one kernel moved bytes (GB/s) and did FLOPs (TFLOP/s, None where its FLOPs are not counted),
    and its percentage of the ceiling that bounds it (`roof` names it): the copy bandwidth of the level its
    working set fits in (`memory_roof`) for a kernel below the ridge point or without FLOPs, the matmul rate of
    its dtype above it."""

    gbps: float
    tflops: float | None
    pct_of_ceiling: float | None
    bound: str | None  # "memory" or "compute" (by its arithmetic intensity against the ridge point)
    roof: str = ""  # the ceiling it is held to: "DRAM copy", "L2 copy", "float32 matmul"; "" without ceilings


class MemoryRoof(msgspec.Struct, frozen=True):
    """The bandwidth a kernel can meet (GB/s, bytes read plus written) at one level of the memory: "DRAM" (a copy
    that left every cache; `holds_bytes` None) or a cache its working set fits in (`holds_bytes` its capacity)."""

    level: str
    gbps: float
    holds_bytes: int | None


def memory_roofs(ceilings: Ceilings) -> list[MemoryRoof]:
    """The measured levels, smallest cache first and DRAM last. A level's rate is at least every larger level's:
    data that fits in a cache fits in the levels beyond it too, so a cache measured slower than them (a noisy
    calibration) never lowers a kernel's roof below theirs."""
    roofs = [MemoryRoof("DRAM", ceilings.copy_gbps, None)]
    for cache in sorted(ceilings.caches, key=lambda c: -c.size_bytes):
        roofs.insert(0, MemoryRoof(cache.level, max(cache.copy_gbps, roofs[0].gbps), cache.size_bytes))
    return roofs


def memory_roof(ceilings: Ceilings, working_set: int) -> MemoryRoof:
    """The level a kernel's working set (its bytes read plus written) fits in, smallest first; DRAM where it fits
    in no measured cache. A kernel's bytes counted once, so a working set is what it touches, not what it reuses."""
    return next(r for r in memory_roofs(ceilings) if r.holds_bytes is None or working_set <= r.holds_bytes)


def intensity(cost: Cost | None) -> float | None:
    """Arithmetic intensity, FLOP per byte moved; None where the kernel's FLOPs or bytes are not counted."""
    if cost is None or not cost.flop or cost.total <= 0:
        return None
    return cost.flop / cost.total


def attainable_tflops(ceilings: Ceilings, dtype: str, flop_per_byte: float, working_set: int) -> float | None:
    """The roofline's bound at an intensity: min(the dtype's matmul rate, intensity × the bandwidth of the level
    the working set fits in); None where the dtype's matmul rate was not measured."""
    peak = ceilings.matmul_tflops.get(dtype)
    if not peak:
        return None
    return min(peak, flop_per_byte * memory_roof(ceilings, working_set).gbps / 1e3)


def run_costs(run: ModeRun, like: Sequence[ModeRun] = (),
              copy_sizes: dict[tuple[int, ...], int] | int | None = None) -> list[Cost | None]:
    """Each kernel row's cost, aligned with `run.kernels` (None where no figure is known); `like` are the
    session's other runs, whose kernels lend their figures to this run's CUDA-graph replays; `copy_sizes` the
    element sizes of the inputs a graph tree copies into its static buffers (`cuda_graphs.copy_itemsizes`): its
    copy op records their shapes without dtypes."""
    args = run_op_args(run)
    calls = run_kernel_calls(run)
    costs: list[Cost | None] = [None] * len(run.kernels)
    seen: Counter[tuple[int, str]] = Counter()
    by_op: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, row in enumerate(run.kernels):
        if row.kernel_class == MEMORY_CLASS:
            continue
        name, op = row.name, args.get(row.op_id)
        occurrence = seen[(row.iteration, name)]
        seen[(row.iteration, name)] += 1
        if name.startswith(INDUCTOR_PREFIXES):
            costs[i] = _inductor_cost(calls.get(name, []), occurrence, op)
        elif op is not None:
            by_op[(row.iteration, row.op_id)].append(i)
    for (_, _), rows in by_op.items():
        op = args[run.kernels[rows[0]].op_id]
        whole = op_cost(op.name, op.dims, op.types, op.concrete)
        if whole is None and op.name in INPUT_COPY_OPS and (copied := copied_bytes(op, copy_sizes)) is not None:
            whole = Cost(copied, copied, 2 * copied, None, "shapes")  # each input read once and written once
        if whole is not None:
            for i, part in zip(rows, _shares(whole, [run.kernels[i].dur_us for i in rows]), strict=True):
                costs[i] = part
    _lend(run, costs, like)
    return costs


@derived
def own_costs(run: ModeRun) -> list[Cost | None]:
    """`run_costs` of the run alone (no figures lent by other runs, no copy sizes), made once per run: every
    other run of its session borrows from it, and the what-if reads it."""
    return run_costs(run)


def _inductor_cost(calls: list[Cost | None], occurrence: int, op: OpArgs | None) -> Cost | None:
    """The kernel's cost at this launch: its wrapper call (every call alike, or the call at the same place),
    with Inductor's `kernel_num_gb` and `kernel_flop` where the trace carries them."""
    known = [c for c in calls if c is not None]
    if known and len(set(known)) == 1:
        buffers: Cost | None = known[0]
    else:
        buffers = calls[occurrence] if occurrence < len(calls) else None
    if op is not None and op.num_bytes is not None:
        if buffers is None or buffers.total != op.num_bytes:
            return Cost(None, None, op.num_bytes, op.flop, "inductor")
        return Cost(buffers.read, buffers.written, buffers.total, op.flop or buffers.flop, "inductor")
    if buffers is not None and op is not None and op.flop is not None:
        return Cost(buffers.read, buffers.written, buffers.total, op.flop, "inductor")
    return buffers


def _shares(whole: Cost, durations: list[float]) -> list[Cost]:
    """One op's cost split over the kernels it launched, by their durations (whole numbers, summing back)."""
    if len(durations) == 1:
        return [whole]
    total = sum(durations)
    weights = [d / total for d in durations] if total > 0 else [1 / len(durations)] * len(durations)
    parts = []
    for values in zip(*(_split(v, weights) for v in (whole.read, whole.written, whole.flop)), strict=True):
        read, written, flop = values
        parts.append(Cost(read, written, (read or 0) + (written or 0), flop, whole.source))
    return parts


def _split(value: int | None, weights: list[float]) -> list[int | None]:
    if value is None:
        return [None] * len(weights)
    shares = [int(value * w) for w in weights]
    shares[-1] += value - sum(shares)
    return list(shares)


def _lend(run: ModeRun, costs: list[Cost | None], like: Sequence[ModeRun]) -> None:
    """Fill the figures of kernels that no op launched (CUDA-graph replays: their launch is the graph's, under
    the compiled region) from the same kernel name at the same occurrence in an iteration of another run, where
    that run knows it."""
    missing = {i for i, row in enumerate(run.kernels) if costs[i] is None and "::" not in row.launch_op
               and row.kernel_class != MEMORY_CLASS and not row.name.startswith(INDUCTOR_PREFIXES)}
    if not missing:
        return
    lent: dict[tuple[str, int], Cost] = {}
    for other in like:
        if other is run or other.summary is None or not other.kernels:
            continue
        other_costs = own_costs(other)
        seen: Counter[str] = Counter()
        iteration = other.summary.representative_iteration
        for row, cost in zip(other.kernels, other_costs, strict=True):
            if row.iteration == iteration:
                key = (row.name, seen[row.name])
                seen[row.name] += 1
                if cost is not None:
                    lent.setdefault(key, cost)
    seen_here: Counter[tuple[int, str]] = Counter()
    for i, row in enumerate(run.kernels):
        key_here = (row.iteration, row.name)
        occurrence = seen_here[key_here]
        seen_here[key_here] += 1
        if i in missing:
            costs[i] = lent.get((row.name, occurrence))


def gpu_time_us(run: ModeRun) -> float:
    """Kernel time per profiled iteration (kernels' durations summed; memory operations apart)."""
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    return sum(float(r.dur_us) for r in run.kernels if r.kernel_class != MEMORY_CLASS) / iterations


UNMEASURED = "not measured"  # ends the roof of a kernel whose compute ceiling was not measured


def compute_dtype(row: KernelRow, dtype: str) -> str:
    """The precision a kernel computed in: "tf32" for a float32 run's GPU kernel named so
    (`sm90_xmma_gemm_f32f32_tf32f32_…`) or launched by a convolution (cuDNN runs float32 convolutions in TF32
    unless `torch.backends.cudnn.allow_tf32` is turned off, which fusionviz never does), else the run's dtype."""
    on_gpu = row.stream != -1
    tf32 = "tf32" in row.name.lower() or "convolution" in row.launch_op
    return "tf32" if dtype == "float32" and on_gpu and tf32 else dtype


def achieved(cost: Cost | None, dur_us: float, ceilings: Ceilings | None, dtype: str) -> Achieved | None:
    """How fast a kernel of `cost` ran in `dur_us`, against the ceilings of the device and the precision it
    computed in (`compute_dtype`): the bandwidth of the level its working set fits in, and that precision's
    matmul rate. A kernel with FLOPs in a precision whose rate was not measured (TF32) is held to no roof: its
    percentage is None and its roof says so."""
    if cost is None or dur_us <= 0:
        return None
    gbps = cost.total / (dur_us * 1e3)
    tflops = cost.flop / (dur_us * 1e6) if cost.flop else None
    if ceilings is None or ceilings.copy_gbps <= 0:
        return Achieved(gbps, tflops, None, None)
    memory = memory_roof(ceilings, cost.total)
    flop_per_byte = intensity(cost)
    if tflops is not None and flop_per_byte is not None and dtype not in ceilings.matmul_tflops:
        return Achieved(gbps, tflops, None, None, f"{dtype} matmul: {UNMEASURED}")
    roof = attainable_tflops(ceilings, dtype, flop_per_byte, cost.total) if flop_per_byte is not None else None
    if tflops is None or flop_per_byte is None or roof is None:
        return Achieved(gbps, tflops, 100 * gbps / memory.gbps, "memory", f"{memory.level} copy")
    if roof < ceilings.matmul_tflops[dtype]:
        return Achieved(gbps, tflops, 100 * tflops / roof, "memory", f"{memory.level} copy")
    return Achieved(gbps, tflops, 100 * tflops / roof, "compute", f"{dtype} matmul")


class RunCosts(msgspec.Struct, frozen=True):
    """One run's kernels with their figures, and the means per profiled iteration: bytes moved (None where no
    kernel's bytes are known), the share of kernel time whose bytes are known, and the GPU time (kernel
    durations summed; memory operations apart)."""

    costs: list[Cost | None]
    achieved: list[Achieved | None]
    bytes_per_iteration: int | None
    bytes_known_pct: float
    gpu_time_us: float


def session_costs(session: Session, ceilings: Ceilings | None) -> dict[str, RunCosts]:
    """Every run's kernel figures, by mode, against the device's `ceilings` (None: no percentages)."""
    found = {}
    for run in session.runs:
        if not run.ok or run.summary is None:
            continue
        costs = run_costs(run, session.runs, copy_itemsizes(run, session))
        found[run.mode] = _per_run(run, costs, ceilings, session.config.dtype)
    return found


def _per_run(run: ModeRun, costs: list[Cost | None], ceilings: Ceilings | None, dtype: str) -> RunCosts:
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    kernels = [(row, cost) for row, cost in zip(run.kernels, costs, strict=True)
               if row.kernel_class != MEMORY_CLASS]
    gpu_time = gpu_time_us(run)
    time_all = gpu_time * iterations
    time_known = sum(float(row.dur_us) for row, cost in kernels if cost is not None)
    moved = [cost.total for _, cost in kernels if cost is not None]
    return RunCosts(
        costs=costs,
        achieved=[None if cost is None else achieved(cost, float(row.dur_us), ceilings, compute_dtype(row, dtype))
                  for row, cost in zip(run.kernels, costs, strict=True)],
        bytes_per_iteration=round(sum(moved) / iterations) if moved else None,
        bytes_known_pct=100 * time_known / time_all if time_all else 0.0,
        gpu_time_us=gpu_time)


def cost_fields(cost: Cost | None, got: Achieved | None) -> dict[str, Any]:
    """A kernel's `inspect --json` fields: `bytes` ({"read", "written", "total", "source"} or None), `flop`,
    `achieved` ({"gbps", "tflops", "pct_of_ceiling"} or None)."""
    return {
        "bytes": None if cost is None else {"read": cost.read, "written": cost.written, "total": cost.total,
                                            "source": cost.source},
        "flop": None if cost is None else cost.flop,
        "achieved": None if got is None else {"gbps": got.gbps, "tflops": got.tflops,
                                              "pct_of_ceiling": got.pct_of_ceiling},
    }


def roofline_runs(eager: ModeRun | None, focus: ModeRun | None, costs: dict[str, RunCosts]) -> list[ModeRun]:
    """The runs the roofline shows: eager and the compiled run it is about (`focus`), where profiled and costed
    (`costs`: `session_costs`)."""
    return [r for r in (eager, focus) if r is not None and r.summary is not None and r.mode in costs]


def no_flops_note(eager: ModeRun | None, focus: ModeRun | None, costs: dict[str, RunCosts]) -> str:
    """Where no kernel of the roofline's runs (`roofline_runs`) has counted FLOPs (a chain of elementwise kernels:
    their FLOPs are not counted, and they do a few per byte), the sentence saying the FLOP panel is left out;
    else ""."""
    runs = roofline_runs(eager, focus, costs)
    for run in runs:
        iteration = run.representative_iteration
        if any(cost is not None and cost.flop for row, cost in zip(run.kernels, costs[run.mode].costs,
                                                                    strict=True) if row.iteration == iteration):
            return ""
    return f"No kernel of {' or '.join(r.mode for r in runs)} has counted FLOPs: the FLOP panel is left out."


# Why a chain has no FLOP panel, for the figure's note (the caption keeps to `no_flops_note`).
FLOPS_COUNTED = ("FLOPs are counted for GEMMs, convolutions and attention; elementwise and reduction kernels do a "
                 "few per byte and stand against the copy bandwidth alone.")


def roofline_caption(ceilings: Ceilings | None, eager: ModeRun | None, focus: ModeRun | None,
                     costs: dict[str, RunCosts]) -> str:
    """The kernel closest to its ceiling among those the roofline draws (`roofline_runs`), and the session's
    measured `ceilings`; where no kernel shown has FLOPs, that."""
    flopless = no_flops_note(eager, focus, costs)
    if ceilings is None:
        return " ".join(w for w in ("This session carries no measured ceilings: the dots show achieved rates "
                                    "without a roof.", flopless) if w)
    best: tuple[float, str, str] | None = None
    for run in roofline_runs(eager, focus, costs):  # the kernels the chart draws: its runs' representative iteration
        iteration = run.summary.representative_iteration if run.summary else None
        for row, got in zip(run.kernels, costs[run.mode].achieved, strict=True):
            if row.iteration == iteration and got is not None and got.pct_of_ceiling is not None and (
                    best is None or got.pct_of_ceiling > best[0]):
                best = (got.pct_of_ceiling, row.short_name or row.name, run.mode)
    roof = f"measured ceilings {ceilings.copy_gbps:.0f} GB/s copy, " + ", ".join(
        f"{d} {t:.1f} TFLOP/s" for d, t in ceilings.matmul_tflops.items())
    text = roof + (f"; closest to its ceiling: {best[1]} ({best[2]}) at {best[0]:.0f}%" if best else "")
    return f"{text}. {flopless}" if flopless else text
