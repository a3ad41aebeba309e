"""One iteration's memory, eager above the compiled mode: the bytes live at each moment, stacked by the op or kernel
that made them (`analysis.memory.memory_timeline`), on one µs axis and one bytes axis, so that eager's tower of
intermediates stands over the compiled mode's few buffers. The band at the bottom is what was live when the
iteration began: the inputs, and what the mode keeps between calls (a graph tree's outputs and static buffers)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.headline import read_size
from fusionviz.analysis.memory import HELD, OTHER
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, ChartSettings, legend_below, style
from fusionviz.records.decode import clip
from fusionviz.records.kernels import short_name

HELD_COLOUR, OTHER_COLOUR = "#BDBDBD", "#E0E0E0"
# Tableau's 20, dark then light: eager's and the compiled mode's top ops together get a colour each
OP_COLOURS = ("#4C78A8", "#F58518", "#E45756", "#72B7B2", "#54A24B", "#EECA3B", "#B279A2", "#FF9DA6", "#9D755D",
              "#79706E", "#9ECAE9", "#FFBF79", "#FF9D98", "#88D27A", "#B6992D", "#86BCB6", "#D4A6C8", "#D37295")
LEGEND_CHARS = 44  # an op's name in the legend, at most (its hover gives it whole)


def prepare_memory(report: Report, mode: str | None = None) -> pd.DataFrame:
    """The timeline rows the chart draws: eager's, then the compiled mode's (`mode`, else the first compiled mode
    with a timeline), in the timeline's long form (`memory.TIMELINE_COLUMNS`)."""
    frame = report.memory_timeline
    if frame.empty:
        return frame
    present = list(dict.fromkeys(frame["mode"]))
    compiled = [m for m in present if m != "eager"]
    chosen = mode if mode in compiled else (compiled[0] if compiled else None)
    shown = [m for m in ("eager", chosen) if m in present]
    return frame[frame["mode"].isin(shown)].reset_index(drop=True)


def op_colours(ops: list[str]) -> dict[str, str]:
    """One colour per op across the rows, so that an op looks the same in eager and the compiled mode; what was held
    and the rest in greys."""
    named = [op for op in ops if op not in (HELD, OTHER)]
    colours = {op: OP_COLOURS[i % len(OP_COLOURS)] for i, op in enumerate(named)}
    return {HELD: HELD_COLOUR, OTHER: OTHER_COLOUR, **colours}


def memory_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS, mode: str | None = None) -> go.Figure:
    """A row per mode, eager on top, each a stack of step areas (one per op) over µs from the iteration's start;
    both axes are shared, so the rows' heights and lengths compare."""
    frame = prepare_memory(report, mode)
    modes = list(dict.fromkeys(frame["mode"])) if not frame.empty else []
    fig = make_subplots(rows=max(len(modes), 1), cols=1, shared_xaxes=True, shared_yaxes=True,
                        vertical_spacing=0.12, subplot_titles=[_row_title(report, m) for m in modes] or None)
    colours = op_colours(list(dict.fromkeys(frame["op"]))) if not frame.empty else {}
    shown: set[str] = set()
    for row, m in enumerate(modes, start=1):
        rows = frame[frame["mode"] == m]
        for op in dict.fromkeys(rows["op"]):
            band = rows[rows["op"] == op]
            fig.add_trace(go.Scatter(
                x=band["t_us"], y=band["bytes_live"], name=clip(short_name(op), LEGEND_CHARS), legendgroup=op,
                showlegend=op not in shown,
                stackgroup=f"row{row}", line={"shape": "hv", "width": 0.5, "color": colours[op]},
                fillcolor=colours[op], hovertemplate=f"{op}<br>%{{x:.1f}} µs: %{{y:,.0f}} B live<extra>{m}</extra>"),
                row=row, col=1)
            shown.add(op)
        fig.update_yaxes(title_text="bytes live", row=row, col=1, gridcolor="#EEEEEE", rangemode="tozero",
                         matches="y" if row > 1 else None)
    if not modes:
        fig.add_annotation(text="No mode's memory was recorded in this session", x=0.5, y=0.5, xref="paper",
                           yref="paper", showarrow=False)
    fig.update_annotations(font_size=settings.font_size)  # the rows' titles: make_subplots sets them at 16 px
    fig.update_xaxes(title_text="µs from the iteration's start", row=max(len(modes), 1), col=1)
    height = max(settings.chart_px, 160 + int(settings.lane_px * 2.2) * max(len(modes), 1))
    return legend_below(style(fig, settings, "Memory over one iteration, by the op that made each block", height))


def _row_title(report: Report, mode: str) -> str:
    """A row's title: the mode, its call's peak above what it holds, and what it holds between calls."""
    found = report.memory.get(mode)
    if found is None:
        return mode
    m = found.memory
    return (f"{mode}: a call peaks {read_size(m.peak_allocated_bytes)} above the {read_size(m.held_bytes)} it holds "
            "between calls")


def draw_memory(report: Report, asked: Asked) -> go.Figure:
    return memory_figure(report, asked.settings, asked.mode)
