"""A page's first run in a browser draws its top only; the rest follows once the browser has painted the first
chart. Sent in one run, the lab's whole page reached the browser within 0.3 s and was laid out in one go: its
first chart waited on every element below it (1.2-1.5 s of Streamlit's rendering on the benchmark machine,
benchmarks/RESULTS.md). Where no browser asks (AppTest, which runs no JavaScript) the page is drawn whole, as it
is in presentation mode, whose chart is not at the top.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import state, warm

_AFTER_PAINT = st.components.v2.component(
    "fusionviz.after_paint", js=Path(__file__).with_name("first_paint.js").read_text(), isolate_styles=False)


def top_only(page: state.Page) -> bool:
    """Whether this run of `page` draws its top only: the browser's first of it, which leaves the rest, the
    lab's measuring widgets included, to the next run (`ask_for_the_rest`)."""
    return not (state.painted(page) or state.presentation() or not st.context.headers.get("User-Agent"))


def ask_for_the_rest(page: state.Page) -> None:
    """The element that asks for the next run once the first chart is on screen; until then the rest of
    `page` is pending (`state.rest_pending`)."""
    state.leave_rest(page)
    _AFTER_PAINT(key=f"fv_after_paint_{page}", on_painted_change=lambda: _painted(page))


def _painted(page: state.Page) -> None:
    state.set_painted(page)
    warm.page_shown()
