"""A distributed job, rank by rank: step time, kernels, busy time, communication and how much of it overlaps
compute, compiled graphs and the splits DDP's buckets made; the slowest rank and the step where ranks diverge.

Plain Python over each rank's tables (no pandas), so `inspect` prints a job without importing it.

- **Communication**: on a GPU, the kernels of class `communication` (NCCL, RCCL); on the CPU, a CPU backend's
  collectives on their own threads (gloo's `gloo:all_reduce`, the CPU op table's `collective` rows). Its time per
  step is the union of those intervals.
- **Compute**: every other kernel (on the CPU: the top-level compute ops fusionviz counts as kernels there).
- **Overlap**: the share of communication time during which compute runs too (HTA's
  communication/computation overlap): 100 % when every collective hides behind compute.
- **Busy**: as for one trace: the union of all kernel intervals over the step's span.
- **Graph splits**: compiled graphs called inside one call of a compiled region, beyond the first. Dynamo's own
  graph breaks start a new region (the resumed frame); several graphs within one region are the pieces a
  backend cut the frame's graph into, which under DDP is DDPOptimizer splitting at every bucket boundary.
- **The slowest rank**: the one whose median step takes longest. **The diverging step**: the step (counted from
  0, in profiled order) in which the ranks' step times differ most.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from fusionviz.analysis.trace_stats import percentile
from fusionviz.records.job import Job, RankTrace
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.trace import COMPILED_REGION, ParsedTrace

COMMUNICATION_CLASS = "communication"
GRAPH_CALL = "## Call CompiledFxGraph"

Interval = tuple[float, float]  # (start, end) in µs from the step's start


@dataclass(frozen=True)
class StepMs:
    """A rank's step time in ms: the median and the p10–p90 interval over its profiled steps."""

    median: float
    low: float
    high: float


@dataclass(frozen=True)
class RankFigures:
    """One rank's figures; per-step values are means over its profiled steps."""

    rank: int
    file: str
    steps: int
    step_ms: StepMs
    kernels_per_step: float  # kernels as fusionviz counts them (communication kernels included)
    busy_pct: float | None  # union of kernel time over the step's span; None when the span is 0
    compute_us: float  # per step: the union of the compute kernels' intervals
    communication_us: float  # per step: the union of the communication intervals
    overlap_pct: float | None  # of communication time, the share during which compute runs; None without any
    compiled_regions: int  # distinct compiled frames (`Torch-Compiled Region: N/…`) called
    graphs_per_step: float  # compiled graphs called inside compiled regions (forward graphs)
    graph_splits_per_step: float  # of those, the ones beyond the first in one region call (DDP's bucket splits)
    graphs: tuple[str, ...]  # the distinct compiled graphs called inside regions, by Inductor's key


@dataclass(frozen=True)
class JobFigures:
    """Every rank's figures in rank order, and what compares them (None with fewer than two ranks)."""

    ranks: list[RankFigures]
    slowest_rank: int | None
    diverging_step: int | None
    diverging_spread_ms: float | None  # max − min step time across ranks in that step
    same_graphs: bool  # every rank called the same compiled graphs


def job_figures(job: Job) -> JobFigures:
    ranks = [rank_figures(r) for r in job.ranks]
    several = len(ranks) > 1 and all(r.steps for r in ranks)
    slowest = max(ranks, key=lambda r: (r.step_ms.median, -r.rank)).rank if several else None
    step, spread = _diverging_step(job.ranks) if several else (None, None)
    return JobFigures(ranks=ranks, slowest_rank=slowest, diverging_step=step, diverging_spread_ms=spread,
                      same_graphs=len({r.graphs for r in ranks}) <= 1)


