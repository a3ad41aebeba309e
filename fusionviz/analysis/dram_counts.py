"""Measured DRAM bytes beside the estimate: a run's hardware counts (`ModeRun.dram_counters`, one iteration
under Nsight Compute) laid on its profiled kernels, kernel by kernel in launch order.

The counted iteration ran in another process than the profiled ones, so a count is placed only where the
iteration's kernels are the same functions, in the same order, as the counted ones; otherwise none is, and the note says
why. The counts are what reached DRAM: a working set that fits in L2 reads as less than the kernels ask for."""

from __future__ import annotations

from collections import defaultdict

import msgspec

from fusionviz.analysis.op_costs import Cost
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.session import ModeRun

NO_COUNTERS = ("no hardware counters recorded for this run (they need Nsight Compute on a GPU: "
               "scripts/dram_bytes.py, then scripts/fold_counters.py; a CPU has none)")


class Counted(msgspec.Struct, frozen=True):
    """Each kernel row's counted bytes, aligned with `run.kernels` (None where none was placed), the bytes of
    the counted iteration (None where none), and a sentence where the counts are missing or could not be placed."""

    costs: list[Cost | None]
    per_iteration: int | None
    note: str


def counted_costs(run: ModeRun) -> Counted:
    """The run's counts placed on every profiled iteration whose kernels match them in launch order."""
    costs: list[Cost | None] = [None] * len(run.kernels)
    counts = run.dram_counters
    if not counts:
        return Counted(costs, None, NO_COUNTERS)
    by_iteration: dict[int, list[int]] = defaultdict(list)
    for i, row in enumerate(run.kernels):
        if row.kernel_class != MEMORY_CLASS:
            by_iteration[row.iteration].append(i)
    placed = 0
    for rows in by_iteration.values():
        rows.sort(key=lambda i: run.kernels[i].start_us)
        if [_base(run.kernels[i].name) for i in rows] != [_base(c.kernel) for c in counts]:
            continue
        placed += 1
        for i, c in zip(rows, counts, strict=True):
            costs[i] = Cost(c.read, c.written, c.read + c.written, None, "counters")
    total = sum(c.read + c.written for c in counts)
    if not placed:
        return Counted(costs, total, f"the {len(counts)} counted kernels are not the kernels of any profiled "
                                     "iteration in launch order: their bytes are given per iteration only")
    return Counted(costs, total, "")


def _base(name: str) -> str:
    """A kernel's function name without return type, namespaces, template or parameters: ncu and the profiler
    demangle differently (`at::<unnamed>::` against `at::native::(anonymous namespace)::`)."""
    name = name.removeprefix("void ")
    cut = min((i for i in (name.find("<"), name.find("(")) if i >= 0), default=len(name))
    return name[:cut].rsplit("::", 1)[-1]
