"""The summaries profilers give of a trace (HolisticTraceAnalysis, the TensorBoard plugin): kernels ranked by
total time with the distribution of their durations, and where each iteration's GPU time went (kernels,
waiting on the host, gaps between queued kernels).

Plain Python over a run's kernel records, no pandas: `inspect` prints these without importing it (the app
turns them into DataFrames with `as_frame`). Definitions are in docs/methodology.md (Definitions) and below.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import msgspec

from fusionviz.records.derived import derived
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.session import ModeRun

if TYPE_CHECKING:
    import pandas as pd


class KernelStat(msgspec.Struct, frozen=True):
    """One kernel name over all profiled iterations of a run."""

    name: str
    kernel_class: str
    count: int  # launches over all profiled iterations
    per_iteration: float  # launches per iteration
    total_us: float  # summed duration
    pct_of_kernel_time: float  # of the run's summed kernel duration (memory operations are not kernels)
    mean_us: float
    min_us: float
    p50_us: float  # percentiles with linear interpolation between the closest ranks (`percentile`)
    p99_us: float
    max_us: float


class StepIdle(msgspec.Struct, frozen=True):
    """Where one iteration's GPU time went. The four parts add up to `span_us`:

    - `kernel_us`: time at least one kernel runs (the union of kernel intervals; memory operations are not
      kernels, so a Memcpy alone leaves the GPU's compute idle);
    - `host_wait_us`: gaps in which the GPU had no kernel queued: the kernel that ends the gap was launched
      (its runtime call began) at or after the gap began, as HTA's "host wait"; the gap after the last kernel
      to the end of the iteration is host wait too (nothing was queued);
    - `between_kernels_us`: gaps whose ending kernel was launched before the gap began: it was queued and
      waited on the GPU side (launch latency, a dependency, a stream wait), as HTA's "kernel wait" and
      "other" together;
    - `unattributed_us`: gaps ended by a kernel whose launch the trace does not link (CPU traces, traces
      without correlation data).
    """

    iteration: int
    span_us: float  # from the iteration's start to the later of its end and its last kernel's end
    kernel_us: float
    host_wait_us: float
    between_kernels_us: float
    unattributed_us: float
    kernels: int

    @property
    def busy_pct(self) -> float:
        return 100 * self.kernel_us / self.span_us if self.span_us > 0 else 0.0


def percentile(ordered: list[float], q: float) -> float:
    """The q-th percentile (0–100) of sorted values, interpolating linearly between the two closest ranks
    (numpy's and pandas' default): rank q/100 · (n − 1), counted from 0."""
    if not ordered:
        return math.nan
    rank = q / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def kernel_ranking(run: ModeRun, top: int | None = None) -> list[KernelStat]:
    """Kernels by name, longest total time first (ties by name), with their duration distributions; the
    first `top` of them when given. Memory operations are not kernels and are left out."""
    durations: dict[str, list[float]] = {}
    classes: dict[str, str] = {}
    for row in run.kernels:
        if row.kernel_class == MEMORY_CLASS:
            continue
        durations.setdefault(row.name, []).append(float(row.dur_us))
        classes.setdefault(row.name, row.kernel_class)
    iterations = max(run.summary.iterations if run.summary else 1, 1)
    everything = sum(sum(d) for d in durations.values())
    stats = []
    for name, values in durations.items():
        values.sort()
        total = sum(values)
        stats.append(KernelStat(
            name=name, kernel_class=classes[name], count=len(values), per_iteration=len(values) / iterations,
            total_us=total, pct_of_kernel_time=100 * total / everything if everything > 0 else 0.0,
            mean_us=total / len(values), min_us=values[0], p50_us=percentile(values, 50),
            p99_us=percentile(values, 99), max_us=values[-1]))
    stats.sort(key=lambda s: (-s.total_us, s.name))
    return stats if top is None else stats[:top]


class BusyTime(msgspec.Struct, frozen=True):
    """Means over a run's profiled iterations of `StepIdle`'s parts (kernels only: memory operations are
    counted apart), and the largest gap. Analysis divides kernel time by the unprofiled latency instead of
    the span where the run is timed (`summary.busy_fraction`): a profiled span overstates idling."""

    span_us: float  # from an iteration's start to the later of its end and its last kernel's end
    kernel_time_us: float  # time at least one kernel runs (the union of kernel intervals)
    busy_fraction: float | None  # kernel time / span; None without a span
    idle_us: float  # span minus kernel time
    largest_gap_us: float  # the longest of `gaps`
    # each iteration's stretches without a kernel before its last kernel, (start_us, dur_us) from its start
    gaps: tuple[tuple[tuple[float, float], ...], ...]


def busy_time(run: ModeRun) -> BusyTime:
    """`BusyTime` of a run (zeros, and no busy fraction, without a summary)."""
    walked = _walked(run)
    n = len(walked)
    span = sum(step.span_us for step, _ in walked) / n if n else 0.0
    kernel = sum(step.kernel_us for step, _ in walked) / n if n else 0.0
    return BusyTime(span_us=span, kernel_time_us=kernel, busy_fraction=kernel / span if span > 0 else None,
                    idle_us=sum(step.span_us - step.kernel_us for step, _ in walked) / n if n else 0.0,
                    largest_gap_us=max((dur for _, gaps in walked for _, dur in gaps), default=0.0),
                    gaps=tuple(gaps for _, gaps in walked))


def idle_breakdown(run: ModeRun) -> list[StepIdle]:
    """`StepIdle` of each profiled iteration, in order (see its definitions)."""
    return [step for step, _ in _walked(run)]


@derived
def _walked(run: ModeRun) -> list[tuple[StepIdle, tuple[tuple[float, float], ...]]]:
    """Each profiled iteration's `StepIdle` and its gaps, in order: the one walk over a run's kernels that every
    idle and busy figure comes from, made once per run (shared: callers build their own values from it)."""
    summary = run.summary
    if summary is None:
        return []
    by_iteration: list[list[tuple[float, float, float | None]]] = [[] for _ in range(summary.iterations)]
    for row in run.kernels:
        it = row.iteration
        if row.kernel_class != MEMORY_CLASS and 0 <= it < summary.iterations:
            launch = row.launch_us
            linked = None if launch is None else float(launch)
            by_iteration[it].append((float(row.start_us), float(row.dur_us), linked))
    steps = summary.step_durations_us
    return [_step_idle(i, sorted(kernels, key=lambda k: k[0]), steps[i] if i < len(steps) else 0.0)
            for i, kernels in enumerate(by_iteration)]


def _step_idle(iteration: int, kernels: list[tuple[float, float, float | None]], step_us: float
               ) -> tuple[StepIdle, tuple[tuple[float, float], ...]]:
    busy = host = between = unattributed = 0.0
    gaps = []
    cursor = 0.0  # the end of the kernel time so far, from the iteration's start
    for start, dur, launch in kernels:
        end = start + dur
        if start > cursor:
            gap = start - cursor
            gaps.append((cursor, gap))
            if launch is None:
                unattributed += gap
            elif launch >= cursor:
                host += gap
            else:
                between += gap
            busy += dur
            cursor = end
        elif end > cursor:
            busy += end - cursor
            cursor = end
    span = max(step_us, cursor)
    host += span - cursor  # after the last kernel: nothing queued
    return StepIdle(iteration=iteration, span_us=span, kernel_us=busy, host_wait_us=host,
                    between_kernels_us=between, unattributed_us=unattributed, kernels=len(kernels)), tuple(gaps)


def profiled_stretch(idle: list[StepIdle], latency_ms: float | None) -> float | None:
    """How many times as long a profiled iteration ran as a timed call: the median profiled span over the median
    timed (unprofiled) latency. The profiler's own work slows the host side, so a trace draws each iteration
    longer than the call the timing measured; None without timing or without profiled iterations."""
    if latency_ms is None or latency_ms <= 0 or not idle:
        return None
    import statistics  # here: only a timed run needs it, and its import (fractions, random) is a small trace's ms

    return statistics.median(s.span_us for s in idle) / (latency_ms * 1e3)


def as_records(rows: list[Any]) -> list[dict[str, Any]]:
    """Summary rows (KernelStat, StepIdle) as plain dicts, with `busy_pct` for StepIdle."""
    records = []
    for row in rows:
        record = msgspec.structs.asdict(row)
        if isinstance(row, StepIdle):
            record["busy_pct"] = row.busy_pct
        records.append(record)
    return records


def as_frame(rows: list[Any], kind: type) -> pd.DataFrame:
    """Summary rows as a DataFrame with `kind`'s columns (empty when there are none), for the app."""
    import pandas as pd

    columns = [f.name for f in msgspec.structs.fields(kind)] + (["busy_pct"] if kind is StepIdle else [])
    return pd.DataFrame(as_records(rows), columns=columns)
