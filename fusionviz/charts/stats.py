"""Where kernel time goes, by class: one stacked bar per run, side by side."""

from __future__ import annotations

import plotly.graph_objects as go

from fusionviz.analysis.kernel_tables import KERNEL_US, kernel_us_by_class
from fusionviz.analysis.report import RunReport
from fusionviz.charts.style import CLASS_COLOURS, DEFAULT_SETTINGS, ChartSettings, style
from fusionviz.records.kernels import KERNEL_CLASSES

AXIS_TITLE = "kernel µs per iteration"


def class_stats_figure(runs: list[RunReport], settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """`KERNEL_US` by class, one stacked bar per run: where the time goes, side by side (the same figure as the
    pair's table, whose column's whole label each bar's hover repeats)."""
    fig = go.Figure()
    stats = {r.run.mode: kernel_us_by_class(r.run, r.classes) for r in runs}
    for kernel_class in KERNEL_CLASSES:
        ys = [s.get(kernel_class, 0.0) for s in stats.values()]
        if any(ys):
            fig.add_trace(go.Bar(x=list(stats), y=ys, name=kernel_class, marker_color=CLASS_COLOURS[kernel_class],
                                 hovertemplate=f"{kernel_class}: %{{y:.1f}} {KERNEL_US}<extra></extra>"))
    fig.update_layout(barmode="stack")
    # the axis says what is counted; how (streams added, memory operations out) is in each bar's hover
    fig.update_yaxes(title_text=AXIS_TITLE, gridcolor="#EEEEEE")
    return style(fig, settings, "Kernel time by class", settings.chart_px)
