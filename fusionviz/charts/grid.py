"""The crossover grid as a heat map: the compiled mode's speedup against eager at every hidden dim × batch,
green where it is clearly faster, red where clearly slower, neutral where there is no clear difference, and
under each cell's speedup the share of the call eager keeps the device busy, as measured in that cell (the
launch-bound corner is where compiling loses). Only what was measured is drawn: contours interpolated
between the cells ran through the cells' own figures and claimed values no cell measured."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import plotly.graph_objects as go

from fusionviz.analysis.report import Report
from fusionviz.charts.style import DEFAULT_SETTINGS, VERDICT_COLOURS, ChartSettings, style

NEUTRAL = "#EEF0F2"  # a fill lighter than the bars' grey, so the cells' labels stay readable


def _label(verdict: object, speedup: float) -> str:
    if verdict == "error":
        return "error"
    if verdict == "no clear difference":
        return f"≈{speedup:.2f}×"
    return f"{speedup:.2f}×"


def grid_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Cells coloured by log2 of the speedup where the verdict is clear (no clear difference is neutral),
    each labelled with its median and eager's busy share there; `customdata` holds (dim, batch) so a click can
    open the cell."""
    assert report.grid is not None, "a grid figure is drawn of a grid session"
    table, grid = report.grid.table, report.session.grid
    dims, batches = (grid.dims, grid.batches) if grid else ([], [])
    z = np.full((len(batches), len(dims)), np.nan)
    text = np.full((len(batches), len(dims)), "", dtype=object)
    for row in table.itertuples():
        i, j = batches.index(int(row.batch)), dims.index(int(row.dim))
        if row.verdict in ("faster", "slower"):
            z[i, j] = math.log2(row.speedup)
        elif row.verdict == "no clear difference":
            z[i, j] = 0.0
        busy = float(row.eager_busy)  # NaN where the cell did not run
        text[i, j] = _label(row.verdict, row.speedup) + (f"<br>busy {100 * busy:.0f}%" if busy == busy else "")
    reach = max(1.0, float(np.nanmax(np.abs(z)))) if np.isfinite(z).any() else 1.0
    custom: list[list[Any]] = [[[d, b] for d in dims] for b in batches]
    scale = [[0.0, VERDICT_COLOURS["slower"]], [0.5, NEUTRAL], [1.0, VERDICT_COLOURS["faster"]]]
    fig = go.Figure(go.Heatmap(
        x=list(range(len(dims))), y=list(range(len(batches))), z=z, zmin=-reach, zmax=reach, zmid=0,
        colorscale=scale, text=text, texttemplate="%{text}",
        textfont={"size": settings.font_size}, customdata=custom, xgap=2, ygap=2,
        colorbar={"title": {"text": "speedup"}, "tickvals": [-reach, 0, reach],
                  "ticktext": [f"{2 ** -reach:.2g}×", "1×", f"{2 ** reach:.2g}×"]},
        hovertemplate="dim %{customdata[0]} × batch %{customdata[1]}<br>%{text} (eager's device busy share)"
                      "<extra></extra>"))
    fig.update_xaxes(title_text="hidden dim", tickvals=list(range(len(dims))), ticktext=[str(d) for d in dims])
    fig.update_yaxes(title_text="batch", tickvals=list(range(len(batches))), ticktext=[str(b) for b in batches])
    c = report.session.config
    title = (f"Where {report.grid.mode} pays off: {c.model}, {c.dtype} "
             "(in each cell: the speedup; under it, how busy eager keeps the device)")
    return style(fig, settings, title, max(settings.chart_px, 140 + 70 * len(batches)))
