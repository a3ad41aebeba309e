"""The kernel timeline: one block per mode, kernels coloured by class over a thin CPU lane (one kernel lane per
CUDA stream), compiled regions shaded and graph breaks marked, on one µs axis shared by all modes; where the
session was timed, each mode's measured latency per call as a strip above its kernels (the profiler stretches
the iteration drawn, the timed call is unprofiled), and a kernel's hover says where it came from.

Small timelines are SVG bars. Large ones (more than SVG_BARS bars) are drawn at a level of detail, each lane
as the cells of a one-row heatmap, which the browser paints as one image (a zoom or pan of tens of thousands
of bars redraws in a fraction of a second, where SVG bars or WebGL lines take seconds without a GPU): a window
holding at most DETAIL_KERNELS kernels draws every kernel as its own cell (exact start and end, class colour,
hover), with invisible markers to click once at most CLICK_KERNELS are in the window (a layer of thousands of
SVG markers costs more to draw than the rest of the chart); a wider one cuts each lane into BINS
slices of time shaded by how busy the lane is in each (`lane_bins`). The window is chosen by the caller (a box
drawn on the chart, a step); the scroll wheel zooms and the axes pan in the browser without a round trip.
The bars and lanes come from `charts.timeline_layout`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from fusionviz.analysis.summary import drawable_runs
from fusionviz.charts.customdata import Fields
from fusionviz.charts.style import (
    BREAK_COLOUR,
    CHAR_EM,
    CLASS_COLOURS,
    CPU_COLOURS,
    DEFAULT_SETTINGS,
    REGION_FILL,
    ChartSettings,
    restyled_layout,
    style,
)
from fusionviz.charts.timeline_layout import (
    CALL_W,
    CPU_W,
    KERNEL_W,
    REGION_W,
    STREAM_GAP,
    Lane,
    break_markers,
    in_window,
    kernels_in_window,
    latency_marks,
    matching_kernels,
    timeline_lanes,
)
from fusionviz.records.kernels import KERNEL_CLASSES, short_name
from fusionviz.records.session import Session

if TYPE_CHECKING:
    from fusionviz.analysis.timing import Estimate

SVG_BARS = 4_000  # up to this many bars, SVG bars (as drawn since the first version); more: a level of detail
DETAIL_KERNELS = 6_000  # a large timeline's window with at most this many kernels draws each one; more: slices
BINS = 1_200  # time slices per lane when aggregated
HIGHLIGHT_COLOUR = "#D62728"
REGIONS_DRAWN = 200  # compiled regions shaded at most on a large timeline
# Up to this many kernels in a window, each can be clicked (invisible SVG markers carry the click): 2,142 such
# markers took 0.28 s of a 0.49 s redraw in Chromium here (benchmarks/RESULTS.md), WebGL ones longer still.
CLICK_KERNELS = 400
LATENCY_COLOUR, LATENCY_SPREAD = "#111111", "rgba(17, 17, 17, 0.2)"  # the timed call's strip, its p10–p90 band
LATENCY_W, SPREAD_W = 0.05, 0.13  # their heights, in the gap above a mode's kernels (timeline_layout.LATENCY_Y)
MEASURED = "measured latency (timed, unprofiled)"


# The customdata of each kind of trace, by name (columns of the bars, `charts.timeline_layout`). A click names
# the kernel by (mode, row) and `kind` says it is one; a hover shows the true duration, the start within the
# iteration and the iteration (a horizontal bar's %{x} is where it ends); `about`, where a kernel came from
# (`_about`).
BAR = Fields(("mode", "row", "name", "grid", "block", "input_shapes", "about", "kind", "dur_us", "at_us",
              "iteration"))
CLICK = Fields(("mode", "row", "kind"))  # the invisible markers a large timeline's kernels are clicked by
CELL = Fields(("dur_us", "at_us", "iteration"))  # a large timeline's cells, as float32
SLICE = Fields(("starts", "from_us", "to_us"))  # a time slice: the bars starting in it, and its edges
BREAK = Fields(("reason", "where"))
LATENCY = Fields(("mode", "median_us", "low_us", "high_us"))
_KERNEL_HOVER = BAR.template("<b>%{name}</b><br>%{mode} · %{kind}<br>duration %{dur_us:.1f} µs, start %{at_us:.1f} "
                             "µs in iteration %{iteration}<br>grid %{grid}  block %{block}<br>inputs %{input_shapes}"
                             "%{about}<extra></extra>")
_CPU_HOVER = BAR.template("<b>%{name}</b><br>%{mode} · CPU %{kind}<br>duration %{dur_us:.1f} µs, start %{at_us:.1f} "
                          "µs in iteration %{iteration}<extra></extra>")


def _bar(rows: pd.DataFrame, name: str, colour: str, width: float, hover: str, *, legend: bool = True,
         line: str | None = None) -> go.Bar:
    return go.Bar(
        base=rows.start_us.to_numpy(), x=rows.dur_us.to_numpy(), y=rows.y.to_numpy(), orientation="h",
        width=width, name=name, marker={"color": colour, "line": {"width": 0.6 if line else 0, "color": line}},
        customdata=BAR.of(rows.assign(about=_about(rows))), meta=BAR.meta, hovertemplate=hover, showlegend=legend,
        legendgroup=name,
    )


def _about(rows: pd.DataFrame) -> pd.Series:
    """Each kernel's hover line on where it came from: its origin where the session recorded one (Inductor's
    records, eager's op lines), else the ops read off the names (a session before provenance, a plain trace);
    nothing where neither says."""
    named = ("<br>ops (from names): " + rows.fused_ops).where(rows.fused_ops != "", "")
    return ("<br>origin: " + rows.origin).where(rows.origin != "", named)


def timeline_figure(session: Session, bars: pd.DataFrame, settings: ChartSettings = DEFAULT_SETTINGS,
                    title: str | None = None, *, window: tuple[float, float] | None = None,
                    search: str = "", latencies: Mapping[str, Estimate] | None = None) -> go.Figure:
    """One block per mode, eager on top: kernels coloured by class, a thin CPU lane under them, compiled
    regions shaded and graph breaks marked, on one numeric µs axis shared by all modes. Kernels whose name
    contains `search` (any case) are marked. Large timelines are drawn at a level of detail within `window` (µs on
    the shared axis; everything when None), every kernel or time slices as the window's kernel count allows.
    Each mode in `latencies` (the Report's) gets its measured latency per call as a strip above its kernels, from
    the start of each iteration drawn, its p10–p90 shaded: a timed call beside the profiled one."""
    lanes = timeline_lanes(session, bars)
    text = title or "Kernel timeline: one steady iteration per mode"
    if len(bars) > SVG_BARS:
        fig = _large_figure(session, bars, lanes, window)
    else:
        fig = _svg_figure(session, bars)
    marks = latency_marks(lanes, bars, latencies or {})
    _add_latencies(fig, marks, settings.font_size - 3)
    bottom = max(lane.y for lane in lanes) if lanes else 0.0
    fig.update_yaxes(tickvals=[lane.y for lane in lanes], ticktext=[lane.label for lane in lanes],
                     autorange="reversed", showgrid=False, zeroline=False, range=[bottom + 0.5, -0.6])
    fig.update_xaxes(title_text="µs from the start of the iteration", showgrid=True, gridcolor="#EEEEEE",
                     rangemode="tozero")
    if window is not None and len(bars) > SVG_BARS:
        fig.update_xaxes(range=list(window), rangemode="normal")
    elif (end := label_room(bars, marks, settings.font_size - 3, settings.plot_px)) is not None:
        fig.update_xaxes(range=[0, end])
    # Zoomed out, a box drawn on the chart asks for the kernels in it (`select`); once each kernel can be clicked
    # a box zooms in the browser and a click selects a kernel (Streamlit ignores clicks while boxes select).
    fig.update_layout(barmode="overlay", bargap=0, clickmode="event+select",
                      dragmode="zoom" if clickable(bars, window) else "select")
    fig = style(fig, settings, text, _height(session, lanes, settings))
    return highlight(fig, session, bars, search, window=window) if search.strip() else fig


def _height(session: Session, lanes: list[Lane], settings: ChartSettings) -> int:
    """A block of `lane_px` per mode, half as much for each further stream's lane, and the title's room."""
    blocks = len(drawable_runs(session))
    extra = max(len(lanes) - 2 * blocks, 0)  # further streams' lanes
    return 150 + settings.title_size + settings.lane_px * max(blocks, 1) + round(settings.lane_px * 0.5 * extra)


def timeline_layout(fig: go.Figure, session: Session, bars: pd.DataFrame,
                    settings: ChartSettings) -> dict[str, Any]:
    """The layout (Plotly JSON) of a timeline `timeline_figure` drew from these bars, for other settings
    (presentation mode): the bars are not drawn again."""
    return restyled_layout(fig, settings, _height(session, timeline_lanes(session, bars), settings))


def highlight(fig: go.Figure, session: Session, bars: pd.DataFrame, search: str, *,
              window: tuple[float, float] | None = None) -> go.Figure:
    """A copy of `fig` (drawn by `timeline_figure` from these bars and window) with the kernels whose name
    contains `search` (any case) marked in red, as bars, cells or time slices like the figure's own: a search adds
    one layer to a figure already drawn instead of drawing it again."""
    matches = matching_kernels(in_window(bars, window) if len(bars) > SVG_BARS else bars, search)
    if not len(matches):
        return fig
    out = go.Figure(fig)
    label = f"matches “{search.strip()}”"
    level = level_of_detail(bars, window)
    if level == "svg":
        mark = _bar(matches, label, "rgba(0,0,0,0)", KERNEL_W, _KERNEL_HOVER)
        mark.marker.line = {"width": 2.5, "color": HIGHLIGHT_COLOUR}
        mark.hoverinfo, mark.hovertemplate = "skip", None
        out.add_trace(mark)
    elif level == "kernels":
        for y in sorted(matches.y.unique()):
            rows = matches[matches.y == y]
            out.add_trace(_cells(rows, _band(float(y), KERNEL_W), np.zeros(len(rows)), [HIGHLIGHT_COLOUR], label))
    else:
        lanes = [lane for lane in timeline_lanes(session, bars) if lane.kind == "kernel"]
        out.add_trace(_bins_trace(matches, lanes, window, bars, label, colour=HIGHLIGHT_COLOUR))
    return out


def _svg_figure(session: Session, bars: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    regions = bars[bars.lane == "region"]
    if len(regions):
        # Not hoverable: the band lies under the kernel bars, and a click must pick the kernel.
        band = _bar(regions, "compiled region", REGION_FILL, REGION_W, _CPU_HOVER)
        band.hoverinfo, band.hovertemplate = "skip", None
        widths = _region_widths(bars, regions)
        if widths is not None:
            band.width = widths
        fig.add_trace(band)
    kernels = bars[bars.lane == "kernel"]
    for kernel_class in KERNEL_CLASSES:
        rows = kernels[kernels.kind == kernel_class]
        if len(rows):
            fig.add_trace(_bar(rows, kernel_class, CLASS_COLOURS[kernel_class], KERNEL_W, _KERNEL_HOVER,
                               line="white"))
    for category in ("op", "launch"):
        rows = bars[(bars.lane == "cpu") & (bars.kind == category)]
        if len(rows):
            fig.add_trace(_bar(rows, f"CPU {category}", CPU_COLOURS[category], CPU_W, _CPU_HOVER, line="white"))
    calls = bars[bars.lane == "graph_call"]
    if len(calls):
        fig.add_trace(_bar(calls, "compiled graph call", CPU_COLOURS["graph_call"], CALL_W, _CPU_HOVER))
    _add_breaks(fig, session, bars)
    return fig


def _region_widths(bars: pd.DataFrame, regions: pd.DataFrame) -> list[float] | None:
    """Band heights of compiled regions: a mode with several kernel lanes gets a taller band; None when every
    mode has one lane (one width for all, as before)."""
    kernels = bars[bars.lane == "kernel"]
    lanes = kernels.groupby("mode").stream.nunique() if len(kernels) else pd.Series(dtype=int)
    if len(lanes) == 0 or lanes.max() <= 1:
        return None
    return [REGION_W + (int(lanes.get(m, 1)) - 1) * STREAM_GAP for m in regions["mode"]]


def _add_breaks(fig: go.Figure, session: Session, bars: pd.DataFrame) -> None:
    breaks = break_markers(session, bars)
    if len(breaks):
        fig.add_trace(go.Scatter(
            x=breaks.x_us, y=breaks.y, mode="markers", name="graph break",
            marker={"symbol": "x-thin", "size": 14, "color": BREAK_COLOUR, "line": {"width": 3, "color": BREAK_COLOUR}},
            customdata=BREAK.of(breaks), meta=BREAK.meta,
            hovertemplate=BREAK.template("<b>graph break</b><br>%{reason}<br>%{where}<extra></extra>"),
        ))
        for x in breaks.x_us:
            fig.add_vline(x=x, line={"color": BREAK_COLOUR, "width": 1, "dash": "dot"})


def _add_latencies(fig: go.Figure, marks: pd.DataFrame, font_size: int) -> None:
    """The measured latency strips (`timeline_layout.latency_marks`): the p10–p90 band under the median's strip,
    each mode's first labelled at its end in `font_size` (smaller than the lanes', to fit the gap between two
    blocks), one legend entry for all three, the figures in the strip's hover."""
    if not len(marks):
        return
    first = marks.drop_duplicates("mode")
    fig.add_trace(go.Bar(base=marks.start_us + marks.low_us, x=marks.high_us - marks.low_us, y=marks.y,
                         orientation="h", width=SPREAD_W, marker={"color": LATENCY_SPREAD, "line": {"width": 0}},
                         name=MEASURED, legendgroup=MEASURED, showlegend=False, hoverinfo="skip"))
    fig.add_trace(go.Bar(base=marks.start_us, x=marks.median_us, y=marks.y, orientation="h", width=LATENCY_W,
                         marker={"color": LATENCY_COLOUR, "line": {"width": 0}}, name=MEASURED, legendgroup=MEASURED,
                         customdata=LATENCY.of(marks), meta=LATENCY.meta,
                         hovertemplate=LATENCY.template(f"<b>{MEASURED}: %{{median_us:.1f}} µs</b><br>%{{mode}}, "
                                                        "median per call; p10–p90 %{low_us:.1f}–%{high_us:.1f} µs "
                                                        "(shaded)<extra></extra>")))
    fig.add_trace(go.Scatter(x=first.start_us + first.high_us, y=first.y, mode="text", textposition="middle right",
                             text=[timed_label(us) for us in first.median_us], name=MEASURED,
                             textfont={"size": font_size, "color": LATENCY_COLOUR},
                             legendgroup=MEASURED, showlegend=False, hoverinfo="skip"))


