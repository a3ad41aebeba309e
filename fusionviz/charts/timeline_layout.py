"""The kernel timeline's bars and lanes, laid out from a session: one block per mode (a kernel lane per CUDA
stream over a CPU lane), every bar with its place on one µs axis shared by all modes, the graph breaks, and the
windows and searches the timeline draws from. Plain tables, no Plotly: `charts.timeline` draws them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fusionviz.analysis.provenance import kernel_origins
from fusionviz.analysis.summary import drawable_runs
from fusionviz.records.session import ModeRun, Session
from fusionviz.records.trace import COMPILED_REGION, compiled_frame

if TYPE_CHECKING:
    from fusionviz.analysis.timing import Estimate

TIMELINE_COLUMNS: dict[str, str] = {
    "mode": "the mode (lane) the bar belongs to",
    "lane": "'kernel', 'cpu', 'graph_call' or 'region'",
    "stream": "CUDA stream of a kernel bar (its lane within the mode's block); -1 otherwise",
    "y": "vertical position (mode blocks top to bottom)",
    "row": "row of the mode's kernel table (kernel lane) or CPU op table (others)",
    "iteration": "profiled iteration",
    "name": "full name",
    "kind": "kernel class on the kernel lane; CPU op category otherwise",
    "start_us": "start in µs on the shared axis (iterations laid end to end when all are drawn)",
    "dur_us": "duration in µs",
    "at_us": "start in µs from its iteration's start, as in the kernel table: what hovers show",
    "grid": "launch grid",
    "block": "thread block",
    "input_shapes": "input shapes of the launching op",
    "fused_ops": "source ops, comma separated",
    "origin": "where a kernel came from (`provenance.kernel_origins`): a compiled kernel's pre-grad nodes and lines "
              "from Inductor's records, an eager one's launching op, module and line; '' where the session does "
              "not say",
}
KERNEL_Y, CPU_Y, CALL_Y, REGION_Y = 0.0, 0.62, 0.86, 0.36
KERNEL_W, CPU_W, CALL_W, REGION_W = 0.7, 0.3, 0.12, 1.3
LATENCY_Y = -0.5  # the measured latency's strip: above a mode's top kernel lane, clear of a graph break's ✕
BLOCK = 1.6  # vertical distance between two modes' blocks (a mode with one stream)
STREAM_GAP = 0.85  # each further stream of a mode adds a kernel lane this far below the previous one


@dataclass(frozen=True)
class Lane:
    """One horizontal lane: a mode's kernels on one stream, or its CPU lane."""

    mode: str
    kind: str  # "kernel" or "cpu"
    stream: int
    y: float
    label: str


def _iteration_offsets(kernels: pd.DataFrame, cpu: pd.DataFrame, iterations: list[int]) -> dict[int, float]:
    """Where each iteration starts when iterations are laid end to end: after the previous one's last event."""
    last_end: dict[int, float] = {}
    for f in (kernels, cpu):  # one grouped pass per table: a mask per iteration is quadratic in the steps
        for it, end in (f.start_us + f.dur_us).groupby(f.iteration).max().items():
            last_end[int(it)] = max(last_end.get(int(it), 0.0), float(end))
    offsets, cursor = {}, 0.0
    for it in iterations:
        offsets[it] = cursor
        cursor += last_end.get(it, 0.0)
    return offsets


def _streams(kernels: pd.DataFrame) -> list[int]:
    return sorted(int(v) for v in kernels.stream.unique()) if len(kernels) else [-1]


