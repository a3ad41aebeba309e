"""A page's first run in a browser may draw its top alone, the rest following once the browser has painted the first
chart: sent in one run, the whole page was laid out in one go and its first chart waited on every element below
it (benchmarks/RESULTS.md, "A first visit: plotly.js with the page, the lab's top first, the presentation drawn
ahead"). This is the element that says the chart is on screen (first_paint.js).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

from ui.web.switch import plain


@cache
def _element() -> Any:
    js = Path(__file__).with_name("first_paint.js").read_text()
    return st.components.v2.component("fusionviz.after_paint", js=js, isolate_styles=False)


def draws_top_first() -> bool:
    """Whether a page may draw its top alone in this run: a browser asks (AppTest runs no JavaScript, and would
    never ask for the rest) and the app does not run plain."""
    return not plain() and bool(st.context.headers.get("User-Agent"))


def ask_for_the_rest(key: str, on_painted: Callable[[], None]) -> None:
    """The element that calls `on_painted` (a callback: the run it starts draws the rest) once the browser has
    painted the page's first chart, or waited 3 s for one."""
    _element()(key=key, on_painted_change=on_painted)