def timed_label(us: float) -> str:
    """The words at the end of a mode's first latency strip."""
    return f" timed call {us:,.0f} µs"


def label_room(bars: pd.DataFrame, marks: pd.DataFrame, font_size: int, plot_px: int) -> float | None:
    """Where the x axis must end for every timed-call label (written after its strip's p90, `timed_label`) to fit
    inside the plot, laid out `plot_px` wide; None where the data's own end leaves room. A strip that ends the
    drawing (a mode whose timed call outlasts its profiled kernels) had its label cut at the chart's edge."""
    if not len(marks):
        return None
    first = marks.drop_duplicates("mode")
    ends = [float((marks.start_us + marks.high_us).max())]
    if len(bars):
        ends.append(float((bars.start_us + bars.dur_us).max()))
    need = 0.0
    for start, median in zip(first.start_us + first.high_us, first.median_us, strict=True):
        share = len(timed_label(float(median))) * CHAR_EM * font_size / plot_px  # of the plot's width
        need = max(need, float(start) / (1 - min(share, 0.5)))
    return need if need > max(ends) else None


def clickable(bars: pd.DataFrame, window: tuple[float, float] | None) -> bool:
    """Whether each kernel drawn in `window` can be clicked: SVG bars always, cells once at most CLICK_KERNELS
    are in the window (until then a box drawn on the chart narrows the window instead of zooming)."""
    return len(bars) <= SVG_BARS or kernels_in_window(bars, window) <= min(CLICK_KERNELS, DETAIL_KERNELS)