def timeline_bars(session: Session, all_iterations: bool = False, iteration: int | None = None,
                  tables: Callable[[ModeRun], tuple[pd.DataFrame, pd.DataFrame]] | None = None,
                  origins: Callable[[ModeRun], list[str]] = kernel_origins) -> pd.DataFrame:
    """Bars of the timeline: kernels, CPU ops, graph calls and compiled regions of each drawable mode.

    One steady iteration per mode (its representative one) by default, or `iteration` where a mode has it;
    with `all_iterations` every profiled iteration, laid end to end. A mode whose kernels ran on several
    streams gets one kernel lane per stream, the lowest stream first. `tables` gives a run's kernel and CPU op
    tables (a caller that keeps them passes its own; by default they are built from the run's records), and
    `origins` where each of its kernel records came from (`provenance.kernel_origins`, or the caller's copy).
    """
    frames = []
    y0 = 0.0
    for run in drawable_runs(session):
        assert run.summary is not None
        kernels, cpu = tables(run) if tables else (run.kernel_frame(), run.cpu_op_frame())
        if all_iterations:
            iterations = sorted(set(kernels.iteration) | set(cpu.iteration))
        elif iteration is not None and 0 <= iteration < run.summary.iterations:
            iterations = [iteration]
        else:
            iterations = [run.summary.representative_iteration]
        offsets = _iteration_offsets(kernels, cpu, iterations)
        k = kernels[kernels.iteration.isin(iterations)]
        streams = _streams(kernels)
        below = (len(streams) - 1) * STREAM_GAP  # the CPU lane and the regions move down by the extra lanes
        lane_y = {s: y0 + KERNEL_Y + i * STREAM_GAP for i, s in enumerate(streams)}
        shift = pd.Series(offsets, dtype=float)
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": "kernel", "stream": k.stream.astype(int),
            "y": k.stream.map(pd.Series(lane_y, dtype=float)).astype(float), "row": k.index,
            "iteration": k.iteration, "name": k.name, "kind": k.kernel_class,
            "start_us": k.start_us + k.iteration.map(shift), "dur_us": k.dur_us, "at_us": k.start_us,
            "grid": k.grid, "block": k.block, "input_shapes": k.input_shapes,
            "fused_ops": k.fused_ops.map(", ".join),
            "origin": np.asarray(origins(run), dtype=object)[k.index.to_numpy(dtype=int)],
        }))
        c = cpu[cpu.iteration.isin(iterations)]
        region = (c.category == "region").to_numpy()
        compiled = c.name.astype(str).str.startswith(COMPILED_REGION).to_numpy(dtype=bool)
        # Ops and launches share the CPU lane; a compiled region shades the block; a graph call is a strip.
        lane = np.where(region, np.where(compiled, "region", "graph_call"), "cpu")
        y = np.where(region, np.where(compiled, REGION_Y + below / 2, CALL_Y + below), CPU_Y + below) + y0
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": pd.Series(lane, index=c.index, dtype=object), "stream": -1,
            "y": pd.Series(y, index=c.index), "row": c.index, "iteration": c.iteration,
            "name": c.name, "kind": c.category, "start_us": c.start_us + c.iteration.map(shift),
            "dur_us": c.dur_us, "at_us": c.start_us, "grid": "", "block": "", "input_shapes": "", "fused_ops": "",
            "origin": "",
        }))
        y0 += BLOCK + below
    if not frames:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(TIMELINE_COLUMNS)]


def timeline_lanes(session: Session, bars: pd.DataFrame) -> list[Lane]:
    """The lanes of `bars`, top to bottom: each mode's kernel lanes (one per stream), then its CPU lane."""
    lanes: list[Lane] = []
    for run in drawable_runs(session):
        mine = bars[bars["mode"] == run.mode]
        kernels = mine[mine.lane == "kernel"]
        pairs = kernels[["y", "stream"]].drop_duplicates()  # one per lane, however many kernels
        streams = sorted((float(y), int(s)) for y, s in zip(pairs.y, pairs.stream, strict=True))
        top = min([y for y, _ in streams] + [float(mine.y.min()) if len(mine) else 0.0])
        if not streams:
            streams = [(top, -1)]
        for i, (y, stream) in enumerate(streams):
            if len(streams) == 1:
                label = f"<b>{run.mode}</b>"
            else:
                label = f"<b>{run.mode}</b> · stream {stream}" if i == 0 else f"stream {stream}"
            lanes.append(Lane(run.mode, "kernel", stream, y, label))
        cpu_y = streams[-1][0] - KERNEL_Y + CPU_Y
        lanes.append(Lane(run.mode, "cpu", -1, cpu_y, "CPU"))
    return lanes


