"""Each kernel of one profiled iteration against the device's measured ceilings, eager and the compiled mode in two
colours, each kernel a dot whose area is its time.

Where FLOPs are counted (GEMMs, convolutions, attention) it is a roofline: log–log, arithmetic intensity (FLOP per
byte moved) on x, achieved FLOP/s on y, under the measured memory roof (intensity × copy bandwidth: DRAM's, and
each cache's for the working sets that fit in it) and the measured compute roof of each dtype (a large matmul's
rate). Kernels without counted FLOPs (elementwise, reductions, norms, copies) cannot stand on a roofline: they are
drawn on a chart of their own under its own name, bandwidth (achieved GB/s against the working set), under the
copy bandwidth of the level each working set fits in. A run with no counted FLOPs at all (a pointwise chain) gets
that chart alone, and the figure says why there is no roofline.

A dot above its roof is never left without a word: it is ringed, and a note says how far above and why that can
happen (a roof is the best rate the calibration reached, not the hardware's limit).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.bytes_moved import size_words
from fusionviz.analysis.kernel_costs import (
    FLOPS_COUNTED,
    UNMEASURED,
    MemoryRoof,
    memory_roof,
    memory_roofs,
    roofline_runs,
)
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import (
    DEFAULT_SETTINGS,
    EAGER_COLOUR,
    ChartSettings,
    legend_below,
    log_ticks,
    si_number,
    style,
)
from fusionviz.records.ceilings import Ceilings

COMPILED_COLOUR = "#F58518"
NOTE_COLOUR = "#6B7280"
ROOF_COLOUR, CACHE_ROOF_COLOUR, COMPUTE_ROOF_COLOUR = "#333333", "#8C8C8C", "#4C78A8"
ABOVE_COLOUR = "#D62728"
DOT_PX = (8, 56)  # the smallest dot's and the longest kernel's diameter
NOTE_CHARS = 72
ROOFLINE, BANDWIDTH = "roofline", "bandwidth"
CACHE_DASHES = ("dash", "dot", "dashdot")  # the caches' roofs, smallest first; DRAM's is solid
PANEL_TITLES = {ROOFLINE: "Roofline: kernels with counted FLOPs", BANDWIDTH: "Bandwidth: kernels without FLOPs"}


@dataclass(frozen=True)
class Dot:
    """One kernel: its time (µs, and its share of its run's kernel time in the iteration), its working set (bytes
    read plus written, counted once), its achieved rates (TFLOP/s None where its FLOPs are not counted), and its
    percentage of the roof it is held to (`roof`, as `kernel_costs.Achieved` names it)."""

    mode: str
    name: str
    dur_us: float
    share: float
    bytes: int
    gbps: float
    tflops: float | None
    pct_of_ceiling: float | None
    roof: str = ""

    @property
    def intensity(self) -> float | None:
        """FLOP per byte moved."""
        return self.tflops * 1e3 / self.gbps if self.tflops and self.gbps > 0 else None

    @property
    def panel(self) -> str:
        return ROOFLINE if self.tflops else BANDWIDTH

    @property
    def above(self) -> bool:
        """Whether it ran faster than the roof it is held to."""
        return self.pct_of_ceiling is not None and self.pct_of_ceiling > 100.0


def roofline_dots(report: Report, mode: str | None) -> list[Dot]:
    """The representative iteration's kernels with known bytes, of eager and of `mode` (default: the first
    compiled mode that ran). A kernel that moves no bytes has no place on a log axis of bytes, nor a rate; one
    that computed in a precision whose ceiling was not measured (TF32) has no roof to be drawn under
    (`unjudged`): both are left out."""
    dots = []
    for run in roofline_runs(report.session.run("eager"), report.focus(mode), report.costs):
        assert run.summary is not None
        figures, iteration = report.costs[run.mode], run.summary.representative_iteration
        rows = [(r, c, a) for r, c, a in zip(run.kernels, figures.costs, figures.achieved, strict=True)
                if r.iteration == iteration and c is not None and a is not None and c.total > 0
                and not a.roof.endswith(UNMEASURED)]
        total = sum(float(r.dur_us) for r, _, _ in rows) or 1.0
        dots += [Dot(run.mode, r.short_name or r.name, float(r.dur_us), float(r.dur_us) / total, c.total, a.gbps,
                     a.tflops, a.pct_of_ceiling, a.roof) for r, c, a in rows]
    return dots


def roofline_figure(report: Report, mode: str | None = None, settings: ChartSettings = DEFAULT_SETTINGS
                    ) -> go.Figure:
    """The roofline where a kernel shown has counted FLOPs, beside the bandwidth chart where a kernel has none;
    the bandwidth chart alone, titled so, where no kernel has FLOPs."""
    session = report.session
    dots = roofline_dots(report, mode)
    ceilings, dtype = session.ceilings, session.config.dtype
    panels = [p for p in (ROOFLINE, BANDWIDTH) if any(d.panel == p for d in dots)] or [BANDWIDTH]
    widths = [0.56, 0.44] if len(panels) == 2 else [1.0]
    fig = make_subplots(rows=1, cols=len(panels), column_widths=widths, horizontal_spacing=0.1,
                        subplot_titles=[PANEL_TITLES[p] for p in panels] if len(panels) == 2 else None)
    col = {p: i + 1 for i, p in enumerate(panels)}
    longest = max((d.dur_us for d in dots), default=1.0)
    for run_mode in dict.fromkeys(d.mode for d in dots):
        colour = EAGER_COLOUR if run_mode == "eager" else COMPILED_COLOUR
        shown = False
        for panel in panels:
            mine = [d for d in dots if d.mode == run_mode and d.panel == panel]
            if not mine:
                continue
            fig.add_trace(go.Scatter(
                x=[d.intensity if panel == ROOFLINE else d.bytes for d in mine],
                y=[(d.tflops or 0.0) * 1e12 if panel == ROOFLINE else d.gbps for d in mine], mode="markers",
                name=run_mode, legendgroup=run_mode, showlegend=not shown,
                marker={"color": colour, "size": [_diameter(d.dur_us, longest) for d in mine], "opacity": 0.8,
                        "line": {"width": [3 if d.above else 1 for d in mine],
                                 "color": [ABOVE_COLOUR if d.above else "#333333" for d in mine]}},
                hovertext=[_hover(d, ceilings) for d in mine], hovertemplate="%{hovertext}<extra></extra>"),
                row=1, col=col[panel])
            shown = True
    if any(d.above for d in dots):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="above its measured roof",
                                 marker={"color": "white", "size": 14, "line": {"width": 3, "color": ABOVE_COLOUR}},
                                 hoverinfo="skip"))
    if ROOFLINE in col:
        _roofline_axes(fig, [d for d in dots if d.panel == ROOFLINE], ceilings, dtype, col[ROOFLINE])
    _bandwidth_axes(fig, [d for d in dots if d.panel == BANDWIDTH], ceilings, col[BANDWIDTH])
    notes = [n for n in (_no_roofline_note(report, mode, dots), above_note(dots), unjudged_note(report, mode)) if n]
    # in the bottom right corner, stacked upwards: under the roofs, where slow kernels of high intensity and
    # bandwidths far below the copy's would be, and a chart rarely has any
    lift = 0
    for note in notes:
        lines = textwrap.wrap(note, NOTE_CHARS)
        fig.add_annotation(text="<br>".join(lines), x=1, xref="paper", xanchor="right", y=0, yref="paper",
                           yanchor="bottom", yshift=lift, showarrow=False, align="left",
                           bgcolor="rgba(255, 255, 255, 0.9)", bordercolor=NOTE_COLOUR, borderpad=6,
                           font={"color": NOTE_COLOUR, "size": settings.font_size})
        lift += round((len(lines) * 1.3 + 1.2) * settings.font_size)
    if ceilings is None:
        title = "Each kernel's rate (no measured ceilings in this session)"
    elif ROOFLINE in col:
        title = f"Roofline: each kernel under the measured roofs ({dtype})"
    else:
        title = ("Bandwidth of each kernel: no roofline (no measured ceiling for TF32)" if unjudged(report, mode)
                 else "Bandwidth of each kernel: no counted FLOPs, so no roofline")
    fig = legend_below(style(fig, settings, title, settings.chart_px + 160))
    fig.update_annotations(selector={"text": PANEL_TITLES[ROOFLINE]}, font_size=settings.font_size)
    fig.update_annotations(selector={"text": PANEL_TITLES[BANDWIDTH]}, font_size=settings.font_size)
    return fig


def _diameter(dur_us: float, longest: float) -> float:
    """A dot's diameter in px: its area in proportion to the kernel's time, the longest kernel DOT_PX[1] wide."""
    return max(DOT_PX[0], DOT_PX[1] * math.sqrt(dur_us / longest)) if longest > 0 else DOT_PX[0]


def _roofline_axes(fig: go.Figure, dots: list[Dot], ceilings: Ceilings | None, dtype: str, col: int) -> None:
    """Log–log axes with full-size ticks, the memory roofs (DRAM solid, caches dashed) up to their ridge, and the
    compute roof of the run's dtype (its matmul rate as measured) from there on, each named in the legend."""
    xs = [d.intensity or 1.0 for d in dots]
    ys = [(d.tflops or 0.0) * 1e12 for d in dots]
    rate = ceilings.matmul_tflops.get(dtype) if ceilings is not None else None
    peak = rate * 1e12 if rate else None
    roofs = memory_roofs(ceilings) if ceilings is not None else []
    ridges = [peak / (r.gbps * 1e9) for r in roofs] if peak else []
    x_low, x_high = min([*xs, *ridges]) / 10, max([*xs, *ridges]) * 10
    y_low = min([*ys, *(x_low * r.gbps * 1e9 for r in roofs)]) / 2
    y_high = max([*ys, *([peak] if peak else [])]) * 2
    for roof in roofs:  # each memory roof up to its ridge, where it meets the compute roof
        ridge = min(x_high, (peak or y_high) / (roof.gbps * 1e9))
        fig.add_trace(go.Scatter(
            x=[x_low, ridge], y=[x_low * roof.gbps * 1e9, ridge * roof.gbps * 1e9], mode="lines",
            name=_roof_name(roof), line=_roof_line(roof, roofs), hovertemplate=f"{_roof_name(roof)}<extra></extra>"),
            row=1, col=col)
    if peak:
        name = f"{dtype} matmul {si_number(peak, 'FLOP/s')} (measured)"
        fig.add_trace(go.Scatter(x=[min([*ridges, x_high]), x_high], y=[peak, peak], mode="lines", name=name,
                                 line={"color": COMPUTE_ROOF_COLOUR, "width": 2},
                                 hovertemplate=f"{name}<extra></extra>"), row=1, col=col)
    tickvals, ticktext = log_ticks(x_low, x_high)
    fig.update_xaxes(type="log", title_text="FLOP per byte moved", tickvals=tickvals, ticktext=ticktext,
                     range=[math.log10(x_low), math.log10(x_high)], gridcolor="#EEEEEE", row=1, col=col)
    tickvals, ticktext = log_ticks(y_low, y_high)
    fig.update_yaxes(type="log", title_text="achieved FLOP/s", tickvals=tickvals, ticktext=ticktext,
                     range=[math.log10(y_low), math.log10(y_high)], gridcolor="#EEEEEE", row=1, col=col)


