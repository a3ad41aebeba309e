"""Kernel time by module of the model, eager above one compiled mode, as an icicle: each row a level of the
model (the model, its children, their children…), each bar a module as wide as the kernel time per iteration of
everything under it, children in model order under their parent. The two share one µs axis, so a module that
fusion shrank is a shorter bar below; the compiled bars are coloured by their time against eager's for the same
module. Drawn with bars (each placed at its `base`), since the app's plotly.js is the cartesian bundle, which has
no treemap or icicle trace (ui/web/bundle.py)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.modules import PSEUDO_MODULES, module_tree
from fusionviz.analysis.report import Report
from fusionviz.charts.customdata import Fields
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, ChartSettings, legend_below, si_number, style

MAX_DEPTH = 4  # levels below the model: GPT-2's `h.0.attn.c_attn`, a ResNet's `layer3.1.conv2` and below
# The compiled bars by their kernel time against eager's for the same module.
CHANGES: tuple[tuple[str, str], ...] = (
    ("under half of eager's", "#54A24B"),
    ("half of eager's to the same", "#A8D5A0"),
    ("more than eager's", "#E45756"),
    ("none in eager", "#B279A2"),
)
PSEUDO_COLOUR = "#D9D9D9"
FIELDS = Fields(("module", "kernel_us", "share", "kernels", "eager_us"))


def change_of(us: float, eager_us: float | None) -> str:
    """Which of CHANGES a compiled module's kernel time falls in, against eager's for the same module."""
    if eager_us is None or eager_us <= 0:
        return CHANGES[3][0]
    ratio = us / eager_us
    return CHANGES[0][0] if ratio < 0.5 else CHANGES[1][0] if ratio <= 1.0 else CHANGES[2][0]


def icicle_bars(tree: pd.DataFrame, modes: list[str], max_depth: int = MAX_DEPTH) -> pd.DataFrame:
    """The bars of the icicle (`module_tree`'s rows of `modes`, down to `max_depth`): each with `start_us`, where it
    begins on the µs axis (the model at 0, each child after its earlier siblings, from its parent's start), its
    `eager_us` (eager's kernel time for the same module, None where eager gave it none) and `change` (CHANGES; ""
    for eager's own bars), in the modes' order, then depth and model order."""
    eager = {m: us for m, us, mode in zip(tree.module, tree.kernel_us, tree["mode"], strict=True) if mode == "eager"}
    parts = []
    for mode in modes:
        rows = tree[(tree["mode"] == mode) & (tree.depth <= max_depth)].sort_values(["depth", "order"], kind="stable")
        start: dict[str, float] = {}
        filled: dict[str, float] = {}  # how far along its parent's bar the next child starts
        starts = []
        for module, parent, us in zip(rows.module, rows.parent, rows.kernel_us, strict=True):
            begin = 0.0 if parent is None or pd.isna(parent) else start[parent] + filled.get(parent, 0.0)
            if parent is not None and not pd.isna(parent):
                filled[parent] = filled.get(parent, 0.0) + us
            start[module] = begin
            starts.append(begin)
        eager_us = [eager.get(m) for m in rows.module]
        parts.append(rows.assign(start_us=starts, eager_us=eager_us, change=[
            "" if mode == "eager" else change_of(us, e) for us, e in zip(rows.kernel_us, eager_us, strict=True)]))
    return pd.concat(parts, ignore_index=True) if parts else tree.assign(start_us=[], eager_us=[], change=[])


def module_figure(tree: pd.DataFrame, mode: str, model: str, settings: ChartSettings = DEFAULT_SETTINGS,
                  max_depth: int = MAX_DEPTH) -> go.Figure:
    """The icicle of eager (above) and `mode` (below) from `module_tree`'s rows."""
    bars = icicle_bars(tree, ["eager", mode], max_depth)
    totals = {m: float(bars[(bars["mode"] == m) & (bars.depth == 0)].kernel_us.sum()) for m in ("eager", mode)}
    titles = [f"{m}: {si_number(totals[m] * 1e-6, 's')} of kernels per iteration" for m in ("eager", mode)]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12, subplot_titles=titles)
    for title in titles:  # Plotly sets subplot titles in a fixed 16 px: the figure's own type instead
        fig.update_annotations(selector={"text": title}, font_size=settings.font_size)
    depth_labels = {d: model if d == 0 else f"level {d}" for d in range(max_depth + 1)}
    hover = FIELDS.template("<b>%{module}</b><br>%{kernel_us:.1f} µs per iteration (%{share:.0%} of the mode's), "
                            "%{kernels:.3g} kernels<br>eager: %{eager_us:.1f} µs<extra></extra>")
    for row, m in ((1, "eager"), (2, mode)):
        part = bars[bars["mode"] == m]
        groups = [("eager", EAGER_COLOUR, part)] if m == "eager" else [
            (label, colour, part[part.change == label]) for label, colour in CHANGES]
        for label, colour, rows in groups:
            if rows.empty:
                continue
            colours = [PSEUDO_COLOUR if module in PSEUDO_MODULES else colour for module in rows.module]
            shown = rows.assign(module=[module or model for module in rows.module],
                                eager_us=rows.eager_us.astype(float).fillna(0.0))
            fig.add_trace(go.Bar(
                x=shown.kernel_us, base=shown.start_us, y=[depth_labels[d] for d in shown.depth], orientation="h",
                name=label if m != "eager" else "eager", showlegend=m != "eager", marker_color=colours,
                marker_line={"color": "white", "width": 1}, text=shown.label, textposition="inside",
                insidetextanchor="middle", textangle=0, customdata=FIELDS.of(shown), meta=FIELDS.meta,
                hovertemplate=hover), row=row, col=1)
    fig.update_layout(barmode="overlay", bargap=0.04,
                      uniformtext={"minsize": max(8, settings.font_size - 3), "mode": "hide"})
    order = [depth_labels[d] for d in range(max_depth + 1) if (bars.depth == d).any()]
    fig.update_yaxes(categoryorder="array", categoryarray=order, autorange="reversed")
    fig.update_xaxes(gridcolor="#EEEEEE", rangemode="tozero")
    fig.update_xaxes(title_text="kernel µs per iteration (each bar: the module and everything under it)", row=2,
                     col=1)
    height = max(settings.chart_px, 140 + 2 * int(settings.lane_px * 0.45) * len(order))
    return legend_below(style(fig, settings, f"Kernel time by module of {model}: eager and {mode}", height))


def model_label(report: Report) -> str:
    """What the icicle calls the model: the configuration's model, "the model" for a plain trace."""
    return "the model" if report.session.source == "trace" else report.session.config.model


def draw_modules(report: Report, asked: Asked) -> go.Figure:
    run = report.focus(asked.mode)
    assert run is not None  # the registry draws a mode's view only where the mode ran (`view_problem`)
    model = model_label(report)
    return module_figure(module_tree(report.modules, model), run.mode, model, asked.settings)