def level_of_detail(bars: pd.DataFrame, window: tuple[float, float] | None) -> str:
    """"svg" (few bars: every bar as SVG), "kernels" (every kernel in the window, as cells) or "bins" (time
    slices): what `timeline_figure` draws for these bars in this window."""
    if len(bars) <= SVG_BARS:
        return "svg"
    return "kernels" if kernels_in_window(bars, window) <= DETAIL_KERNELS else "bins"


_CPU_KINDS = ("op", "launch", "graph_call")


def _colourscale(colours: list[str]) -> list[list[Any]]:
    """A discrete colour scale: code i (of len(colours)) is drawn in colours[i]."""
    n = len(colours)
    scale: list[list[Any]] = []
    for i, colour in enumerate(colours):
        scale += [[i / n, colour], [(i + 1) / n, colour]]
    return scale


def _band(y: float, width: float) -> list[float]:
    """A lane's band on the y axis, as a one-row heatmap's edges: `width` high around `y`, as its SVG bars are.
    Given its centre alone, a one-row heatmap is a whole unit high and covers the lanes above and below."""
    return [y - width / 2, y + width / 2]


def _cells(rows: pd.DataFrame, band: list[float], codes: np.ndarray, colours: list[str], name: str,
           hover: Literal["kernel", "cpu"] | None = None) -> go.Heatmap:
    """One lane's bars as the cells of a one-row heatmap within the lane's `band` (`_band`): cell edges at every
    bar's start and end, a bar's cell coloured by its code, the gaps between bars empty. The browser draws it as
    one image, so it redraws a zoom or a pan of thousands of bars in a fraction of what SVG bars or WebGL lines
    take.

    `hover` gives each bar its hover (else the lane's hover comes from elsewhere, the kernels' click markers):
    names and classes as text, the lane's mode in the template, the numbers as a binary float32 array the
    template formats. Every byte of a figure is sent, parsed and re-themed twice by Streamlit on each redraw;
    written out in full, the hovers were two thirds of a large one-iteration figure."""
    order = np.argsort(rows.start_us.to_numpy(dtype=float), kind="stable")
    starts = rows.start_us.to_numpy(dtype=float)[order]
    ends = starts + rows.dur_us.to_numpy(dtype=float)[order]
    edges = np.empty(2 * len(starts))
    edges[0::2], edges[1::2] = starts, ends
    edges = np.maximum.accumulate(edges)  # a bar inside the previous one (overlap) keeps its start, ends there
    z = np.full(len(edges) - 1, np.nan, dtype=np.float32)  # class codes, gaps NaN: four bytes a cell suffice
    z[0::2] = codes[order]
    cells = go.Heatmap(x=edges, y=band, z=z[None, :], zmin=0, zmax=len(colours), colorscale=_colourscale(colours),
                       showscale=False, hoverongaps=False, name=name, hoverinfo="skip")
    if hover is not None:
        shown = rows.iloc[order]
        labels = np.full(len(edges) - 1, "", dtype=object)
        labels[0::2] = _labels(shown, hover)
        numbers = np.full((len(edges) - 1, 3), np.nan, dtype=np.float32)
        numbers[0::2] = shown[list(CELL.names)].to_numpy(dtype=np.float32)
        mode = str(shown["mode"].iloc[0]).replace("%{", "%\u200b{") if len(shown) else ""  # one mode's lane;
        # a mode named like a template field is shown as written
        numbers_hover = CELL.template("<br>duration %{dur_us:.1f} µs, start %{at_us:.1f} µs in iteration "
                                      "%{iteration}<extra></extra>")
        cells.update(text=labels[None, :], customdata=numbers[None, :, :], meta=CELL.meta, hoverinfo=None,
                     hovertemplate=f"%{{text}} · {mode}{numbers_hover}")
    return cells


