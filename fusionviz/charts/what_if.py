"""The what-if estimate beside the measured outcome: per mode, the latency an eager trace alone predicts and the
latency the session timed."""

from __future__ import annotations

import plotly.graph_objects as go

from fusionviz.analysis.report import Report
from fusionviz.analysis.what_if import what_if
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, ChartSettings, legend_below, style
from fusionviz.records.session import Session

MEASURED_COLOUR = "#4C78A8"


def what_if_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    found = what_if(session)
    modes = list(found.estimates_us) if found else []
    fig = go.Figure([
        go.Bar(y=modes, x=[found.estimates_us[m] for m in modes] if found else [], orientation="h",
               name="estimated from eager's trace", marker_color=EAGER_COLOUR,
               hovertemplate="estimated %{x:.1f} µs per call<extra></extra>"),
        go.Bar(y=modes, x=[found.measured_us[m] for m in modes] if found else [], orientation="h",
               name="measured", marker_color=MEASURED_COLOUR,
               hovertemplate="measured %{x:.1f} µs per call<extra></extra>"),
    ])
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text="µs per call", gridcolor="#EEEEEE", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    return legend_below(style(fig, settings, "What compiling could save, estimated before compiling, and what it did",
                              max(settings.chart_px, 120 + settings.lane_px * len(modes))))


def draw_what_if(report: Report, asked: Asked) -> go.Figure:
    return what_if_figure(report.session, asked.settings)
