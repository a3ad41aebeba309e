"""Page set-up shared by every page: config, title, intro and the presentation toggle, and a first visit's page
drawn top first (ui/web)."""

from __future__ import annotations

import streamlit as st

from fusionviz.charts.style import ChartSettings
from ui import state, warm, web


def setup_page(title: str, intro: str, *, always_presents: bool = False,
               restyles_in_browser: bool = False) -> ChartSettings:
    """Page config, title, intro and the presentation toggle; returns the chart settings of the mode. A page
    that `always_presents` (a talk) has no toggle and leaves the other pages' mode as it was; one that
    `restyles_in_browser` draws the same elements in both modes, and its toggle reruns nothing else."""
    state.set_page_presents(always_presents)
    on = state.presentation()
    st.set_page_config(page_title=f"fusionviz · {title}", page_icon="⚡", layout="wide",
                       initial_sidebar_state="collapsed" if on else "auto")
    if always_presents:
        web.show_mode(True)
        return ChartSettings.presentation()
    head, toggle = st.columns([5, 1], vertical_alignment="bottom")
    head.title(title)
    with toggle:
        (_toggle_fragment if restyles_in_browser and not web.plain() else _toggle)(title)
    with web.desk_only("intro"):
        st.caption(intro)
    return ChartSettings.presentation() if on else ChartSettings()


def _toggle(title: str) -> None:
    """The page's presentation toggle, kept across pages, and the page's mode."""
    key = state.presentation_toggle(title)
    st.toggle("Presentation", key=key, on_change=state.toggled, args=(key,),
              help="Large type, one chart that fits the screen; the sidebar folds away")
    web.show_mode(state.presentation(), key)


_toggle_fragment = st.fragment(_toggle)  # a flip restyles the page in the browser and reruns this alone


def top_only(page: state.Page) -> bool:
    """Whether this run of `page` draws its top only: the browser's first of it, which leaves the rest, the lab's
    measuring widgets included, to the next run (`ask_for_the_rest`). Presentation mode's chart is not at the top:
    drawn whole."""
    return not (state.painted(page) or state.presentation()) and web.draws_top_first()


def ask_for_the_rest(page: state.Page) -> None:
    """The element that asks for the next run once the first chart is on screen; until then the rest of `page` is
    pending (`state.rest_pending`)."""
    state.leave_rest(page)
    web.ask_for_the_rest(f"fv_after_paint_{page}", lambda: _painted(page))


def _painted(page: state.Page) -> None:
    state.set_painted(page)
    warm.page_shown()
