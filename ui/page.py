"""Page set-up shared by every page: config, title, intro and the presentation toggle (ui/presentation.py)."""

from __future__ import annotations

import streamlit as st

from fusionviz.charts.style import ChartSettings
from ui import presentation, state


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
        presentation.show_mode()
        return ChartSettings.presentation()
    head, toggle = st.columns([5, 1], vertical_alignment="bottom")
    head.title(title)
    with toggle:
        presentation.show_toggle(title, restyles_in_browser=restyles_in_browser)
    with presentation.desk_only("intro"):
        st.caption(intro)
    return ChartSettings.presentation() if on else ChartSettings()
