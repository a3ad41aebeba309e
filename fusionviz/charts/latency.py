"""Latency per mode with its spread and speedup, and the companion metrics (kernels, busy %, compile time,
break-even calls)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.report import Report
from fusionviz.charts.export import carry_stamp
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, VERDICT_COLOURS, ChartSettings, style


def _speedup_label(mode: str, verdict: object, speedup: float, low: float, high: float) -> str:
    if mode == "eager":
        return "baseline"
    if pd.isna(speedup):
        return ""
    if verdict == "no clear difference":
        return f"no clear difference ({low:.2f}–{high:.2f}×)"
    return f"{speedup:.2f}× ({low:.2f}–{high:.2f}×) vs eager"


def latency_rows(report: Report) -> pd.DataFrame:
    """The summary table's rows that have a latency, with error-bar lengths and a label saying the speedup
    with its interval, or that there is no clear difference."""
    table = report.summary[report.summary.median_ms.notna()].reset_index(drop=True)
    table["err_plus"] = table.p90_ms - table.median_ms
    table["err_minus"] = table.median_ms - table.p10_ms
    table["label"] = [_speedup_label(*row) for row in zip(
        table["mode"], table.verdict, table.speedup, table.speedup_low, table.speedup_high, strict=True)]
    return table


def latency_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Median latency per call for each mode with its p10–p90 spread over every round of every timing
    process; horizontal, eager on top, so that five mode names stay readable; the speedup with its interval
    stands under each mode's name, clear of the error bar; green when clearly faster, red when clearly
    slower, grey when there is no clear difference."""
    table = latency_rows(report)
    colours = [EAGER_COLOUR if m == "eager" else VERDICT_COLOURS.get(str(v), EAGER_COLOUR)
               for m, v in zip(table["mode"], table.verdict, strict=True)]
    ticks = [f"<b>{m}</b><br>{label}" for m, label in zip(table["mode"], table.label, strict=True)]
    fig = go.Figure(go.Bar(
        y=ticks, x=table.median_ms, orientation="h", marker_color=colours, text=table.label, textposition="none",
        error_x={"type": "data", "symmetric": False, "array": table.err_plus, "arrayminus": table.err_minus,
                 "color": "#333333", "thickness": 1.5},
        customdata=table[["p10_ms", "p90_ms"]].to_numpy(),
        hovertemplate="%{y}<br>median %{x:.4f} ms<br>p10 %{customdata[0]:.4f} · p90 %{customdata[1]:.4f}"
                      "<extra></extra>",
        cliponaxis=False,
    ))
    top = float((table.median_ms + table.err_plus).max()) if len(table) else 1.0
    fig.update_xaxes(title_text="ms per call: median, p10–p90 of all rounds",
                     range=[0, top * 1.15], gridcolor="#EEEEEE")
    fig.update_yaxes(autorange="reversed")
    height = max(settings.chart_px, 120 + 2 * settings.lane_px // 3 * len(table))
    return carry_stamp(style(fig, settings, "Latency per call", height), report.source)


METRICS: tuple[tuple[str, str], ...] = (
    ("speedup", "speedup vs eager (p10–p90)"),
    ("kernels_per_iteration", "kernels/iter"),
    ("busy_pct", "busy % of the call"),
    ("compile_s", "compile s"),
    ("break_even_calls", "break-even calls"),
)
_METRIC_TEXT = {"speedup": "{:.2f}x", "kernels_per_iteration": "{:g}", "busy_pct": "{:.0f}%", "compile_s": "{:.2g} s",
                "break_even_calls": "{:,.0f}"}
COLUMNS = 3  # panels side by side: a slide is wide, and the modes' names stand on the left column only
BUSY_CAP = 100.0  # a busy share's axis ends here: a device cannot be busy more than all of the call
INSIDE_FROM = 0.7  # a busy bar this share of its axis or longer carries its figure inside, clear of the edge
NOTE_COLOUR = "#6B7280"


def metric_rows(report: Report) -> pd.DataFrame:
    """Long table (mode, metric, title, value, text) of the companion metrics that have a value: compile
    time for compiled modes only, break-even calls only for modes that pay back (clearly faster); the speedup
    of every timed mode, eager's 1x included (its whiskers are `latency_rows`' figures)."""
    table = report.summary[report.summary.status == "ok"]
    rows = [{"mode": mode, "metric": column, "title": title, "value": float(value),
             "text": _METRIC_TEXT[column].format(value)}
            for column, title in METRICS
            for mode, value in zip(table["mode"], table[column], strict=True)
            if value is not None and not pd.isna(value)
            and not (column in ("compile_s", "break_even_calls") and mode == "eager")]
    return pd.DataFrame(rows, columns=["mode", "metric", "title", "value", "text"])


def missing_break_even(report: Report) -> dict[str, str]:
    """Why each compiled mode that ran has no break-even bar, by mode: it never pays its compile back (slower
    than eager, or no clear difference), it has no compile time (eager replayed as a CUDA graph compiles nothing;
    a plain trace records none), or it was not timed."""
    missing = {}
    for mode, status in zip(report.summary["mode"], report.summary.status, strict=True):
        vs = report.comparisons.get(mode)
        if mode == "eager" or status != "ok" or (vs is not None and vs.break_even_calls is not None):
            continue
        if vs is None:
            missing[mode] = "not timed"
        elif vs.verdict == "slower":
            missing[mode] = "never: slower than eager"
        elif vs.verdict == "no clear difference":
            missing[mode] = "never: no clear gain"
        else:
            missing[mode] = "no compile time to pay back"
    return missing


def metrics_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS, title: str = "Per mode"
                   ) -> go.Figure:
    """Small bars per metric: the speedup the title states (with its p10–p90 and eager's 1x marked), kernels per
    iteration, busy % (its axis ends at 100%), compile time, and break-even calls of the modes that pay back,
    with the reason written where a mode's bar is missing. Metrics a session has no values for (a pair of plain
    traces has no compile time and no timing) are left out."""
    long = metric_rows(report)
    modes = list(dict.fromkeys(long["mode"]))
    timed = report.summary.verdict.notna().any()
    shown = [(m, t) for m, t in METRICS if (long.metric == m).any() or (m == "break_even_calls" and timed)]
    rows_n = max(1, -(-len(shown) // COLUMNS))
    fig = make_subplots(rows=rows_n, cols=COLUMNS, subplot_titles=[t for _, t in shown], shared_yaxes=True,
                        horizontal_spacing=0.05, vertical_spacing=0.2 if rows_n > 1 else 0.0)
    for i, (metric, _) in enumerate(shown):
        rows = long[long.metric == metric]
        where = {"row": i // COLUMNS + 1, "col": i % COLUMNS + 1}
        colours = ["#7F7F7F" if m == "eager" else "#4C78A8" for m in rows["mode"]]
        values = rows.value.tolist()
        top = max(values, default=0.0)
        if metric == "speedup":
            _speedup_panel(fig, report, rows, where)
            continue
        if metric == "busy_pct":
            values = [min(v, BUSY_CAP) for v in values]
            positions = ["inside" if v >= INSIDE_FROM * BUSY_CAP else "outside" for v in values]
            limit = BUSY_CAP
        else:
            positions, limit = ["outside"] * len(values), (top or 1.0) * 1.45
        fig.add_trace(go.Bar(y=rows["mode"], x=values, text=rows.text, textposition=positions, orientation="h",
                             insidetextanchor="end", insidetextfont={"color": "white"}, cliponaxis=False,
                             showlegend=False, hovertemplate="%{y}: %{text}<extra></extra>", marker_color=colours),
                      **where)
        fig.update_xaxes(range=[0, limit], gridcolor="#EEEEEE", **where)
        if metric == "busy_pct":
            fig.update_xaxes(tickvals=[0, 25, 50, 75, 100], ticksuffix="%", **where)
        if metric == "break_even_calls":
            missing = missing_break_even(report)
            fig.add_trace(go.Scatter(y=list(missing), x=[0.0] * len(missing), text=list(missing.values()),
                                     mode="text", textposition="middle right", cliponaxis=False, showlegend=False,
                                     textfont={"color": NOTE_COLOUR}, hoverinfo="skip"), **where)
            fig.update_xaxes(visible=bool(len(rows)), **where)
            if rows.empty:
                fig.update_xaxes(range=[0, 1], **where)
    for i in range(len(shown), rows_n * COLUMNS):  # an empty cell of the grid: no axes
        fig.update_xaxes(visible=False, row=i // COLUMNS + 1, col=i % COLUMNS + 1)
        fig.update_yaxes(visible=False, row=i // COLUMNS + 1, col=i % COLUMNS + 1)
    fig.update_yaxes(categoryorder="array", categoryarray=modes, autorange="reversed")
    fig.update_annotations(font_size=settings.font_size)
    return carry_stamp(style(fig, settings, title, max(settings.chart_px, 200 + 2 * settings.lane_px // 3 * len(modes)
                                                       * rows_n)), report.source)


def _speedup_panel(fig: go.Figure, report: Report, rows: pd.DataFrame, where: dict[str, int]) -> None:
    """Each timed mode's speedup against eager, coloured by its verdict, its p10–p90 as a whisker and its figure
    after the whisker; a dotted line at 1x, where a mode is as fast as eager."""
    compared = report.comparisons
    low = [compared[m].speedup.low if m in compared else v for m, v in zip(rows["mode"], rows.value, strict=True)]
    high = [compared[m].speedup.high if m in compared else v for m, v in zip(rows["mode"], rows.value, strict=True)]
    colours = [EAGER_COLOUR if m == "eager" else VERDICT_COLOURS.get(compared[m].verdict, EAGER_COLOUR)
               if m in compared else EAGER_COLOUR for m in rows["mode"]]
    values = rows.value.tolist()
    fig.add_trace(go.Bar(
        y=rows["mode"], x=values, orientation="h", marker_color=colours, showlegend=False,
        error_x={"type": "data", "symmetric": False, "array": [h - v for h, v in zip(high, values, strict=True)],
                 "arrayminus": [v - lo for lo, v in zip(low, values, strict=True)], "color": "#333333",
                 "thickness": 1.5},
        customdata=list(zip(low, high, strict=True)),
        hovertemplate="%{y}: %{x:.2f}x (p10–p90 %{customdata[0]:.2f}–%{customdata[1]:.2f}x)<extra></extra>"),
        **where)
    fig.add_trace(go.Scatter(y=rows["mode"], x=high, text=rows.text, mode="text", textposition="middle right",
                             cliponaxis=False, showlegend=False, hoverinfo="skip"), **where)
    fig.add_vline(x=1.0, line_dash="dot", line_color="#333333", **where)
    fig.update_xaxes(range=[0, max([*high, 1.0]) * 1.4], gridcolor="#EEEEEE", ticksuffix="x", **where)
