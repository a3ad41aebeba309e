"""The naive loop's speedup and kernel count next to the proper measurement's."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.charts.style import DEFAULT_SETTINGS, ChartSettings, style

METHODS: tuple[tuple[str, str, str, str | None, str | None], ...] = (
    # column, legend name, colour, interval columns
    ("naive", "naive loop", "#BAB0AC", None, None),
    ("one_process", "one process", "#9ECAE9", "one_low", "one_high"),
    ("proper", "several processes", "#4C78A8", "low", "high"),
)


def methodology_figure(table: pd.DataFrame, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Speedup and kernel count: the naive loop's bars next to one process's and several processes' (the
    speedups with their p10–p90 ranges)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["speedup over eager", "kernel count"],
                        horizontal_spacing=0.12)
    speed, kernels = table.iloc[[0]], table.iloc[[3, 4]]
    labels = [q.removesuffix(", kernels") for q in kernels.quantity]
    for column, name, colour, low, high in METHODS:
        error = ({"type": "data", "symmetric": False, "array": speed[high] - speed[column],
                  "arrayminus": speed[column] - speed[low]} if low and high else None)
        fig.add_trace(go.Bar(x=["speedup"], y=speed[column], name=name, marker_color=colour, error_y=error,
                             text=[f"{v:.2f}×" for v in speed[column]], textposition="inside",
                             insidetextanchor="start", legendgroup=name), row=1, col=1)
        fig.add_trace(go.Bar(x=labels, y=kernels[column], name=name, marker_color=colour, showlegend=False,
                             text=[f"{v:g}" for v in kernels[column]], textposition="outside", cliponaxis=False,
                             legendgroup=name), row=1, col=2)
    fig.add_hline(y=1.0, line={"dash": "dot", "color": "#777777"}, row=1, col=1)
    top = float(max(speed.naive.max(), speed.high.max(), speed.one_high.max()))
    fig.update_yaxes(range=[0, top * 1.3], row=1, col=1, gridcolor="#EEEEEE")
    fig.update_yaxes(range=[0, float(kernels[["naive", "proper"]].to_numpy().max()) * 1.3], row=1, col=2,
                     gridcolor="#EEEEEE")
    fig.update_layout(barmode="group")
    fig.update_annotations(font_size=settings.font_size)
    style(fig, settings, "Naive loop vs proper measurement", settings.chart_px)
    fig.update_layout(legend={"yanchor": "top", "y": -0.1})  # the subplot titles take the top edge
    return fig