def _bandwidth_axes(fig: go.Figure, dots: list[Dot], ceilings: Ceilings | None, col: int) -> None:
    """Working set on a log x axis, achieved GB/s on a linear one from zero, under the copy bandwidth of each
    level: a step down at each cache's capacity."""
    sizes: list[float] = [float(d.bytes) for d in dots] or [1e6]
    roofs = memory_roofs(ceilings) if ceilings is not None else []
    edges = [r.holds_bytes for r in roofs if r.holds_bytes is not None]
    x_low, x_high = min([*sizes, *edges]) / 3, max([*sizes, *edges]) * 3
    start = x_low
    for roof in roofs:
        end = x_high if roof.holds_bytes is None else roof.holds_bytes
        if end > start:
            fig.add_trace(go.Scatter(
                x=[start, end], y=[roof.gbps, roof.gbps], mode="lines", name=_roof_name(roof),
                showlegend=not any(t.name == _roof_name(roof) for t in fig.data), line=_roof_line(roof, roofs),
                hovertemplate=f"{_roof_name(roof)}<extra></extra>"), row=1, col=col)
            start = end
    tickvals, ticktext = log_ticks(x_low, x_high, "B")
    fig.update_xaxes(type="log", title_text="working set: bytes read + written", tickvals=tickvals,
                     ticktext=ticktext, range=[math.log10(x_low), math.log10(x_high)], gridcolor="#EEEEEE", row=1,
                     col=col)
    top = max([d.gbps for d in dots] + [r.gbps for r in roofs] + [1.0])
    fig.update_yaxes(title_text="achieved GB/s", range=[0, top * 1.12], gridcolor="#EEEEEE", row=1, col=col)