def rank_figures(rank: RankTrace) -> RankFigures:
    parsed = rank.parsed
    steps = _step_durations(parsed)
    n = len(steps)
    kernels: list[list[Interval]] = [[] for _ in range(n)]
    compute: list[list[Interval]] = [[] for _ in range(n)]
    communication: list[list[Interval]] = [[] for _ in range(n)]
    count = 0
    for iteration, kernel_class, start, dur in _kernel_rows(parsed):
        if kernel_class == MEMORY_CLASS or not 0 <= iteration < n:
            continue
        count += 1
        kernels[iteration].append((start, start + dur))
        (communication if kernel_class == COMMUNICATION_CLASS else compute)[iteration].append((start, start + dur))
    regions: list[list[tuple[str, Interval]]] = [[] for _ in range(n)]
    for iteration, name, category, start, dur in _cpu_op_rows(parsed):
        if not 0 <= iteration < n:
            continue
        if category == "collective":
            communication[iteration].append((start, start + dur))
        elif category == "region":
            regions[iteration].append((name, (start, start + dur)))
    spans = [max([steps[i]] + [end for _, end in kernels[i]]) for i in range(n)]
    kernel_time = [covered(merged(k)) for k in kernels]
    comm_merged = [merged(c) for c in communication]
    comm_time = sum(covered(c) for c in comm_merged)
    overlap = sum(covered(intersection(c, merged(k))) for c, k in zip(comm_merged, compute, strict=True))
    frames, graphs, calls, splits = _graph_calls(regions)
    ordered = sorted(steps)
    return RankFigures(
        rank=rank.rank, file=rank.file, steps=n,
        step_ms=StepMs(percentile(ordered, 50) / 1e3, percentile(ordered, 10) / 1e3, percentile(ordered, 90) / 1e3),
        kernels_per_step=count / n if n else 0.0,
        busy_pct=100 * sum(kernel_time) / sum(spans) if n and sum(spans) > 0 else None,
        compute_us=sum(covered(merged(c)) for c in compute) / n if n else 0.0,
        communication_us=comm_time / n if n else 0.0,
        overlap_pct=100 * overlap / comm_time if comm_time > 0 else None,
        compiled_regions=frames, graphs_per_step=calls / n if n else 0.0,
        graph_splits_per_step=splits / n if n else 0.0, graphs=graphs)


def job_report(job: Job) -> dict[str, Any]:
    """The job as `inspect --json` gives it beside the per-file runs."""
    figures = job_figures(job)
    ranks = []
    for r in figures.ranks:
        record = asdict(r)
        record["graphs"] = len(r.graphs)
        ranks.append(record)
    return {"ranks": ranks, "slowest_rank": figures.slowest_rank, "diverging_step": figures.diverging_step,
            "diverging_spread_ms": figures.diverging_spread_ms, "same_graphs": figures.same_graphs}


def merged(intervals: list[Interval]) -> list[Interval]:
    """Intervals joined where they touch or overlap, in order."""
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def intersection(a: list[Interval], b: list[Interval]) -> list[Interval]:
    """Where two lists of merged intervals both cover."""
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def covered(intervals: list[Interval]) -> float:
    return sum(end - start for start, end in intervals)


def _diverging_step(ranks: list[RankTrace]) -> tuple[int | None, float | None]:
    steps = [_step_durations(r.parsed) for r in ranks]
    common = min(len(s) for s in steps)
    if common == 0:
        return None, None
    spreads = [max(s[i] for s in steps) - min(s[i] for s in steps) for i in range(common)]
    worst = max(range(common), key=lambda i: spreads[i])
    return worst, spreads[worst] / 1e3


def _graph_calls(regions: list[list[tuple[str, Interval]]]) -> tuple[int, tuple[str, ...], int, int]:
    """Distinct compiled frames; distinct graphs called in regions; graph calls in regions; and splits: the
    calls beyond the first within one innermost region call."""
    frames: set[str] = set()
    graphs: set[str] = set()
    calls = splits = 0
    for step in regions:
        frame_calls = [(span, name) for name, span in step if name.startswith(COMPILED_REGION)]
        frames.update(name.split("/", 1)[0] for _, name in frame_calls)
        inside: dict[int, int] = {}
        for name, (start, end) in step:
            if not name.startswith(GRAPH_CALL):
                continue
            holders = [i for i, ((s, e), _) in enumerate(frame_calls) if s <= start and end <= e]
            if not holders:
                continue  # a backward graph, run by autograd outside any region
            innermost = max(holders, key=lambda i: frame_calls[i][0][0])
            inside[innermost] = inside.get(innermost, 0) + 1
            graphs.add(name.removeprefix(GRAPH_CALL).strip(" #"))
            calls += 1
        splits += sum(n - 1 for n in inside.values())
    return len(frames), tuple(sorted(graphs)), calls, splits


def _step_durations(parsed: ParsedTrace) -> list[float]:
    return list(parsed.summary.step_durations_us)


def _kernel_rows(parsed: ParsedTrace) -> Iterator[tuple[int, str, float, float]]:
    return ((r.iteration, r.kernel_class, r.start_us, r.dur_us) for r in parsed.kernel_rows)


def _cpu_op_rows(parsed: ParsedTrace) -> Iterator[tuple[int, str, str, float, float]]:
    return ((r.iteration, r.name, r.category, r.start_us, r.dur_us) for r in parsed.cpu_op_rows)
