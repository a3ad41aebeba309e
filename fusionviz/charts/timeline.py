"""The kernel timeline: one block per mode, kernels coloured by class over a thin CPU lane, compiled regions
shaded and graph breaks marked, on one µs axis shared by all modes."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from fusionviz.analysis.summary import drawable_runs
from fusionviz.charts.style import (
    BREAK_COLOUR,
    CLASS_COLOURS,
    CPU_COLOURS,
    DEFAULT_SETTINGS,
    REGION_FILL,
    ChartSettings,
    style,
)
from fusionviz.records.kernels import KERNEL_CLASSES
from fusionviz.records.session import Session
from fusionviz.records.trace import COMPILED_REGION, compiled_frame

TIMELINE_COLUMNS: dict[str, str] = {
    "mode": "the mode (lane) the bar belongs to",
    "lane": "'kernel', 'cpu', 'graph_call' or 'region'",
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
}
_KERNEL_Y, _CPU_Y, _CALL_Y, _REGION_Y = 0.0, 0.62, 0.86, 0.36
_KERNEL_W, _CPU_W, _CALL_W, _REGION_W = 0.7, 0.3, 0.12, 1.3
BLOCK = 1.6  # vertical distance between two modes' blocks


def _iteration_offsets(kernels: pd.DataFrame, cpu: pd.DataFrame, iterations: list[int]) -> dict[int, float]:
    """Where each iteration starts when iterations are laid end to end: after the previous one's last event."""
    offsets, cursor = {}, 0.0
    for it in iterations:
        offsets[it] = cursor
        ends = [(f.start_us + f.dur_us)[f.iteration == it].max() for f in (kernels, cpu)]
        cursor += max([e for e in ends if pd.notna(e)] + [0.0])
    return offsets


def _cpu_lane(category: str, name: str) -> str:
    """Ops and launches share the CPU lane; a compiled region shades the block; a graph call is a strip."""
    if category != "region":
        return "cpu"
    return "region" if name.startswith(COMPILED_REGION) else "graph_call"