def _roof_line(roof: MemoryRoof, roofs: list[MemoryRoof]) -> dict[str, object]:
    """DRAM's roof solid and dark; each cache's lighter, in a dash of its own."""
    if roof.holds_bytes is None:
        return {"color": ROOF_COLOUR, "dash": "solid", "width": 2}
    return {"color": CACHE_ROOF_COLOUR, "dash": CACHE_DASHES[roofs.index(roof) % len(CACHE_DASHES)], "width": 2}


def _roof_name(roof: MemoryRoof) -> str:
    if roof.holds_bytes is None:
        return f"DRAM copy {roof.gbps:,.0f} GB/s (measured)"
    return f"{roof.level} copy {roof.gbps:,.0f} GB/s (working sets ≤ {size_words(roof.holds_bytes)})"


def _ref(axis: str, col: int) -> str:
    return axis if col == 1 else f"{axis}{col}"


def unjudged(report: Report, mode: str | None) -> dict[str, int]:
    """The kernels of the representative iterations drawn that computed in a precision whose matmul ceiling the
    session did not measure, counted by that roof ("tf32 matmul: not measured": cuDNN's float32 convolutions)."""
    found: dict[str, int] = {}
    for run in roofline_runs(report.session.run("eager"), report.focus(mode), report.costs):
        assert run.summary is not None
        for row, got in zip(run.kernels, report.costs[run.mode].achieved, strict=True):
            if row.iteration == run.summary.representative_iteration and got and got.roof.endswith(UNMEASURED):
                found[got.roof] = found.get(got.roof, 0) + 1
    return found


