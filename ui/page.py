"""Page set-up shared by every page: config, title, and the presentation toggle kept across pages."""

from __future__ import annotations

import streamlit as st

from fusionviz.charts.style import ChartSettings
from ui import state

PRESENTATION_CSS = """<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"] {display: none;}
.stMainBlockContainer p, .stMainBlockContainer li {font-size: 1.45rem;}
</style>"""


def setup_page(title: str, intro: str) -> ChartSettings:
    """Page config, title, and the presentation toggle; returns the chart settings to draw with."""
    st.set_page_config(page_title=f"fusionviz · {title}", page_icon="⚡", layout="wide")
    head, toggle = st.columns([5, 1])
    head.title(title)
    on = toggle.toggle("Presentation", value=state.presentation(), key=f"_pres_{title}",
                       help="Large fonts, controls hidden, one chart per screen")
    state.set_presentation(on)
    if on:
        st.markdown(PRESENTATION_CSS, unsafe_allow_html=True)
        return ChartSettings.presentation()
    st.caption(intro)
    return ChartSettings()
