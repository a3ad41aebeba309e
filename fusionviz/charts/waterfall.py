"""The attribution ladder as a waterfall: eager's latency, then each step's change per call with its interval,
the main ladder (eager → eager as one CUDA graph → reduce-overhead → max-autotune) above the side one (eager →
default → max-autotune-no-cudagraphs). Green bars made the call faster, red ones slower; the hover says which
mechanism dominated."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from fusionviz.analysis.ladder import MAIN_LADDER, Step
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, VERDICT_COLOURS, ChartSettings, style


@dataclass(frozen=True)
class WaterfallBar:
    """One bar: from `base_us` by `delta_us` (eager's own bar: from 0 by its latency), its interval's ends as
    changes, and the words of its hover."""

    label: str
    base_us: float
    delta_us: float
    low_us: float
    high_us: float
    hover: str
    colour: str


def waterfall_bars(report: Report) -> list[WaterfallBar]:
    """Eager's latency, then every timed step of the main ladder and of the side one (the Report's), each bar
    starting where its source mode's median latency is."""
    latencies = report.latencies
    if "eager" not in latencies:
        return []
    eager = latencies["eager"]
    bars = [WaterfallBar("eager", 0.0, eager.median * 1e3, eager.low * 1e3, eager.high * 1e3,
                         f"eager: {eager.median * 1e3:.1f} µs per call", EAGER_COLOUR)]
    steps: list[Step] = [s for s in report.ladder if s.delta_us is not None]
    steps.sort(key=lambda s: s.target not in MAIN_LADDER)  # the main ladder first, in its order
    for s in steps:
        assert s.delta_us is not None
        start = latencies[s.source].median * 1e3
        colour = VERDICT_COLOURS["faster" if s.delta_us.high < 0 else "slower" if s.delta_us.low > 0
                                 else "no clear difference"]
        bars.append(WaterfallBar(f"→ {s.target}", start, s.delta_us.median, s.delta_us.low, s.delta_us.high,
                                 s.mechanism, colour))
    return bars


def waterfall_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Horizontal bars, eager on top; each step's error bar is its interval of paired rounds."""
    bars = waterfall_bars(report)
    fig = go.Figure(go.Bar(
        y=[b.label for b in bars], x=[b.delta_us for b in bars], base=[b.base_us for b in bars], orientation="h",
        marker_color=[b.colour for b in bars],
        error_x={"type": "data", "symmetric": False, "array": [b.high_us - b.delta_us for b in bars],
                 "arrayminus": [b.delta_us - b.low_us for b in bars], "color": "#333333", "thickness": 1.5},
        hovertext=[b.hover for b in bars], hovertemplate="%{hovertext}<extra></extra>", cliponaxis=False))
    fig.update_xaxes(title_text="µs per call: eager's latency, then each step's change (p10–p90 of paired rounds)",
                     gridcolor="#EEEEEE", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    height = max(settings.chart_px, 120 + settings.lane_px * 2 // 3 * len(bars))
    return style(fig, settings, "Where the time went, step by step", height)


def draw_waterfall(report: Report, asked: Asked) -> go.Figure:
    return waterfall_figure(report, asked.settings)