def unjudged_note(report: Report, mode: str | None) -> str:
    """The words for the kernels `unjudged` leaves off the chart; "" for none."""
    return " ".join(f"{n} {'kernels' if n > 1 else 'kernel'} computed in {roof.split()[0].upper()}, whose ceiling "
                    "was not measured: not drawn." for roof, n in unjudged(report, mode).items())


def above_note(dots: list[Dot]) -> str:
    """The words for dots above their roof: how many, the highest, and why a measured roof can be passed; "" for
    none."""
    above = sorted((d for d in dots if d.above), key=lambda d: -(d.pct_of_ceiling or 0.0))
    if not above:
        return ""
    top = above[0]
    many = f"{len(above)} kernels run above their" if len(above) > 1 else "1 kernel runs above its"
    return (f"{many} measured roof (ringed; highest: {top.name} of {top.mode}, {top.pct_of_ceiling:.0f}% of the "
            f"{top.roof}). A roof is the best rate the calibration's copy or matmul reached, not a hard limit: a "
            "kernel passes it where part of its data is still in cache from the kernel before.")


def _no_roofline_note(report: Report, mode: str | None, dots: list[Dot]) -> str:
    """Why there is no roofline, where no kernel shown has counted FLOPs; "" where there is one, or where the
    kernels with FLOPs are left off for want of their precision's ceiling."""
    if any(d.panel == ROOFLINE for d in dots) or unjudged(report, mode):
        return ""  # a roofline, or kernels with FLOPs left off it: `unjudged_note` says why
    runs = roofline_runs(report.session.run("eager"), report.focus(mode), report.costs)
    which = " or ".join(r.mode for r in runs) or "this session"
    if not dots:
        return f"No kernel of {which} has known bytes: there is nothing to place against the ceilings."
    return f"No kernel of {which} has counted FLOPs. {FLOPS_COUNTED}"


def _hover(d: Dot, ceilings: Ceilings | None) -> str:
    lines = [f"<b>{d.mode}</b>: {d.name}", f"{d.dur_us:.1f} µs ({d.share:.0%} of the iteration's kernel time)",
             f"working set {size_words(d.bytes)}, {d.gbps:,.0f} GB/s"]
    if d.tflops and d.intensity:
        lines.append(f"{d.intensity:.1f} FLOP/byte, {d.tflops:.2f} TFLOP/s")
    if ceilings is not None and d.pct_of_ceiling is not None:
        level = memory_roof(ceilings, d.bytes)
        fits = "fits in no measured cache" if level.holds_bytes is None else \
            f"fits in {level.level} ({size_words(level.holds_bytes)})"
        lines.append(f"{d.pct_of_ceiling:.0f}% of {d.roof}; the working set {fits}")
    return "<br>".join(lines)


def draw_roofline(report: Report, asked: Asked) -> go.Figure:
    return roofline_figure(report, asked.mode, asked.settings)
