"""A Plotly chart that stays mounted, for the large timelines: a new figure redraws the same plot in place.

`st.plotly_chart` makes each new figure a new element: it remounts, passes the figure's JSON through its
theme twice and draws it twice, 0.21-0.26 s per switch on the benchmark machine where Plotly's own redraw takes
0.02-0.03 s (benchmarks/RESULTS.md). This element (Streamlit's components v2) keeps one plot per key and calls
`Plotly.react` on it. plotly.js, the copy plotly.py bundles, is written once to the app's static files
(`static/`, served by `server.enableStaticServing`) so the browser caches it across pages and visits; where that
folder cannot be written, an element of its own carries it (sent once per browser session). Its module is kept
as `fusionvizPlotly` the moment it has run, and the element draws with that: the global `Plotly` is set by
whichever copy loads last (Streamlit's own charts carry another version), so a page's timeline would have
depended on what it drew first.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import plotly
import streamlit as st
from plotly.io.json import to_json_plotly
from plotly.offline import get_plotlyjs

from ui.memo import memo

STATIC = Path(__file__).resolve().parents[1] / "static"  # beside app.py, the script `streamlit run` is given
_PLOT = st.components.v2.component(
    "fusionviz.plotly_view", js=Path(__file__).with_name("plotly_view.js").read_text(), isolate_styles=False)


@cache
def plotly_js() -> str:
    """plotly.py's plotly.js as it ships, its module then kept as `fusionvizPlotly`. Not wrapped in a function
    of our own: wrapped (to hand it a CommonJS `module`), Chromium took 1.65-2.47 s to read it where it reads the
    file as it ships in 1.24-1.68 s (three loads each, benchmarks/RESULTS.md)."""
    return get_plotlyjs() + "\n;globalThis.fusionvizPlotly = window.Plotly;\n"


@cache
def _inline_plotly_js() -> Any:
    """The element that carries plotly.js itself, registered only where `static/` cannot be written."""
    return st.components.v2.component(
        "fusionviz.plotly_js", js=plotly_js() + "export default function () {}", isolate_styles=False)


@cache
def plotly_url() -> str | None:
    """The URL of plotly.js among the app's static files, written there the first time; None if it cannot be."""
    digest = hashlib.sha256(plotly_js().encode()).hexdigest()[:12]  # a new build is a new URL to browsers
    name = f"fusionviz-plotly-{plotly.__version__}-{digest}.js"
    path = STATIC / name
    try:
        if not path.exists():
            STATIC.mkdir(exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=STATIC, suffix=".tmp", delete=False) as out:
                out.write(plotly_js())
            os.chmod(out.name, 0o644)
            os.replace(out.name, path)  # whole or absent, for a second server starting at the same time
    except OSError:
        return None
    return f"app/static/{name}"


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


def plotly_view(figure_json: str, key: str, config: dict[str, Any], *, present: Presented | None = None,
                on_box: Callable[[], None] | None = None) -> dict[str, Any] | None:
    """The figure (Plotly JSON) on a plot kept under `key`, with its `present` layout in presentation mode.
    Returns the point clicked in the run this one answers, if any, as its customdata by field name (a trace
    names them in its meta, `charts.customdata.Fields`); `on_box` runs before the rerun a box drawn on the plot
    starts (it reads the box with `state.drawn_box(key)`, see `box_of`)."""
    url = plotly_url()
    shown = {"layout": present.layout_json, "config": present.config} if present else None
    result = _PLOT(key=key, data={"figure": figure_json, "config": config, "plotly_url": url, "present": shown},
                   on_click_change=lambda: None, on_box_change=on_box or (lambda: None))
    if url is None:
        _inline_plotly_js()(key=f"{key}_plotly_js")
    click = result.get("click") if result else None
    return click if isinstance(click, dict) else None