def _labels(rows: pd.DataFrame, hover: Literal["kernel", "cpu"]) -> np.ndarray:
    """The words of each bar's hover: its name (a kernel's short name) and class or CPU category."""
    names = rows.name.map(short_name) if hover == "kernel" else rows.name
    lane = "" if hover == "kernel" else "CPU "
    return np.array([f"<b>{name}</b><br>{lane}{kind}" for name, kind in zip(names, rows.kind, strict=True)],
                    dtype=object)


def _kernel_text(rows: pd.DataFrame) -> np.ndarray:
    """A kernel's whole hover as text, for the click markers (a scatter's customdata holds its click ids)."""
    return np.array([f"<b>{short}</b><br>{mode} · {kind}<br>duration {dur:.1f} µs, start {at:.1f} µs in iteration "
                     f"{it}{about}"
                     for short, mode, kind, dur, at, it, about in zip(rows.name.map(short_name), rows["mode"],
                                                                      rows.kind, rows.dur_us, rows.at_us,
                                                                      rows.iteration, _about(rows), strict=True)],
                    dtype=object)


def _large_figure(session: Session, bars: pd.DataFrame, lanes: list[Lane],
                  window: tuple[float, float] | None) -> go.Figure:
    """Kernels in the window one by one (heatmap cells per lane, invisible markers to click), or time slices."""
    fig = go.Figure()
    shown = in_window(bars, window)
    kernels = shown[shown.lane == "kernel"]
    if len(kernels) <= DETAIL_KERNELS:
        classes = {c: i for i, c in enumerate(KERNEL_CLASSES)}
        colours = [CLASS_COLOURS[c] for c in KERNEL_CLASSES]
        clickable = len(kernels) <= CLICK_KERNELS  # else the cells carry the hover, and a zoom makes them clickable
        for y in sorted(kernels.y.unique()):
            rows = kernels[kernels.y == y]
            codes = rows.kind.map(classes).fillna(classes["other"]).to_numpy(dtype=float)
            fig.add_trace(_cells(rows, _band(float(y), KERNEL_W), codes, colours, "kernels",
                                 None if clickable else "kernel"))
        cpu = shown[shown.lane.isin(["cpu", "graph_call"])]
        kinds = {k: i for i, k in enumerate(_CPU_KINDS)}
        for y in sorted(cpu.y.unique()):
            rows = cpu[cpu.y == y]
            calls = (rows.lane == "graph_call").all()  # graph calls: a strip of their own under the CPU lane
            codes = rows.kind.where(rows.lane != "graph_call", "graph_call").map(kinds).fillna(0).to_numpy(dtype=float)
            fig.add_trace(_cells(rows, _band(float(y), CALL_W if calls else CPU_W), codes,
                                 [CPU_COLOURS[k] for k in _CPU_KINDS], "CPU", "cpu"))
        if clickable:
            # Invisible markers at the kernels' middles carry their hover, and a click there selects the kernel
            # (heatmap cells cannot be selected).
            fig.add_trace(go.Scatter(x=kernels.start_us + kernels.dur_us / 2, y=kernels.y, mode="markers",
                                     marker={"size": 16, "color": "rgba(0,0,0,0)"},
                                     customdata=CLICK.of(kernels), meta=CLICK.meta, hovertext=_kernel_text(kernels),
                                     hovertemplate="%{hovertext}<extra></extra>", showlegend=False, name="click"))
        # Legend entries, named as the SVG bars' are: the cells carry no legend of their own.
        entries = [(c, CLASS_COLOURS[c]) for c in KERNEL_CLASSES if (kernels.kind == c).any()]
        ops = cpu[cpu.lane == "cpu"]
        entries += [(f"CPU {k}", CPU_COLOURS[k]) for k in ("op", "launch") if (ops.kind == k).any()]
        if (cpu.lane == "graph_call").any():
            entries.append(("compiled graph call", CPU_COLOURS["graph_call"]))
        for name, colour in entries:
            fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                     marker={"symbol": "square", "size": 12, "color": colour}))
    else:
        fig.add_trace(_bins_trace(shown[shown.lane.isin(["kernel", "cpu"])], lanes, window, bars, "busy"))
    regions = shown[shown.lane == "region"]
    for region in regions.iloc[:REGIONS_DRAWN].itertuples():
        fig.add_vrect(x0=region.start_us, x1=region.start_us + region.dur_us, fillcolor=REGION_FILL, line_width=0,
                      layer="below")
    _add_breaks(fig, session, shown)
    return fig


