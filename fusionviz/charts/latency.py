"""Latency per mode with its spread and speedup, and the companion metrics (kernels, busy %, compile time,
break-even calls)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from fusionviz.analysis.summary import summary_table
from fusionviz.charts.style import DEFAULT_SETTINGS, ChartSettings, style
from fusionviz.records.session import Session

VERDICT_COLOURS: dict[str, str] = {"faster": "#54A24B", "slower": "#E45756", "no clear difference": "#A8B3BF"}
EAGER_COLOUR = "#7F7F7F"


def _speedup_label(mode: str, verdict: object, speedup: float, low: float, high: float) -> str:
    if mode == "eager":
        return "baseline"
    if pd.isna(speedup):
        return ""
    if verdict == "no clear difference":
        return f"no clear difference ({low:.2f}–{high:.2f}×)"
    return f"{speedup:.2f}× ({low:.2f}–{high:.2f}×) vs eager"


def latency_rows(session: Session) -> pd.DataFrame:
    """The summary table's rows that have a latency, with error-bar lengths and a label saying the speedup
    with its interval, or that there is no clear difference."""
    table = summary_table(session)
    table = table[table.median_ms.notna()].reset_index(drop=True)
    table["err_plus"] = table.p90_ms - table.median_ms
    table["err_minus"] = table.median_ms - table.p10_ms
    table["label"] = [_speedup_label(*row) for row in zip(
        table["mode"], table.verdict, table.speedup, table.speedup_low, table.speedup_high, strict=True)]
    return table


def latency_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Median latency per call for each mode with its p10–p90 spread over every round of every timing
    process; horizontal, eager on top, so that five mode names stay readable; the speedup with its interval
    stands under each mode's name, clear of the error bar; green when clearly faster, red when clearly
    slower, grey when there is no clear difference."""
    table = latency_rows(session)
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
    fig.update_xaxes(title_text="ms per call (median, p10–p90 over all rounds and processes)",
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


def metric_rows(session: Session) -> pd.DataFrame:
    """Long table (mode, metric, title, value, text) of the companion metrics; break-even of a compiled
    mode that is not faster reads 'never'."""
    table = summary_table(session)
    table = table[table.status == "ok"]
    rows = []
    for column, title in METRICS:
        for mode, value in zip(table["mode"], table[column], strict=True):
            if column in ("compile_s", "break_even_calls") and mode == "eager":
                continue
            missing = value is None or pd.isna(value)
            text = ("never" if column == "break_even_calls" else "–") if missing else f"{value:,.3g}"
            rows.append({"mode": mode, "metric": column, "title": title,
                         "value": 0.0 if missing else float(value), "text": text})
    return pd.DataFrame(rows, columns=["mode", "metric", "title", "value", "text"])


def metrics_figure(session: Session, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Small bars per metric: kernels per iteration, busy %, compile time and break-even calls."""
    long = metric_rows(session)
    modes = list(dict.fromkeys(long["mode"]))
    # Two by two, horizontal bars on one shared list of modes: long mode names read on the left column only.
    fig = make_subplots(rows=2, cols=2, subplot_titles=[t for _, t in METRICS], shared_yaxes=True,
                        horizontal_spacing=0.06, vertical_spacing=0.18)
    for i, (metric, _) in enumerate(METRICS):
        rows = long[long.metric == metric]
        fig.add_trace(go.Bar(y=rows["mode"], x=rows.value, text=rows.text, textposition="outside", orientation="h",
                             cliponaxis=False, showlegend=False, hovertemplate="%{y}: %{text}<extra></extra>",
                             marker_color=["#7F7F7F" if m == "eager" else "#4C78A8" for m in rows["mode"]]),
                      row=i // 2 + 1, col=i % 2 + 1)
        top = float(rows.value.max()) if len(rows) else 0.0
        fig.update_xaxes(range=[0, (top or 1.0) * 1.45], row=i // 2 + 1, col=i % 2 + 1, gridcolor="#EEEEEE")
    fig.update_yaxes(categoryorder="array", categoryarray=modes, autorange="reversed")
    fig.update_annotations(font_size=settings.font_size)
    return style(fig, settings, "Per mode", max(settings.chart_px, 200 + 2 * settings.lane_px // 3 * len(modes)))
