"""The charts' shared look: fixed colours per kernel class and strategy, fonts and sizes as frozen settings
(`ChartSettings.presentation()` for projectors), and the layout every figure gets."""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

# One fixed colour per kernel class, so a class looks the same in every figure and every session.
CLASS_COLOURS: dict[str, str] = {
    "gemm": "#4C78A8",
    "triton_pointwise": "#F58518",
    "triton_reduction": "#E45756",
    "triton_template": "#B279A2",
    "triton": "#FF9DA6",
    "cpp_fused": "#54A24B",
    "aten": "#9D755D",
    "copy": "#BAB0AC",
    "communication": "#D67195",
    "memory": "#17BECF",
    "other": "#EECA3B",
}
CPU_COLOURS: dict[str, str] = {"op": "#8F8F8F", "launch": "#3A3A3A", "graph_call": "#2F5D8A"}
REGION_FILL = "rgba(76, 120, 168, 0.16)"
BREAK_COLOUR = "#D62728"


@dataclass(frozen=True)
class ChartSettings:
    """Fonts and sizes. `presentation()` gives the large-font variant for talks and projectors."""

    font_size: int = 13
    title_size: int = 16
    lane_px: int = 96  # height of one mode's block (kernel lane + CPU lane) on the timeline
    chart_px: int = 380  # height of the other charts
    label_chars: int = 22  # a box label's line, in characters at most (longer labels wrap)
    plot_px: int = 1100  # the width a chart's plot is laid out for (the lab's column), where a figure must know it

    @classmethod
    def presentation(cls) -> ChartSettings:
        return cls(font_size=22, title_size=30, lane_px=115, chart_px=640, label_chars=16, plot_px=1670)

    def chars_across(self, slots: float) -> int:
        """How many characters of the figure's font fit in one of `slots` equal columns of the plot (at
        CHAR_EM of the font size a character, Arial's average with room to spare)."""
        return max(6, int(self.plot_px / max(slots, 1.0) / (CHAR_EM * self.font_size)))


DEFAULT_SETTINGS = ChartSettings()


# A font every browser has, or one of the same widths (Liberation Sans is metric-compatible with Arial): the
# toolbar camera's PNG is laid out in the page, whose web font (Source Sans) measured the margins, and drawn
# without it, in a wider fallback, so the longest y label ran off the left edge.
FONT_FAMILY = "Arial, 'Liberation Sans', Helvetica, sans-serif"
EDGE_PX = 12  # room between the picture's edge and the title or the y labels
CHAR_EM = 0.6  # a character's width, in font sizes, where a figure estimates the room text takes


def _styled(settings: ChartSettings, title: str, height: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """What `style` sets: the layout's keys, and each axis's."""
    font = {"size": settings.font_size, "family": FONT_FAMILY}
    layout = {
        # The title is pinned to the top, clear of the edge, and the margin leaves two rows for the legend under it.
        "title": {"text": title, "font": {"size": settings.title_size, "family": FONT_FAMILY}, "y": 1,
                  "yanchor": "top", "yref": "container", "pad": {"t": EDGE_PX, "l": EDGE_PX}},
        "font": font,
        "height": height,
        "margin": {"l": EDGE_PX, "r": 10, "t": 40 + EDGE_PX + settings.title_size + 2 * settings.font_size,
                   "b": 40},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "left", "x": 0, "font": font},
        "hoverlabel": {"font": font, "align": "left"},
        "plot_bgcolor": "white",
    }
    # Set on the axes too: Streamlit's chart theme sizes ticks itself and would ignore layout.font. Margins
    # grow to fit tick labels, so the longest mode name is never cut, whatever size the chart is drawn at.
    axis = {"tickfont": font, "title": {"font": font}, "automargin": True}
    return layout, axis


def style(fig: go.Figure, settings: ChartSettings, title: str, height: int) -> go.Figure:
    """Title, fonts, height, margins and legend: the same on every figure."""
    layout, axis = _styled(settings, title, height)
    fig.update_layout(**layout)
    fig.update_xaxes(**axis)
    fig.update_yaxes(**axis)
    fit_axis_titles(fig, settings.font_size, settings.plot_px)
    return fig


def fit_axis_titles(fig: go.Figure, font_size: int, plot_px: int | None) -> None:
    """Each axis title written on as many lines as its axis needs. A title longer than its axis runs past the
    plot, into the chart's title or off the picture (the Trace explorer's "kernel µs per iteration (every stream
    added, memory operations out)" on a 380 px chart). The room: a y axis's share of the plot's height (the
    figure's height less its margins); an x axis's share of `plot_px` (None: x titles are left as they are)."""
    margin = fig.layout.margin
    plot_h = (fig.layout.height or 0) - (margin.t or 0) - (margin.b or 0)
    per_char = CHAR_EM * font_size
    for axes, length in ((fig.select_yaxes(), plot_h), (fig.select_xaxes(), plot_px or 0)):
        for axis in axes if length > 0 else ():
            text = axis.title.text
            low, high = axis.domain or (0.0, 1.0)
            chars = max(8, int(length * (high - low) / per_char))
            if text and len(text.replace("<br>", " ")) > chars:
                axis.title.text = "<br>".join(textwrap.wrap(text.replace("<br>", " "), chars))


