"""Host-bound, device-bound or balanced, per mode (`bound.classify`): the host's time per call (enqueueing it in
the timing loop; `bound.Bound`) beside the GPU's (the kernels' summed durations), and the timed latency. Where
the host's bar is the longer, the GPU idles waiting for it: what no roofline shows."""

from __future__ import annotations

import plotly.graph_objects as go

from fusionviz.analysis.bound import bounds
from fusionviz.analysis.report import Report
from fusionviz.analysis.timing import latency_estimates
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, ChartSettings, legend_below, style
from fusionviz.records.session import Session

HOST_COLOUR, GPU_COLOUR, LATENCY_COLOUR = "#3A3A3A", "#4C78A8", "#E45756"


def bound_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    found = bounds(session)
    latencies = latency_estimates(session)
    modes = list(found)
    labels = [f"<b>{m}</b><br>{found[m].kind}" if found[m].kind else f"<b>{m}</b>" for m in modes]
    fig = go.Figure([
        go.Bar(y=labels, x=[found[m].host_us for m in modes], orientation="h", name="host: enqueueing one call (µs)",
               marker_color=HOST_COLOUR, hovertemplate="host %{x:.1f} µs per call<extra></extra>"),
        go.Bar(y=labels, x=[found[m].gpu_us for m in modes], orientation="h", name="GPU: kernel time (µs)",
               marker_color=GPU_COLOUR, hovertemplate="kernels ran %{x:.1f} µs<extra></extra>"),
        go.Scatter(y=labels, x=[latencies[m].median * 1e3 if m in latencies else None for m in modes],
                   mode="markers", name="latency per call (timed, µs)", marker={"symbol": "line-ns-open", "size": 22,
                                                                                  "color": LATENCY_COLOUR,
                                                                                  "line": {"width": 3}},
                   hovertemplate="timed %{x:.1f} µs per call<extra></extra>"),
    ])
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="µs per call (host: the timing loop enqueueing the calls; GPU: profiled kernels)",
                     gridcolor="#EEEEEE", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    height = max(settings.chart_px, 120 + settings.lane_px * len(modes))
    return legend_below(style(fig, settings, "Who waits for whom: host work against GPU time per call", height))


def draw_bound(report: Report, asked: Asked) -> go.Figure:
    return bound_figure(report.session, asked.settings)