def lane_bins(rows: pd.DataFrame, lane_ys: list[float], edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each lane (by its y) and each time slice between consecutive `edges`: the fraction of the slice
    its bars cover (summed, so overlapping bars count twice, capped at 1) and how many bars start in it.

    The covered time up to t is Σ over bars of clip(t − start, 0, dur): evaluated at every edge from the
    bars' sorted starts and ends, in O((bars + edges) · log bars)."""
    busy = np.zeros((len(lane_ys), len(edges) - 1))
    counts = np.zeros((len(lane_ys), len(edges) - 1), dtype=int)
    widths = np.diff(edges)
    for i, y in enumerate(lane_ys):
        mine = rows[rows.y == y]
        if not len(mine):
            continue
        starts = np.sort(mine.start_us.to_numpy(dtype=float))
        ends = np.sort((mine.start_us + mine.dur_us).to_numpy(dtype=float))
        covered = _covered(starts, edges) - _covered(ends, edges)
        busy[i] = np.minimum(np.diff(covered) / widths, 1.0)
        counts[i] = np.histogram(starts, bins=edges)[0]
    return busy, counts


def _covered(points: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Σ over points p < t of (t − p), at each t in edges (points sorted)."""
    before = np.searchsorted(points, edges, side="left")
    sums = np.concatenate([[0.0], np.cumsum(points)])
    return edges * before - sums[before]


def _stacked(bands: list[list[float]]) -> tuple[list[float], list[int]]:
    """The row edges of one heatmap holding each band (low, high; in order, apart) in a row of its own, an empty
    row in each gap between two bands, and the row of each band."""
    edges: list[float] = []
    rows: list[int] = []
    for low, high in bands:
        if not edges or low > edges[-1]:
            edges.append(low)
        rows.append(len(edges) - 1)
        edges.append(high)
    return edges, rows


def _bins_trace(rows: pd.DataFrame, lanes: list[Lane], window: tuple[float, float] | None, bars: pd.DataFrame,
                what: str, colour: str | None = None) -> go.Heatmap:
    if window is None:
        window = (float(bars.start_us.min()), float((bars.start_us + bars.dur_us).max()))
    edges = np.linspace(window[0], window[1], BINS + 1)
    lanes = sorted(lanes, key=lambda lane: lane.y)
    busy, counts = lane_bins(rows, [lane.y for lane in lanes], edges)
    # Each lane in a band as high as its bars (the matches' narrower), the rows between the bands empty.
    narrow = 1.0 if colour is None else 0.4
    y_edges, at = _stacked([_band(lane.y, narrow * (KERNEL_W if lane.kind == "kernel" else CPU_W))
                            for lane in lanes])
    z = np.full((len(y_edges) - 1, BINS), np.nan)
    z[at] = np.where(busy > 0, busy, np.nan)
    placed = np.zeros((len(y_edges) - 1, BINS), dtype=int)
    placed[at] = counts
    centres = (edges[:-1] + edges[1:]) / 2
    starts, ends = np.broadcast_to(edges[:-1], placed.shape), np.broadcast_to(edges[1:], placed.shape)
    custom = np.dstack([placed, starts, ends])  # SLICE's fields, in its order
    return go.Heatmap(
        x=centres, y=y_edges, z=z, zmin=0, zmax=1, hoverongaps=False,
        colorscale=[[0, "#C9D7EA"], [1, "#1F3F6E"]] if colour is None else [[0, colour], [1, colour]],
        showscale=False, name=f"{what} (time slices)", customdata=custom, meta=SLICE.meta,
        hovertemplate=SLICE.template("%{z:.0%} busy from %{from_us:.1f} to %{to_us:.1f} µs"
                                     "<br>%{starts} start here · drag a box to see each one<extra></extra>"))


def clicked_kernel(point: Mapping[str, Any] | None) -> tuple[str, int] | None:
    """The (mode, kernel row) of a clicked point (its customdata by field name), if the point is a kernel."""
    if point and point.get("kind") in CLASS_COLOURS and "mode" in point and "row" in point:
        return str(point["mode"]), int(point["row"])
    return None