def timeline_bars(session: Session, all_iterations: bool = False) -> pd.DataFrame:
    """Bars of the timeline: kernels, CPU ops, graph calls and compiled regions of each drawable mode.

    One steady iteration per mode (its representative one) by default; with `all_iterations` every
    profiled iteration, laid end to end.
    """
    frames = []
    for block, run in enumerate(drawable_runs(session)):
        assert run.summary is not None
        kernels, cpu = run.kernel_frame(), run.cpu_op_frame()
        iterations = sorted(set(kernels.iteration) | set(cpu.iteration)) if all_iterations else [
            run.summary.representative_iteration]
        offsets = _iteration_offsets(kernels, cpu, iterations)
        y0 = block * BLOCK
        k = kernels[kernels.iteration.isin(iterations)]
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": "kernel", "y": y0 + _KERNEL_Y, "row": k.index,
            "iteration": k.iteration, "name": k.name, "kind": k.kernel_class,
            "start_us": k.start_us + k.iteration.map(offsets), "dur_us": k.dur_us, "at_us": k.start_us,
            "grid": k.grid, "block": k.block, "input_shapes": k.input_shapes,
            "fused_ops": k.fused_ops.map(lambda ops: ", ".join(ops)),
        }))
        c = cpu[cpu.iteration.isin(iterations)]
        lane = pd.Series([_cpu_lane(cat, name) for cat, name in zip(c.category, c.name, strict=True)],
                         index=c.index, dtype=object)
        y = lane.map({"cpu": _CPU_Y, "graph_call": _CALL_Y, "region": _REGION_Y}) + y0
        frames.append(pd.DataFrame({
            "mode": run.mode, "lane": lane, "y": y, "row": c.index, "iteration": c.iteration, "name": c.name,
            "kind": c.category, "start_us": c.start_us + c.iteration.map(offsets), "dur_us": c.dur_us,
            "at_us": c.start_us, "grid": "", "block": "", "input_shapes": "", "fused_ops": "",
        }))
    if not frames:
        return pd.DataFrame(columns=list(TIMELINE_COLUMNS))
    return pd.concat(frames, ignore_index=True)[list(TIMELINE_COLUMNS)]


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
                rows.append({"mode": run.mode, "y": region.y - _REGION_W / 2,
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


# customdata: [0:2] = (mode, row), the app maps a clicked bar back to its kernel through these; [8:11] = the
# true duration, start within the iteration, and iteration (a horizontal bar's %{x} is where it ends).
_CUSTOM = ["mode", "row", "name", "grid", "block", "input_shapes", "fused_ops", "kind", "dur_us", "at_us", "iteration"]
_KERNEL_HOVER = ("<b>%{customdata[2]}</b><br>%{customdata[0]} · %{customdata[7]}<br>"
                 "duration %{customdata[8]:.1f} µs, start %{customdata[9]:.1f} µs in iteration %{customdata[10]}"
                 "<br>grid %{customdata[3]}  block %{customdata[4]}<br>inputs %{customdata[5]}"
                 "<br>fused ops: %{customdata[6]}<extra></extra>")
_CPU_HOVER = ("<b>%{customdata[2]}</b><br>%{customdata[0]} · CPU %{customdata[7]}<br>"
              "duration %{customdata[8]:.1f} µs, start %{customdata[9]:.1f} µs in iteration %{customdata[10]}"
              "<extra></extra>")


def _bar(rows: pd.DataFrame, name: str, colour: str, width: float, hover: str, *, legend: bool = True,
         line: str | None = None) -> go.Bar:
    custom = rows[_CUSTOM].to_numpy(dtype=object)
    return go.Bar(
        base=rows.start_us.to_numpy(), x=rows.dur_us.to_numpy(), y=rows.y.to_numpy(), orientation="h",
        width=width, name=name, marker={"color": colour, "line": {"width": 0.6 if line else 0, "color": line}},
        customdata=custom, hovertemplate=hover, showlegend=legend, legendgroup=name,
    )


def timeline_figure(session: Session, bars: pd.DataFrame, settings: ChartSettings = DEFAULT_SETTINGS,
                    title: str | None = None) -> go.Figure:
    """One block per mode, eager on top: kernels coloured by class, a thin CPU lane under them, compiled
    regions shaded and graph breaks marked, on one numeric µs axis shared by all modes."""
    fig = go.Figure()
    regions = bars[bars.lane == "region"]
    if len(regions):
        # Not hoverable: the band lies under the kernel bars, and a click must pick the kernel.
        band = _bar(regions, "compiled region", REGION_FILL, _REGION_W, _CPU_HOVER)
        band.hoverinfo, band.hovertemplate = "skip", None
        fig.add_trace(band)
    kernels = bars[bars.lane == "kernel"]
    for kernel_class in KERNEL_CLASSES:
        rows = kernels[kernels.kind == kernel_class]
        if len(rows):
            fig.add_trace(_bar(rows, kernel_class, CLASS_COLOURS[kernel_class], _KERNEL_W, _KERNEL_HOVER,
                               line="white"))
    for category in ("op", "launch"):
        rows = bars[(bars.lane == "cpu") & (bars.kind == category)]
        if len(rows):
            fig.add_trace(_bar(rows, f"CPU {category}", CPU_COLOURS[category], _CPU_W, _CPU_HOVER, line="white"))
    calls = bars[bars.lane == "graph_call"]
    if len(calls):
        fig.add_trace(_bar(calls, "compiled graph call", CPU_COLOURS["graph_call"], _CALL_W, _CPU_HOVER))
    breaks = break_markers(session, bars)
    if len(breaks):
        fig.add_trace(go.Scatter(
            x=breaks.x_us, y=breaks.y, mode="markers", name="graph break",
            marker={"symbol": "x-thin", "size": 14, "color": BREAK_COLOUR, "line": {"width": 3, "color": BREAK_COLOUR}},
            customdata=breaks[["reason", "where"]].to_numpy(dtype=object),
            hovertemplate="<b>graph break</b><br>%{customdata[0]}<br>%{customdata[1]}<extra></extra>",
        ))
        for x in breaks.x_us:
            fig.add_vline(x=x, line={"color": BREAK_COLOUR, "width": 1, "dash": "dot"})
    runs = drawable_runs(session)
    ticks = [b * BLOCK + y for b in range(len(runs)) for y in (_KERNEL_Y, _CPU_Y)]
    labels = [text for r in runs for text in (f"<b>{r.mode}</b>", "CPU")]
    fig.update_yaxes(tickvals=ticks, ticktext=labels, autorange="reversed", showgrid=False, zeroline=False,
                     range=[len(runs) * BLOCK - 0.5, -0.6])
    fig.update_xaxes(title_text="µs from the start of the iteration", showgrid=True, gridcolor="#EEEEEE",
                     rangemode="tozero")
    fig.update_layout(barmode="overlay", bargap=0, clickmode="event+select", dragmode="zoom")
    text = title or "Kernel timeline: one steady iteration per mode"
    return style(fig, settings, text, 150 + settings.title_size + settings.lane_px * max(len(runs), 1))


def selected_kernel(points: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The (mode, kernel row) of the first clicked kernel bar in a Plotly selection, if any."""
    for point in points:
        custom = point.get("customdata")
        if isinstance(custom, list) and len(custom) >= 8 and custom[7] in CLASS_COLOURS:
            return str(custom[0]), int(custom[1])
    return None