TITLE_LINE_EM = 1.25  # a title line's height, in its font size


def fit_title(fig: go.Figure, settings: ChartSettings) -> go.Figure:
    """`fig`'s title written on as many lines as a plot `settings.plot_px` wide needs, the top margin grown by the
    lines it gained: a chart in one of two columns ran "Cumulative time over the schedule: mark_dynamic is ahead
    from call 1" off its right edge. For a figure laid out narrower than the page's column (`style` leaves a
    title as it is)."""
    text = (fig.layout.title.text or "").replace("<br>", " ")
    lines = textwrap.wrap(text, max(12, int(settings.plot_px / (CHAR_EM * settings.title_size))))
    if len(lines) > 1:
        gained = round((len(lines) - 1) * TITLE_LINE_EM * settings.title_size)
        height = fig.layout.height or settings.chart_px
        # Plotly anchors a title of several lines by its first line: the lines it gained are moved down under the
        # top edge, or the first would be drawn above it
        fig.update_layout(title={"text": "<br>".join(lines), "y": 1 - gained / height},
                          margin={"t": (fig.layout.margin.t or 0) + gained}, height=height + gained)
    return fig


def restyled_layout(fig: go.Figure, settings: ChartSettings, height: int) -> dict[str, Any]:
    """`fig`'s layout (as Plotly JSON) with the fonts, margins and `height` of `settings`, its data untouched:
    the presentation layout a plot in the browser switches to without the figure being drawn again
    (ui/plotly_view.py). Merged as plain dicts: through Plotly's objects it took 0.03-0.08 s on a timeline."""
    layout, axis = _styled(settings, fig.layout.title.text, height)
    out = _merged(fig.layout.to_plotly_json(), layout)
    for name in out:
        if re.fullmatch(r"[xy]axis\d*", name):
            out[name] = _merged(out[name], axis)
    return out


def _merged(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`base` with `patch` laid over it, nested dicts merged key by key (as `update_layout` does)."""
    out = dict(base)
    for key, value in patch.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


# A mode against eager, by its verdict, wherever a chart colours one (latency bars, the crossover grid).
VERDICT_COLOURS: dict[str, str] = {"faster": "#54A24B", "slower": "#E45756", "no clear difference": "#A8B3BF"}
EAGER_COLOUR = "#7F7F7F"

LEGEND_BELOW_PX = 110  # `legend_below`'s bottom margin

# One fixed colour per strategy, so a strategy looks the same in every sweep figure.
STRATEGY_COLOURS: dict[str, str] = {
    "static": "#E45756",
    "dynamic": "#4C78A8",
    "automatic": "#54A24B",
    "mark_dynamic": "#B279A2",
    "buckets": "#F58518",
}
FALLBACK_COLOUR = "#000000"


def legend_below(fig: go.Figure) -> go.Figure:
    """Legend under the x axis: five strategies wrap to two lines, which would cover a half-width title."""
    fig.update_layout(legend={"yanchor": "top", "y": -0.22}, margin={"b": LEGEND_BELOW_PX})
    fit_axis_titles(fig, fig.layout.font.size or DEFAULT_SETTINGS.font_size, None)  # the plot is shorter now
    return fig


def si_number(value: float, unit: str = "") -> str:
    """A number in SI prefixes and at most three figures: (2.5e11, "FLOP/s") → "250 GFLOP/s", 5e7 → "50M"."""
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0), ("m", 1e-3),
                          ("µ", 1e-6)):
        if abs(value) >= scale * 0.9995 or prefix == "µ":
            number = f"{value / scale:.3g}"
            return f"{number} {prefix}{unit}" if unit else f"{number}{prefix}"
    raise AssertionError("unreachable: the last prefix always matches")


def log_ticks(low: float, high: float, unit: str = "") -> tuple[list[float], list[str]]:
    """Ticks of a log axis from `low` to `high`, each labelled in full at the axis's own font: decades where the
    range spans two and a half or more, else 1-2-5 in each decade. Left to itself, Plotly labels a short log
    axis's 2s and 5s in a smaller type than the decades (under 18 px on a slide)."""
    low, high = max(low, 1e-30), max(high, low * 10)
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = (1,) if math.log10(high / low) >= 2.5 else (1, 2, 5)
    values = [m * 10.0 ** e for e in range(first, last + 1) for m in steps if low <= m * 10.0 ** e <= high]
    if len(values) < 2:  # a range within one step: its ends
        values = [low, high]
    return values, [si_number(v, unit) for v in values]
