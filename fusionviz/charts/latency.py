"""Latency per mode with its spread and speedup, and the companion metrics (kernels, busy %, compile time,
break-even calls)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.report import Report
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
    return style(fig, settings, "Latency per call", height)


METRICS: tuple[tuple[str, str], ...] = (
    ("kernels_per_iteration", "kernels/iter"),
    ("busy_pct", "busy %"),
    ("compile_s", "compile s"),
    ("break_even_calls", "break-even calls"),
)
_METRIC_TEXT = {"kernels_per_iteration": "{:g}", "busy_pct": "{:.0f}%", "compile_s": "{:.2g} s",
                "break_even_calls": "{:,.0f}"}
NO_PAYBACK = "No compiled mode is clearly<br>faster than eager, so no<br>compile time is paid back"


def metric_rows(report: Report) -> pd.DataFrame:
    """Long table (mode, metric, title, value, text) of the companion metrics that have a value: compile
    time for compiled modes only, break-even calls only for modes that pay back (clearly faster)."""
    table = report.summary[report.summary.status == "ok"]
    rows = [{"mode": mode, "metric": column, "title": title, "value": float(value),
             "text": _METRIC_TEXT[column].format(value)}
            for column, title in METRICS
            for mode, value in zip(table["mode"], table[column], strict=True)
            if value is not None and not pd.isna(value)
            and not (column in ("compile_s", "break_even_calls") and mode == "eager")]
    return pd.DataFrame(rows, columns=["mode", "metric", "title", "value", "text"])


def metrics_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS, title: str = "Per mode"
                   ) -> go.Figure:
    """Small bars per metric: kernels per iteration, busy %, compile time, and break-even calls of the modes
    that pay back (a sentence where none does). Metrics a session has no values for (a pair of plain
    traces has no compile time and no timing) are left out."""
    long = metric_rows(report)
    modes = list(dict.fromkeys(long["mode"]))
    timed = report.summary.verdict.notna().any()
    shown = [(m, t) for m, t in METRICS if (long.metric == m).any() or (m == "break_even_calls" and timed)]
    cols = 2
    rows_n = max(1, (len(shown) + 1) // 2)
    # Horizontal bars on one shared list of modes: long mode names read on the left column only.
    fig = make_subplots(rows=rows_n, cols=cols, subplot_titles=[t for _, t in shown], shared_yaxes=True,
                        horizontal_spacing=0.06, vertical_spacing=0.18 if rows_n > 1 else 0.0)
    for i, (metric, _) in enumerate(shown):
        rows = long[long.metric == metric]
        where = {"row": i // cols + 1, "col": i % cols + 1}
        fig.add_trace(go.Bar(y=rows["mode"], x=rows.value, text=rows.text, textposition="outside", orientation="h",
                             cliponaxis=False, showlegend=False, hovertemplate="%{y}: %{text}<extra></extra>",
                             marker_color=["#7F7F7F" if m == "eager" else "#4C78A8" for m in rows["mode"]]),
                      **where)
        top = float(rows.value.max()) if len(rows) else 0.0
        fig.update_xaxes(range=[0, (top or 1.0) * 1.45], gridcolor="#EEEEEE", visible=bool(len(rows)), **where)
        if rows.empty:
            fig.update_yaxes(showgrid=False, **where)
            n = "" if i == 0 else str(i + 1)  # subplots' axes are x, x2, x3…
            fig.add_annotation(text=NO_PAYBACK, showarrow=False, x=0.5, y=0.5, xref=f"x{n} domain",
                               yref=f"y{n} domain")
    fig.update_yaxes(categoryorder="array", categoryarray=modes, autorange="reversed")
    fig.update_annotations(font_size=settings.font_size)
    return style(fig, settings, title, max(settings.chart_px, 200 + 2 * settings.lane_px // 3 * len(modes) * rows_n))
