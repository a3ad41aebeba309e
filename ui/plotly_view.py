"""A Plotly chart that stays mounted, for the large timelines: a new figure redraws the same plot in place.

`st.plotly_chart` makes each new figure a new element: it remounts, passes the figure's JSON through its
theme twice and draws it twice, 0.21-0.26 s per switch on the benchmark machine where Plotly's own redraw takes
0.02-0.03 s (benchmarks/RESULTS.md). This element (Streamlit's components v2) keeps one plot per key and calls
`Plotly.react` on it. plotly.js, the copy plotly.py bundles, is served by the app and named in every page's
head (ui/page_head.py), so the browser has it before the first plot mounts and caches it across pages and
visits. Its module is kept as `fusionvizPlotly` the moment it has run, and the element draws with that: the
global `Plotly` is set by whichever copy loads last (Streamlit's own charts carry another version), so a
page's timeline would have depended on what it drew first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
from plotly.io.json import to_json_plotly

from ui.memo import memo

_PLOT = st.components.v2.component(
    "fusionviz.plotly_view", js=Path(__file__).with_name("plotly_view.js").read_text(), isolate_styles=False)


def figure_json(fig: Any) -> str:
    """`fig` as Plotly JSON, made once per figure object: the figures the pages keep are drawn again on every
    rerun."""
    return str(memo(fig, ("json",), fig.to_json))


def box_of(value: Any) -> tuple[float, float] | None:
    """A box's x range as (low, high), or None where the value is not two distinct numbers."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    try:
        low, high = sorted(float(x) for x in value)
    except (TypeError, ValueError):
        return None
    return (low, high) if low < high else None


@dataclass(frozen=True)
class Presented:
    """A figure's presentation layout (Plotly JSON) and config: the plot is drawn with them while the page is in
    presentation mode, its data unchanged."""

    layout_json: str
    config: dict[str, Any]

    @classmethod
    def of(cls, layout: dict[str, Any], config: dict[str, Any]) -> Presented:
        return cls(to_json_plotly(layout), config)


@dataclass(frozen=True)
class Picker:
    """A view picker (a radio) the plot follows in the browser, ahead of the server's run (ui/served_views.py):
    `radio`, the picker's CSS class; `caption`, the mark of the caption's element (`data-fv-caption`), which a
    switch replaces; `views`, for each option's label, the URL of its figure and caption, and its config;
    `shown`, the label of the view the plot is sent; `ahead`, the labels fetched at once and drawn hidden in the
    browser's idle time; `buttons`, for a picker of buttons (a talk's ◀ and ▶), the label each button's text
    shows."""

    radio: str
    caption: str
    views: dict[str, dict[str, Any]]
    shown: str
    ahead: list[str]
    buttons: dict[str, str] = dataclasses.field(default_factory=dict)


def plotly_view(figure_json: str, key: str, config: dict[str, Any], *, present: Presented | None = None,
                on_box: Callable[[], None] | None = None, picker: Picker | None = None) -> dict[str, Any] | None:
    """The figure (Plotly JSON) on a plot kept under `key`, with its `present` layout in presentation mode
    (plotly.js comes with the page, ui/page_head.py). Returns the point clicked in the run this one answers, if
    any, as its customdata by field name (a trace names them in its meta, `charts.customdata.Fields`); `on_box`
    runs before the rerun a box drawn on the plot starts (it reads the box with `state.drawn_box(key)`, see
    `box_of`); the plot follows `picker` in the browser."""
    shown = {"layout": present.layout_json, "config": present.config} if present else None
    follows = dataclasses.asdict(picker) if picker else None
    result = _PLOT(key=key, data={"figure": figure_json, "config": config, "present": shown, "picker": follows},
                   on_click_change=lambda: None, on_box_change=on_box or (lambda: None))
    click = result.get("click") if result else None
    return click if isinstance(click, dict) else None
