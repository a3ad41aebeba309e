"""Page set-up shared by every page: config, title, and the presentation toggle kept across pages."""

from __future__ import annotations

import streamlit as st

from fusionviz.charts.style import ChartSettings
from ui import state

# Presentation mode: large type everywhere a projector's audience reads, selectors, buttons and tables
# included (their menus open in a layer of their own, outside the main block); little padding and a see-through
# header, so a chart fits the screen; no focus frame around the page when a clicker's key steps a scene. The
# sidebar stays, collapsed, so the configuration can change without leaving the mode.
PRESENTATION_CSS = """<style>
header[data-testid="stHeader"] {background: transparent; pointer-events: none;}
[data-testid="stMain"]::before {box-shadow: none !important;}
header[data-testid="stHeader"] button, header [data-testid="stMainMenu"] {pointer-events: auto;}
.stMainBlockContainer {padding-top: 0.9rem; padding-bottom: 0.5rem;}
.stMainBlockContainer h1 {font-size: 2.2rem; padding: 0;}
.stMainBlockContainer p, .stMainBlockContainer li, section[data-testid="stSidebar"] p {font-size: 1.45rem;}
[data-testid="stWidgetLabel"] p, [data-baseweb="select"] div, [data-baseweb="tag"] span, [role="option"],
[data-testid="stSelectbox"] input, [data-testid="stMultiSelect"] input, [data-testid="stNumberInput"] input,
[data-testid="stTextInput"] input, [data-testid="stSliderThumbValue"], [data-testid="stMetricLabel"] p,
[data-testid="stRadio"] label p, .stButton button p, .stDownloadButton button p,
[data-testid="stCaptionContainer"] p,
[data-testid="stMarkdownContainer"] code {font-size: 1.35rem !important;}
.fv-table {border-collapse: collapse; width: 100%; font-size: 1.35rem; margin-bottom: 0.5rem;}
.fv-table th, .fv-table td {padding: 0.15rem 0.6rem; text-align: right; white-space: nowrap;}
.fv-table th {font-weight: 600; border-bottom: 2px solid #D0D5DD; white-space: normal; overflow-wrap: anywhere;}
.fv-table tbody tr:nth-child(even) {background: #F3F5F8;}
</style>"""


# The sidebar folds and opens at once: animated, the page is laid out again on every frame of it and the charts
# redrawn once it settles, after the presentation toggle has answered (benchmarks/RESULTS.md).
SIDEBAR_CSS = '<style>section[data-testid="stSidebar"] {transition: none !important;}</style>'


def setup_page(title: str, intro: str, *, always_presents: bool = False) -> ChartSettings:
    """Page config, title, and the presentation toggle (a page that `always_presents` has none, and leaves
    the toggle of the other pages as it was); returns the chart settings to draw with."""
    state.set_page_presents(always_presents)
    on = state.presentation()
    st.set_page_config(page_title=f"fusionviz · {title}", page_icon="⚡", layout="wide",
                       initial_sidebar_state="collapsed" if on else "auto")
    st.html(SIDEBAR_CSS)
    if on:
        st.html(PRESENTATION_CSS)
    if always_presents:
        return ChartSettings.presentation()
    head, toggle = st.columns([5, 1], vertical_alignment="bottom")
    head.title(title)
    key = f"_pres_{title}"
    st.session_state[key] = on  # the mode is kept across pages; each page's toggle shows it
    toggle.toggle("Presentation", key=key, on_change=lambda: state.set_presentation(st.session_state[key]),
                  help="Large type, one chart that fits the screen; the sidebar folds away")
    # The intro's slot is there in both modes, so a toggle leaves every element under it where it was: Streamlit
    # keys elements by position, and a shift would remount the whole page (its charts drawn anew).
    intro_slot = st.empty()
    if on:
        return ChartSettings.presentation()
    intro_slot.caption(intro)
    return ChartSettings()
