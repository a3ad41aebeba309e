"""Bytes moved per iteration, one row per run (eager first): the estimate, split by where its figures came from
(op shapes for ATen and library kernels, Inductor's for its own), the DRAM bytes the hardware counted beside
it where counters were folded in, and the intermediates fusion kept on chip; each row's label gives its kernels
and launches per iteration. Where no bytes are known the figure says why instead of drawing empty axes."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from fusionviz.analysis.bytes_moved import SAME_PCT, BytesMoved, RunBytes, size_words
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.roofline import COMPILED_COLOUR
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, ChartSettings, legend_below, style

SOURCES = {"shapes": ("estimated from op shapes", EAGER_COLOUR), "inductor": ("estimated by Inductor", COMPILED_COLOUR)}
MEASURED_COLOUR, KEPT_COLOUR, NOTE_COLOUR = "#4C78A8", "#54A24B", "#6B7280"
BAR = 0.26  # a bar's thickness, in rows; the row's three bars sit at -BAR, 0 and +BAR
TITLE = "Bytes moved per iteration: estimated, measured, and kept on chip"


@dataclass(frozen=True)
class Row:
    """One run's bars and the words beside them."""

    label: str
    parts: dict[str, float]  # estimated bytes by source
    estimated: str  # the estimate's words ("134 MB", "≥ 134 MB (bytes known for 52% …)"), "" where none is known
    measured: float | None
    kept: float | None
    kept_words: str
    hover: str


def bytes_rows(found: BytesMoved) -> list[Row]:
    """The figure's rows, from the report's bytes (`Report.bytes_moved`)."""
    return [_row(r) for r in found.runs]


def _row(r: RunBytes) -> Row:
    kernels = f"{r.kernels:g} kernel{'s' if r.kernels != 1 else ''}"
    launches = f" · {r.launches:g} launch{'es' if r.launches != 1 else ''}" if r.launches is not None else ""
    partial = r.known_pct < 100 - SAME_PCT
    label = f"<b>{r.mode}</b><br>{kernels}{launches}"
    estimated = "" if r.estimated is None else size_words(r.estimated)
    if estimated and partial:
        estimated = f"≥ {estimated} (bytes known for {r.known_pct:.0f}% of its kernel time)"
    if r.mode == "eager" or r.on_chip is None:
        kept, words = None, "" if r.mode == "eager" else "kept on chip: not known"
    else:
        kept = float(r.kept_bytes) if r.kept_bytes else None
        words = (f"{r.kept_intermediates} intermediate{'s' if r.kept_intermediates != 1 else ''} kept on chip, "
                 f"{size_words(r.kept_bytes)}" if r.kept_bytes else "nothing kept on chip")
    return Row(label, {s: r.by_source.get(s, 0.0) for s in SOURCES}, estimated, r.measured, kept, words, _hover(r))


def _hover(r: RunBytes) -> str:
    lines = [f"<b>{r.mode}</b>: {size_words(r.estimated) if r.estimated is not None else 'no'} bytes estimated "
             f"(known for {r.known_pct:.0f}% of its kernel time)",
             f"DRAM counted: {size_words(r.measured)}" if r.measured is not None else f"DRAM: {r.measured_note}"]
    if r.on_chip_note:
        lines.append(f"on chip: {r.on_chip_note}")
    for group in r.on_chip or ():
        ops = Counter(op for op, _ in group.absorbed)
        lines.append(f"{', '.join(group.kernels)}: {len(group.absorbed)} eager kernels "
                     f"({', '.join(f'{op} ×{n}' if n > 1 else op for op, n in ops.items())}), "
                     f"{group.intermediates} results ({size_words(group.bytes)}) never reach memory")
    return "<br>".join(textwrap.shorten(line, 160) for line in lines)


def bytes_figure(found: BytesMoved, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    if found.why:
        return _why_figure(found.why, settings)
    rows = bytes_rows(found)
    ys = list(range(len(rows)))
    fig = go.Figure()
    base = [0.0] * len(rows)
    last = {i: next((s for s in reversed(SOURCES) if row.parts[s]), None) for i, row in enumerate(rows)}
    for source, (name, colour) in SOURCES.items():
        x = [row.parts[source] for row in rows]
        if any(x):
            text = [row.estimated if last[i] == source else "" for i, row in enumerate(rows)]
            fig.add_trace(_bars([y - BAR for y in ys], x, text, name, colour, rows, base=list(base)))
            base = [b + v for b, v in zip(base, x, strict=True)]
    fig.add_trace(_bars(ys, [row.measured or 0.0 for row in rows],
                        [size_words(row.measured) if row.measured is not None else "DRAM not counted" for row in rows],
                        "DRAM measured (Nsight Compute)", MEASURED_COLOUR, rows))
    compiled = [(y, row) for y, row in zip(ys, rows, strict=True) if row.kept_words]
    fig.add_trace(_bars([y + BAR for y, _ in compiled], [row.kept or 0.0 for _, row in compiled],
                        [row.kept_words for _, row in compiled], "intermediates kept on chip", KEPT_COLOUR,
                        [row for _, row in compiled]))
    fig.update_traces(textfont_size=round(settings.font_size * 0.8))
    fig.update_layout(barmode="overlay")
    widest = max([*base, *(row.measured or 0.0 for row in rows), *(row.kept or 0.0 for row in rows), 1.0])
    fig.update_xaxes(title_text="bytes per iteration", tickformat="~s", ticksuffix="B", gridcolor="#EEEEEE",
                     range=[0, widest * 1.3])
    fig.update_yaxes(tickvals=ys, ticktext=[row.label for row in rows], autorange="reversed", showgrid=False,
                     zeroline=False)
    height = max(settings.chart_px, 120 + round(settings.lane_px * 1.1) * len(rows))
    return legend_below(style(fig, settings, TITLE, height))


def _bars(y: Sequence[float], x: Sequence[float], text: list[str], name: str, colour: str, rows: list[Row],
          base: list[float] | None = None) -> go.Bar:
    """One kind of bar across the rows, its figure written after it (a missing figure's note at zero, grey)."""
    return go.Bar(y=y, x=x, base=base, orientation="h", width=BAR, name=name, marker_color=colour, text=text,
                  textposition="outside", cliponaxis=False, constraintext="none",
                  outsidetextfont={"color": [NOTE_COLOUR if not v else "#333333" for v in x]},
                  hovertext=[row.hover for row in rows], hovertemplate="%{hovertext}<extra></extra>")


def _why_figure(why: str, settings: ChartSettings) -> go.Figure:
    """No axes: the reason there are no bytes, where the chart would be."""
    fig = go.Figure()
    fig.add_annotation(text="<br>".join(textwrap.wrap(why, 70, break_on_hyphens=False)), x=0.5, y=0.5,
                       xref="paper", yref="paper", showarrow=False,
                       font={"size": settings.font_size, "color": NOTE_COLOUR})
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return style(fig, settings, TITLE, settings.chart_px)


def draw_bytes(report: Report, asked: Asked) -> go.Figure:
    return bytes_figure(report.bytes_moved, asked.settings)