def latency_marks(lanes: list[Lane], bars: pd.DataFrame, latencies: Mapping[str, Estimate]) -> pd.DataFrame:
    """Each timed mode's measured latency per call (median and p10–p90, µs), placed from the start of each of
    its iterations drawn, just above its top kernel lane: the timed call beside the profiled iteration, which
    the profiler stretches. Empty without timing (a plain trace)."""
    columns = ["mode", "iteration", "y", "start_us", "median_us", "low_us", "high_us"]
    rows = []
    tops: dict[str, float] = {}
    for lane in lanes:
        if lane.kind == "kernel":
            tops.setdefault(lane.mode, lane.y)  # a mode's first kernel lane, modes in order
    for mode, top in tops.items():
        estimate = latencies.get(mode)
        mine = bars[bars["mode"] == mode]
        if estimate is None or not len(mine):
            continue
        starts = (mine.start_us - mine.at_us).groupby(mine.iteration).min()  # each iteration's place on the axis
        rows += [{"mode": mode, "iteration": int(it), "y": top + LATENCY_Y, "start_us": float(start),
                  "median_us": estimate.median * 1e3, "low_us": estimate.low * 1e3, "high_us": estimate.high * 1e3}
                 for it, start in starts.items()]
    return pd.DataFrame(rows, columns=columns)


def break_markers(session: Session, bars: pd.DataFrame) -> pd.DataFrame:
    """Graph-break markers. A break is a change of compiled frame within one top-level call of a compiled
    region (`Torch-Compiled Region: 0/0`, then `1/0`: Dynamo resumed in a new frame after the break), marked
    where the graph call before it ended (eager code runs from there), with the break's reason where Dynamo
    reported one (breaks are listed in program order). Calls of one region that follow one another, and
    recompiles of a frame, are no break."""
    rows = []
    for run in drawable_runs(session):
        mine = bars[bars["mode"] == run.mode]
        regions = mine[mine.lane == "region"]
        graph_calls = mine[mine.lane == "graph_call"]
        for call in _top_level_calls(regions.sort_values("start_us", kind="stable")):
            changes = [r for (a, _), (b, r) in pairwise(call) if compiled_frame(b) != compiled_frame(a)]
            for i, region in enumerate(changes):
                brk = run.graph_breaks[i] if i < len(run.graph_breaks) else None
                rows.append({"mode": run.mode, "y": region.y - REGION_W / 2,
                             "x_us": _break_x(graph_calls, call[0][1], region),
                             "reason": brk.reason if brk else "the compiled graph ends here; eager code runs, "
                                                              "then a new compiled frame resumes",
                             "where": brk.user_frame if brk else ""})
    return pd.DataFrame(rows, columns=["mode", "y", "x_us", "reason", "where"])


def _top_level_calls(regions: pd.DataFrame) -> list[list[tuple[str, Any]]]:
    """Compiled-region bars grouped by top-level call: (name, row) of each region, in start order; a region
    that starts inside a call (a frame resumed after a break runs inside the frame that broke) joins it."""
    calls: list[list[tuple[str, Any]]] = []
    end = float("-inf")
    for region in regions.itertuples():
        if region.start_us >= end:
            calls.append([])
            end = region.start_us + region.dur_us
        calls[-1].append((str(region.name), region))
    return calls


def _break_x(graph_calls: pd.DataFrame, outer: Any, region: Any) -> float:
    """Where eager code took over before `region`: the end of the last graph call of the same top-level call
    that ended before it; the region's start where there is none."""
    ends = graph_calls.start_us + graph_calls.dur_us
    before = ends[(graph_calls.start_us >= outer.start_us) & (ends <= region.start_us)]
    return float(before.max()) if len(before) else float(region.start_us)


def matching_kernels(bars: pd.DataFrame, search: str) -> pd.DataFrame:
    """The kernel bars whose name contains `search`, in any case (none for an empty search)."""
    text = search.strip()
    if not text:
        return bars.iloc[0:0]
    kernels = bars[bars.lane == "kernel"]
    return kernels[kernels.name.str.contains(text, case=False, regex=False)]


def in_window(bars: pd.DataFrame, window: tuple[float, float] | None) -> pd.DataFrame:
    """The bars that overlap `window` (all of them when None)."""
    if window is None:
        return bars
    start, end = window
    return bars[(bars.start_us < end) & (bars.start_us + bars.dur_us > start)]


def kernels_in_window(bars: pd.DataFrame, window: tuple[float, float] | None) -> int:
    """How many kernels a large timeline draws in `window` (each can be clicked at CLICK_KERNELS or fewer)."""
    return int((in_window(bars, window).lane == "kernel").sum())
