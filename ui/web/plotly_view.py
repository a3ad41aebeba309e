"""A Plotly chart that stays mounted: a new figure redraws the same plot in place (`Plotly.react`), where
`st.plotly_chart` makes each new figure a new element, remounted and drawn twice (benchmarks/RESULTS.md, "A plot
that stays mounted"). The element (Streamlit's components v2, plotly_view.js) keeps one plot per key and draws it
with the plotly.js named in the page's head (ui/web/bundle.py). Run plain (ui/web/switch.py), the figure is drawn
by `st.plotly_chart`, its clicks and boxes read from Streamlit's selection.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

import ui.web.selectors as ST
from ui.web.presentation import PRESENTING, presenting
from ui.web.switch import plain


@cache
def _element() -> Any:
    js = ST.script(Path(__file__).with_name("plotly_view.js").read_text(),
                   PRESENTED_ONLY=ST.keyed_from(PRESENTING))
    return st.components.v2.component("fusionviz.plotly_view", js=js, isolate_styles=False)


def box_of(value: Any) -> tuple[float, float] | None:
    """A box's x range as (low, high), or None where the value is not two distinct numbers."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    try:
        low, high = sorted(float(x) for x in value)
    except (TypeError, ValueError):
        return None
    return (low, high) if low < high else None


def drawn_box(key: str) -> tuple[float, float] | None:
    """The x range of the box last drawn on the plot of key `key`, if any (`plot`'s `on_box` reads it)."""
    value = st.session_state.get(key) or {}
    if plain():
        boxes = (value.get("selection") or {}).get("box") or [{}]
        return box_of(boxes[0].get("x"))
    return box_of(value.get("box"))


@dataclass(frozen=True)
class Presented:
    """A figure's presentation layout (Plotly JSON) and config: the plot is drawn with them while the page is in
    presentation mode, its data unchanged."""

    layout_json: str
    config: dict[str, Any]

    @classmethod
    def of(cls, layout: dict[str, Any], config: dict[str, Any]) -> Presented:
        from plotly.io.json import to_json_plotly  # with the first page, not with the server (app.py imports this)

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


def plot(figure_json: str, key: str, config: dict[str, Any], *, present: Presented | None = None,
         on_box: Callable[[], None] | None = None, picker: Picker | None = None) -> dict[str, Any] | None:
    """The figure (Plotly JSON) on a plot kept under `key`, with its `present` layout in presentation mode.
    Returns the point clicked in the run this one answers, if any, as its customdata by field name (a trace names
    them in its meta, `charts.customdata.Fields`); `on_box` runs before the rerun a box drawn on the plot starts
    (it reads the box with `drawn_box(key)`); the plot follows `picker` in the browser. Run plain, the chart is
    Streamlit's own, which takes clicks and boxes only where `on_box` is given, and follows no picker."""
    if plain():
        return _plain(figure_json, key, config, present, on_box)
    shown = {"layout": present.layout_json, "config": present.config} if present else None
    follows = dataclasses.asdict(picker) if picker else None
    result = _element()(key=key, data={"figure": figure_json, "config": config, "present": shown, "picker": follows},
                        on_click_change=lambda: None, on_box_change=on_box or (lambda: None))
    click = result.get("click") if result else None
    return click if isinstance(click, dict) else None


def _plain(figure_json: str, key: str, config: dict[str, Any], present: Presented | None,
           on_box: Callable[[], None] | None) -> dict[str, Any] | None:
    """`plot` as `st.plotly_chart`: drawn at the `present` layout where the page presents; a clicked point read
    from the selection."""
    import plotly.io as pio

    fig = pio.from_json(figure_json, skip_invalid=True)
    if present is not None and presenting():
        fig.layout = json.loads(present.layout_json)
        config = present.config
    if on_box is None:
        st.plotly_chart(fig, key=key, config=config)
        return None
    event = st.plotly_chart(fig, key=key, config=config, on_select=on_box, selection_mode=("points", "box"))
    points = event["selection"]["points"]
    if not points or "customdata" not in points[0]:
        return None
    meta = fig.data[points[0]["curve_number"]].meta
    fields, custom = meta.get("fields") if isinstance(meta, dict) else None, points[0]["customdata"]
    return dict(zip(fields, custom, strict=False)) if isinstance(fields, list) and isinstance(custom, list) else None
