"""The source view: the user's lines down the side, the eager time each launched on the left, and on the right
each compiled kernel of the iteration (in launch order) over the lines it came from, so that one kernel across
several lines reads as a fusion; a ✂ on a line says what kept its op apart from the one before it."""

from __future__ import annotations

from collections import Counter

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.provenance import short_source
from fusionviz.analysis.report import Report
from fusionviz.analysis.source_view import SourceView
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import BREAK_COLOUR, CLASS_COLOURS, DEFAULT_SETTINGS, ChartSettings, style
from fusionviz.records.session import ModeRun

CODE_CHARS = 56  # a line's text is cut to this on the axis; the hover has it whole


def source_figure(view: SourceView, compiled: ModeRun, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """The source view of an eager and a compiled run (`analysis.source_view`). Each compiled kernel's
    markers carry its row of the iteration's kernel table and name (`customdata`), so a click finds it."""
    lines = view.lines
    ys = {source: -i for i, source in enumerate(lines.source)}
    titles = ["eager: µs per line", f"{compiled.mode}: the kernels each line ended in"]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.3, 0.7], horizontal_spacing=0.02,
                        subplot_titles=titles)
    for title in titles:  # Plotly sets subplot titles in a fixed 16 px: the figure's own type instead
        fig.update_annotations(selector={"text": title}, font_size=settings.font_size)
    fig.add_trace(_line_bars(view, ys, "eager"), row=1, col=1)
    _compiled_traces(fig, view, compiled, ys)
    _separation_marks(fig, view, ys, len(iteration_kernels(compiled)))
    _line_axis(fig, view, ys, row=1, col=1)
    slots = len(iteration_kernels(compiled))
    fig.update_xaxes(title_text="compiled kernels in launch order", dtick=1, range=[-0.6, slots + 2.4], row=1, col=2)
    return style(fig, settings, f"{compiled.mode}: eager's lines and the kernels they ended in",
                 _height(view, settings))


def trace_source_figure(view: SourceView, label: str, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """One trace alone (`source_view(run, None)`: a foreign trace whose events carry stack traces): each line
    with the time of the kernels it launched, their count on the bar and their names in the hover."""
    ys = {source: -i for i, source in enumerate(view.lines.source)}
    fig = go.Figure(_line_bars(view, ys, label))
    _line_axis(fig, view, ys)
    return style(fig, settings, "Kernel time per source line (the trace's stack traces)", _height(view, settings))


def _line_bars(view: SourceView, ys: dict[str, int], label: str) -> go.Bar:
    lines = view.lines
    return go.Bar(
        x=lines.eager_us, y=[ys[s] for s in lines.source], orientation="h", marker_color=CLASS_COLOURS["aten"],
        text=[f"{n} kernel{'' if n == 1 else 's'}" for n in lines.eager_kernels], textposition="auto", textangle=0,
        customdata=[[short_source(s), code, ", ".join(names)] for s, code, names in
                    zip(lines.source, lines.code, lines.eager_names, strict=True)],
        hovertemplate=f"<b>%{{customdata[0]}}</b> %{{customdata[1]}}<br>{label}: %{{x:.1f}} µs in %{{text}}<br>"
                      "%{customdata[2]}<extra></extra>", showlegend=False)


def _line_axis(fig: go.Figure, view: SourceView, ys: dict[str, int], **cell: int) -> None:
    lines = view.lines
    fig.update_yaxes(tickvals=list(ys.values()), ticktext=[_tick(s, c) for s, c in zip(lines.source, lines.code,
                                                                                          strict=True)],
                     range=[-len(lines) + 0.4, 0.6], **cell)
    fig.update_xaxes(title_text="µs", **cell)


def _height(view: SourceView, settings: ChartSettings) -> int:
    return int(max(settings.chart_px, 90 + len(view.lines) * settings.font_size * 2.6))


def _tick(source: str, code: str) -> str:
    line = source.rpartition(":")[2]
    text = code if len(code) <= CODE_CHARS else code[: CODE_CHARS - 1] + "…"
    return f"{line}  {text}" if text else short_source(source)


def _compiled_traces(fig: go.Figure, view: SourceView, compiled: ModeRun, ys: dict[str, int]) -> None:
    """One marker per kernel and line it came from, a stem joining a kernel's lines; colour by class."""
    kernels = iteration_kernels(compiled)
    stems_x: list[float | None] = []
    stems_y: list[float | None] = []
    xs, yv, colours, custom = [], [], [], []
    for ci, sources in view.kernel_lines.items():
        rows = sorted(ys[s] for s in sources if s in ys)
        if not rows:
            continue
        name, kernel_class, dur = kernels.name.iloc[ci], kernels.kernel_class.iloc[ci], kernels.dur_us.iloc[ci]
        if len(rows) > 1:
            stems_x += [ci, ci, None]
            stems_y += [rows[0], rows[-1], None]
        for y in rows:
            xs.append(ci)
            yv.append(y)
            colours.append(CLASS_COLOURS[kernel_class])
            custom.append([ci, name, kernel_class, float(dur), ", ".join(short_source(s) for s in sources)])
    if stems_x:
        fig.add_trace(go.Scatter(x=stems_x, y=stems_y, mode="lines", line={"color": "#555555", "width": 3},
                                 hoverinfo="skip", showlegend=False), row=1, col=2)
    fig.add_trace(go.Scatter(
        x=xs, y=yv, mode="markers", marker={"symbol": "square", "size": 16, "color": colours,
                                            "line": {"width": 1, "color": "#333333"}},
        customdata=custom, showlegend=False,
        hovertemplate="<b>%{customdata[1]}</b><br>%{customdata[2]}, %{customdata[3]:.1f} µs<br>"
                      "from %{customdata[4]}<extra></extra>"), row=1, col=2)


def _separation_marks(fig: go.Figure, view: SourceView, ys: dict[str, int], slots: int) -> None:
    """A ✂ right of the kernels on each line whose op was kept apart from the one before it: why, counted (the
    hover says it in full, with Inductor's own reason where its scheduler gave one)."""
    by_line: dict[str, Counter[str]] = {}
    details: dict[str, list[str]] = {}
    for sep in view.separations:
        if sep.after.source in ys:
            by_line.setdefault(sep.after.source, Counter())[sep.reason] += 1
            details.setdefault(sep.after.source, []).append(sep.detail + "".join(f"<br>  {w}" for w in sep.inductor))
    for source, reasons in by_line.items():
        text = "✂ " + ", ".join(f"{r} ×{n}" if n > 1 else r for r, n in reasons.items())
        fig.add_annotation(x=slots - 0.4, xref="x2", y=ys[source], yref="y2", text=text, showarrow=False,
                           xanchor="left", font={"color": BREAK_COLOUR},
                           hovertext="<br>".join(dict.fromkeys(details[source])))


def draw_source(report: Report, asked: Asked) -> go.Figure:
    """The registry's source view: eager and the asked compiled mode (the first that ran by default)."""
    compiled = report.focus(asked.mode)
    assert compiled is not None  # view_problem said so
    return source_figure(report.source_views[compiled.mode], compiled, asked.settings)
