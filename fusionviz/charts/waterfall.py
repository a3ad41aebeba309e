"""The attribution ladder as a waterfall: eager's latency, then each rung of the main ladder in its order (eager →
eager as one CUDA graph → reduce-overhead → max-autotune), each bar running from the rung before's latency to
its own; below it, the side branch from eager (eager → default → max-autotune-no-cudagraphs), drawn and labelled
as a branch of its own so that it never reads as the next rung.

Every drawn value is a latency: a bar's ends are two modes' medians and its whisker is the rung's own p10–p90
over every round of every process, so nothing on the chart can fall below zero. The step's paired change (the
two modes' blocks of one round, `analysis.ladder`), which is the better measure of the step itself, colours the
bar (green: the step made the call faster; red: slower; grey: no clear difference) and is worded in its hover.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import plotly.graph_objects as go

from fusionviz.analysis.ladder import MAIN_LADDER, SIDE_LADDER, Step
from fusionviz.analysis.report import Report
from fusionviz.analysis.timing import Estimate
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, VERDICT_COLOURS, ChartSettings, style

MAIN_BRANCH = "main ladder"
SIDE_BRANCH = "side branch from eager"
STEP_WORDS = {"faster": "the step made the call faster", "slower": "the step made the call slower",
              "no clear difference": "no clear difference"}
WHISKER_COLOUR = "#333333"
NOTE_CHARS = 80  # a note's line, in characters: a slide's plot is about 90 wide at its font


@dataclass(frozen=True)
class WaterfallBar:
    """One rung: its bar from `base_us` (the rung before's median latency; 0 for eager) to `end_us` (its own),
    its own latency's p10 and p90 (`low_us`, `high_us`: the whisker), the branch it belongs to, how its step
    changed the call by paired rounds (`change`: a key of STEP_WORDS, "eager" for the baseline), and the words of
    its hover."""

    mode: str
    branch: str
    base_us: float
    end_us: float
    low_us: float
    high_us: float
    change: str
    hover: str

    @property
    def label(self) -> str:
        """The rung's name on the chart, with its median latency, so a speaker can read the bar aloud."""
        return f"{self.mode}: {self.end_us:,.0f} µs" if self.end_us >= 10 else f"{self.mode}: {self.end_us:.1f} µs"

    @property
    def colour(self) -> str:
        return EAGER_COLOUR if self.change == "eager" else VERDICT_COLOURS[self.change]


def _change(step: Step) -> str:
    """How the step changed the call, by its interval of paired rounds."""
    assert step.delta_us is not None
    if step.delta_us.high < 0:
        return "faster"
    return "slower" if step.delta_us.low > 0 else "no clear difference"


def _us(estimate: Estimate) -> tuple[float, float, float]:
    return estimate.median * 1e3, estimate.low * 1e3, estimate.high * 1e3


def waterfall_bars(report: Report) -> list[WaterfallBar]:
    """Eager, then the timed rungs of the main ladder in the ladder's order, then those of the side branch in
    its order (the Report's ladder steps; a rung that did not run is stepped over, its step naming both
    mechanisms)."""
    latencies = report.latencies
    if "eager" not in latencies:
        return []
    median, low, high = _us(latencies["eager"])
    bars = [WaterfallBar("eager", MAIN_BRANCH, 0.0, median, low, high, "eager",
                         f"eager: {median:.1f} µs per call (p10–p90 {low:.1f}–{high:.1f} µs)")]
    timed = [s for s in report.ladder if s.delta_us is not None and {s.source, s.target} <= latencies.keys()]
    for branch, chain in ((MAIN_BRANCH, MAIN_LADDER), (SIDE_BRANCH, SIDE_LADDER)):
        steps = sorted((s for s in timed if s.target in chain[1:] and s.source in chain), key=lambda s:
                       chain.index(s.target))
        for s in steps:
            start = latencies[s.source].median * 1e3
            median, low, high = _us(latencies[s.target])
            hover = (f"<b>{s.source} → {s.target}</b>: {median:.1f} µs per call (p10–p90 {low:.1f}–{high:.1f} µs)"
                     f"<br>{s.mechanism}")
            bars.append(WaterfallBar(s.target, branch, start, median, low, high, _change(s), hover))
    return bars


def not_drawn(report: Report) -> list[tuple[str, str]]:
    """The rungs that could not run and why (CUDA graphs on the CPU, a capture that failed): the reason's first
    clause, for the chart's note, and the whole of it, for the note's hover."""
    return [(f"{s.target} ({s.not_applicable.split(' (')[0].rstrip('.:;')})", f"{s.target}: {s.not_applicable}")
            for s in report.ladder if s.not_applicable]


def waterfall_figure(report: Report, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    """Horizontal bars, eager on top, the main ladder then the side branch, each group named on the axis (a
    two-level axis: branch, then rung); each bar's whisker is its rung's own latency interval."""
    bars = waterfall_bars(report)
    fig = go.Figure(go.Bar(
        y=[[b.branch for b in bars], [b.label for b in bars]], x=[b.end_us - b.base_us for b in bars],
        base=[b.base_us for b in bars], orientation="h", marker_color=[b.colour for b in bars], showlegend=False,
        error_x={"type": "data", "symmetric": False, "array": [b.high_us - b.end_us for b in bars],
                 "arrayminus": [b.end_us - b.low_us for b in bars], "color": WHISKER_COLOUR, "thickness": 1.5},
        hovertext=[b.hover for b in bars], hovertemplate="%{hovertext}<extra></extra>", cliponaxis=False))
    for change in dict.fromkeys(b.change for b in bars if b.change != "eager"):  # the colours' key
        fig.add_trace(go.Bar(x=[None], y=[[bars[0].branch], [bars[0].label]], orientation="h", name=STEP_WORDS[change],
                             marker_color=VERDICT_COLOURS[change], hoverinfo="skip"))
    skipped = not_drawn(report)
    if skipped:
        note = textwrap.wrap("Not drawn: " + "; ".join(short for short, _ in skipped), NOTE_CHARS)
        fig.add_annotation(text="<br>".join(note), hovertext="<br>".join(whole for _, whole in skipped), x=0,
                           xref="paper", xanchor="left", y=0, yref="paper", yshift=-3 * settings.font_size,
                           yanchor="top", showarrow=False, align="left", font={"color": "#6B7280"})
    top = max([b.high_us for b in bars] + [b.end_us for b in bars] + [1.0])
    fig.update_xaxes(title_text="µs per call: each rung's median latency; whisker: its p10–p90",
                     gridcolor="#EEEEEE", range=[0, top * 1.05])
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(barmode="overlay")
    height = max(settings.chart_px, 140 + settings.lane_px * 2 // 3 * len(bars))
    fig = style(fig, settings, "Where the time went, rung by rung", height)
    if skipped:
        fig.update_layout(margin={"b": fig.layout.margin.b + (len(note) + 1) * round(1.4 * settings.font_size)})
    return fig


def draw_waterfall(report: Report, asked: Asked) -> go.Figure:
    return waterfall_figure(report, asked.settings)
