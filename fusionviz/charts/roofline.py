"""The roofline: each kernel of one profiled iteration as a dot, log-log, against the device's measured
ceilings. Left, kernels whose FLOPs are counted (GEMMs, convolutions, attention) at their arithmetic intensity
(FLOP per byte) and achieved TFLOP/s, under the roof min(matmul rate, intensity × copy bandwidth) with its ridge
point; right, the kernels bounded by memory alone (elementwise, reductions, norms, copies) at their bytes and
achieved GB/s, under the copy bandwidth. Dots are sized by their share of the iteration's kernel time; eager and
the compiled mode in two colours."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.kernel_costs import FLOPS_COUNTED, no_flops_note, roofline_runs
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, ChartSettings, legend_below, style

COMPILED_COLOUR = "#F58518"
NOTE_COLOUR = "#6B7280"


@dataclass(frozen=True)
class Dot:
    mode: str
    name: str
    dur_us: float
    share: float  # of its run's kernel time in the iteration
    bytes: int
    gbps: float
    tflops: float | None  # None: FLOPs not counted
    pct_of_ceiling: float | None


def roofline_dots(report: Report, mode: str | None) -> list[Dot]:
    """The representative iteration's kernels with known bytes, of eager and of `mode` (default: the first
    compiled mode that ran)."""
    dots = []
    for run in roofline_runs(report.session.run("eager"), report.focus(mode), report.costs):
        assert run.summary is not None
        figures, iteration = report.costs[run.mode], run.summary.representative_iteration
        rows = [(r, c, a) for r, c, a in zip(run.kernels, figures.costs, figures.achieved, strict=True)
                if r.iteration == iteration and c is not None and a is not None]
        total = sum(float(r.dur_us) for r, _, _ in rows) or 1.0
        dots += [Dot(run.mode, r.short_name or r.name, float(r.dur_us), float(r.dur_us) / total, c.total, a.gbps,
                     a.tflops, a.pct_of_ceiling) for r, c, a in rows]
    return dots


PANELS = {"flop": "kernels with FLOPs: TFLOP/s against FLOP per byte",
          "memory": "kernels bounded by memory: GB/s against bytes moved"}


def roofline_figure(report: Report, mode: str | None = None, settings: ChartSettings = DEFAULT_SETTINGS
                    ) -> go.Figure:
    """One panel per kind of kernel shown; where no kernel has counted FLOPs, the bandwidth panel alone and a
    note saying why (`kernel_costs.no_flops_note`) where the FLOP panel would be."""
    session = report.session
    dots = roofline_dots(report, mode)
    ceilings, dtype = session.ceilings, session.config.dtype
    flopless = no_flops_note(session.run("eager"), report.focus(mode), report.costs)
    panels = [p for p in PANELS if not (p == "flop" and flopless)]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[PANELS[p] for p in panels])
    col = {p: i + 1 for i, p in enumerate(panels)}
    modes = list(dict.fromkeys(d.mode for d in dots))
    shown: set[str] = set()
    for run_mode in modes:
        colour = EAGER_COLOUR if run_mode == "eager" else COMPILED_COLOUR
        for panel, mine in (("flop", [d for d in dots if d.mode == run_mode and d.tflops]),
                            ("memory", [d for d in dots if d.mode == run_mode and not d.tflops])):
            if not mine or panel not in col:
                continue
            x = [d.tflops * 1e12 / (d.gbps * 1e9) for d in mine if d.tflops] if panel == "flop" else \
                [d.bytes for d in mine]
            y = [d.tflops for d in mine] if panel == "flop" else [d.gbps for d in mine]
            fig.add_trace(go.Scatter(
                x=x, y=y, mode="markers", name=run_mode, legendgroup=run_mode, showlegend=run_mode not in shown,
                marker={"color": colour, "size": [8 + 40 * math.sqrt(d.share) for d in mine], "opacity": 0.75,
                        "line": {"width": 1, "color": "#333333"}},
                hovertext=[_hover(d) for d in mine], hovertemplate="%{hovertext}<extra></extra>"),
                row=1, col=col[panel])
            shown.add(run_mode)
    if ceilings is not None:
        peak = ceilings.matmul_tflops.get(dtype)
        bandwidth = ceilings.copy_gbps
        if peak and "flop" in col:
            ridge = peak * 1e12 / (bandwidth * 1e9)
            xs = [ridge / 1000, ridge, ridge * 1000]
            fig.add_trace(go.Scatter(x=xs, y=[min(peak, x * bandwidth / 1e3) for x in xs], mode="lines",
                                     line={"color": "#333333", "dash": "dash"}, name="measured roof",
                                     hovertemplate=f"roof: {bandwidth:.0f} GB/s, {peak:.1f} TFLOP/s {dtype}; ridge "
                                                   f"{ridge:.0f} FLOP/byte<extra></extra>"), row=1, col=col["flop"])
        # drawn as a line and a note of its own: add_hline places its note at log10 of nothing on a log axis
        axis = "" if col["memory"] == 1 else str(col["memory"])
        fig.add_hline(y=bandwidth, line_dash="dash", line_color="#333333", row=1, col=col["memory"])
        fig.add_annotation(text=f"copy {bandwidth:.0f} GB/s (measured)", x=0.5, xref=f"x{axis} domain",
                           y=math.log10(bandwidth), yref=f"y{axis}", yanchor="bottom", showarrow=False)
    for panel, (x_title, y_title) in (("flop", ("FLOP per byte", "TFLOP/s")), ("memory", ("bytes read + written",
                                                                                        "GB/s"))):
        if panel in col:
            fig.update_xaxes(type="log", row=1, col=col[panel], title_text=x_title)
            fig.update_yaxes(type="log", row=1, col=col[panel], title_text=y_title)
    if flopless:
        fig.add_annotation(text="<br>".join(textwrap.wrap(f"{flopless} {FLOPS_COUNTED}", 64)), x=1, xref="paper",
                           xanchor="right", y=0, yref="paper", yanchor="bottom", showarrow=False, align="left",
                           bgcolor="rgba(255, 255, 255, 0.85)", bordercolor=NOTE_COLOUR, borderpad=6,
                           font={"color": NOTE_COLOUR, "size": round(settings.font_size * 0.8)})
    where = "" if ceilings else " (no measured ceilings in this session)"
    return legend_below(style(fig, settings, f"Each kernel against the device's ceilings{where}",
                              settings.chart_px + 120))


def _hover(d: Dot) -> str:
    rate = f"{d.tflops:.2f} TFLOP/s, " if d.tflops else ""
    pct = f"; {d.pct_of_ceiling:.0f}% of its ceiling" if d.pct_of_ceiling is not None else ""
    return (f"{d.mode}: {d.name}<br>{d.dur_us:.1f} µs ({d.share:.0%} of the iteration's kernel time)<br>"
            f"{d.bytes:,} bytes, {rate}{d.gbps:.0f} GB/s{pct}")


def draw_roofline(report: Report, asked: Asked) -> go.Figure:
    return roofline_figure(report, asked.mode, asked.settings)
