"""Where kernel time goes, by class: one stacked bar per run, side by side."""

from __future__ import annotations

import plotly.graph_objects as go

from fusionviz.analysis.report import RunReport
from fusionviz.charts.style import CLASS_COLOURS, DEFAULT_SETTINGS, ChartSettings, style
from fusionviz.records.kernels import KERNEL_CLASSES


def class_stats_figure(runs: list[RunReport], settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Kernel time per iteration by class, one stacked bar per run: where the time goes, side by side."""
    fig = go.Figure()
    stats = {r.run.mode: r.classes for r in runs}
    iterations = {r.run.mode: max(r.run.summary.iterations if r.run.summary else 1, 1) for r in runs}
    for kernel_class in KERNEL_CLASSES:
        ys = [float(s.total_us[s.kernel_class == kernel_class].sum()) / iterations[m] for m, s in stats.items()]
        if any(ys):
            fig.add_trace(go.Bar(x=list(stats), y=ys, name=kernel_class, marker_color=CLASS_COLOURS[kernel_class],
                                 hovertemplate=f"{kernel_class}: %{{y:.1f}} µs<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="kernel µs per iteration", gridcolor="#EEEEEE")
    return style(fig, settings, "Kernel time by class", settings.chart_px)
