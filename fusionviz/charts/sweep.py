"""Shape sweeps: the latency of every call (compiles as peaks), steady-state latency per size, and the
cumulative time that says which strategy pays over the schedule."""

from __future__ import annotations

import plotly.graph_objects as go

from fusionviz.analysis.report import Report
from fusionviz.analysis.sweep import SweepReport
from fusionviz.charts.style import (
    DEFAULT_SETTINGS,
    FALLBACK_COLOUR,
    STRATEGY_COLOURS,
    ChartSettings,
    legend_below,
    style,
)


def _sweep(report: Report) -> SweepReport:
    assert report.sweep is not None, "a sweep figure is drawn of a sweep session"
    return report.sweep


def sweep_latency_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Latency of every call, one line per strategy on a log scale: compile stalls stand out as peaks,
    marked with their compile time and recompile reason; eager fallbacks after the recompile limit are
    crossed out."""
    calls = _sweep(report).calls
    fig = go.Figure()
    dimension = report.session.sweep.dimension if report.session.sweep else "size"
    for strategy, rows in calls.groupby("strategy", sort=False):
        colour = STRATEGY_COLOURS.get(str(strategy), "#7F7F7F")
        fig.add_trace(go.Scatter(
            x=rows["index"], y=rows.latency_ms, mode="lines+markers", name=str(strategy), legendgroup=str(strategy),
            line={"color": colour, "width": 2}, marker={"size": 5, "color": colour},
            customdata=rows[["size"]].to_numpy(),
            hovertemplate=f"<b>{strategy}</b> call %{{x}}<br>{dimension} %{{customdata[0]}}<br>"
                          "%{y:.3f} ms<extra></extra>"))
        compiled = rows[rows.compiled]
        if len(compiled):
            fig.add_trace(go.Scatter(
                x=compiled["index"], y=compiled.latency_ms, mode="markers", name=f"{strategy}: compiled",
                legendgroup=str(strategy), showlegend=False,
                marker={"symbol": "diamond", "size": 13, "color": colour, "line": {"width": 1.5, "color": "white"}},
                customdata=compiled[["size", "compile_s", "reason"]].to_numpy(dtype=object),
                hovertemplate=f"<b>{strategy} compiled</b> at call %{{x}} ({dimension} %{{customdata[0]}})<br>"
                              "compile %{customdata[1]:.2f} s of %{y:.0f} ms<br>%{customdata[2]}<extra></extra>"))
        fallen = rows[rows.fell_back_to_eager]
        if len(fallen):
            fig.add_trace(go.Scatter(
                x=fallen["index"], y=fallen.latency_ms, mode="markers", name=f"{strategy}: ran in eager",
                legendgroup=str(strategy),
                marker={"symbol": "x-thin", "size": 14, "color": FALLBACK_COLOUR,
                        "line": {"width": 2.5, "color": FALLBACK_COLOUR}},
                customdata=fallen[["size"]].to_numpy(),
                hovertemplate=f"<b>{strategy}: eager</b> at call %{{x}} ({dimension} %{{customdata[0]}})<br>"
                              "the recompile limit was hit: Dynamo no longer compiles this frame<extra></extra>"))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="compiled in this call",
                             marker={"symbol": "diamond", "size": 11, "color": "#7F7F7F"}, hoverinfo="skip"))
    note = _sweep(report).limit_note
    if note:
        fig.add_annotation(text=note, xref="paper", yref="paper", x=0, y=-0.2, xanchor="left", yanchor="top",
                           showarrow=False, align="left", font={"size": settings.font_size})
    fig.update_yaxes(type="log", dtick=1, title_text="ms per call (log)", gridcolor="#EEEEEE")  # decades only
    fig.update_xaxes(title_text="call in the schedule", gridcolor="#EEEEEE", dtick=1 if len(calls) and
                     calls["index"].max() < 30 else None)
    fig = style(fig, settings, "Latency of every call: compiles are the peaks", settings.chart_px + 40)
    if note:
        fig.update_layout(margin={"b": 90 + 2 * settings.font_size})
    return fig


def sweep_steady_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Steady-state latency against the swept size, one line per strategy: what each pays per call once
    its compiles are done (padding, masks, symbolic sizes)."""
    steady = _sweep(report).steady
    dimension = report.session.sweep.dimension if report.session.sweep else "size"
    fig = go.Figure()
    for strategy, rows in steady.groupby("strategy", sort=False):
        fig.add_trace(go.Scatter(
            x=rows["size"], y=rows.steady_ms, mode="lines+markers", name=str(strategy),
            line={"color": STRATEGY_COLOURS.get(str(strategy), "#7F7F7F"), "width": 2}, marker={"size": 7},
            hovertemplate=f"<b>{strategy}</b><br>{dimension} %{{x}}: %{{y:.4f}} ms<extra></extra>"))
    fig.update_xaxes(title_text=dimension, gridcolor="#EEEEEE")
    fig.update_yaxes(title_text="steady-state ms per call", rangemode="tozero", gridcolor="#EEEEEE")
    return legend_below(style(fig, settings, f"Steady-state latency against {dimension}", settings.chart_px + 60))


def sweep_cumulative_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Cumulative wall time against calls, one line per strategy: compiles push a line up, and the
    strategy lowest at the end pays over this schedule; a dotted line marks where it takes the lead."""
    calls = _sweep(report).calls
    fig = go.Figure()
    for strategy, rows in calls.groupby("strategy", sort=False):
        fig.add_trace(go.Scatter(
            x=rows["index"], y=rows.cumulative_s, mode="lines+markers", name=str(strategy),
            line={"color": STRATEGY_COLOURS.get(str(strategy), "#7F7F7F"), "width": 2, "shape": "hv"},
            marker={"size": 5},
            hovertemplate=f"<b>{strategy}</b><br>after call %{{x}}: %{{y:.3f}} s<extra></extra>"))
    leader = _sweep(report).leader
    title = "Cumulative time over the schedule"
    if leader:
        strategy, since = leader
        title += f": {strategy} is ahead from call {since}"
        fig.add_vline(x=since, line={"color": STRATEGY_COLOURS.get(strategy, "#7F7F7F"), "dash": "dot", "width": 2})
    fig.update_xaxes(title_text="call in the schedule", gridcolor="#EEEEEE")
    fig.update_yaxes(title_text="seconds so far (compiles included)", rangemode="tozero", gridcolor="#EEEEEE")
    return legend_below(style(fig, settings, title, settings.chart_px + 60))
