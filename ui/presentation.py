"""Presentation mode: large type for a projector, desk-only sections hidden, the sidebar folded.

The mode is a class on the page's root element (`html.fv-present`), set in the browser by a small element
(`presentation.js`), under which one stylesheet, always on the page, applies. A page whose elements are the
same in both modes (`restyles_in_browser`) keeps its toggle in a fragment: a flip restyles the page and redraws
its kept plots in the browser (each carries its presentation layout, ui/plotly_view.py) while the server only
records the mode: 0.20-0.28 s where a rerun of the whole page took 0.38-0.64 s (benchmarks/RESULTS.md). Elsewhere the
flip reruns the page, which draws its charts for the mode. Either way the server knows the mode
(`state.presentation()`), so every later run and page draws for it.
"""

from __future__ import annotations

import re
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from ui import state

# Large type everywhere a projector's audience reads, selectors, buttons and tables included (their menus open
# in a layer of their own, outside the main block); little padding and a see-through header, so a chart fits
# the screen, which clicks pass through but on its buttons (its toolbar lay over the page's toggle); no focus
# frame around the page when a clicker's key steps a scene.
PRESENTATION_RULES = """
header[data-testid="stHeader"] {background: transparent;}
header[data-testid="stHeader"], header[data-testid="stHeader"] * {pointer-events: none;}
header[data-testid="stHeader"] button, header[data-testid="stHeader"] button * {pointer-events: auto;}
[data-testid="stMain"]::before {box-shadow: none !important;}
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
"""

DESK, PRESENTING = "fv_desk_", "fv_present_"  # key prefixes of the containers shown in one mode only

# The rules nested under the mode's class (CSS nesting: Chromium 120, Firefox 117, Safari 17.2). The sidebar
# folds and opens at once: animated, the page is laid out again on every frame of it and the charts redrawn
# once it settles, after the toggle has answered. A hidden section's layout wrapper is hidden too: empty, it
# still took the column's gap (16 px), and the lab's desk, kept on the page while presenting, pushed the
# presentation 3 px past the fold.
STYLESHEET = f"""<style>
html.fv-present {{{PRESENTATION_RULES}
[class*="st-key-{DESK}"], [data-testid="stLayoutWrapper"]:has(> [class*="st-key-{DESK}"]) {{display: none;}}
}}
html:not(.fv-present) :is([class*="st-key-{PRESENTING}"],
  [data-testid="stLayoutWrapper"]:has(> [class*="st-key-{PRESENTING}"])) {{display: none;}}
section[data-testid="stSidebar"] {{transition: none !important;}}
</style>"""

_MODE = st.components.v2.component(
    "fusionviz.presentation", js=Path(__file__).with_name("presentation.js").read_text(), isolate_styles=False)


def desk_only(name: str) -> DeltaGenerator:
    """A container shown only at the desk (long tables, downloads): hidden in presentation mode."""
    return st.container(key=DESK + name)


def presentation_only(name: str) -> DeltaGenerator:
    """A container shown only in presentation mode."""
    return st.container(key=PRESENTING + name)


def key_class(key: str) -> str:
    """The CSS class Streamlit gives the element of a widget with this key."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def show_mode(toggle_key: str | None = None) -> None:
    """The stylesheet and the element that sets the page's mode; it also follows the toggle of `toggle_key`
    in the browser. Every page draws it at the top."""
    st.html(STYLESHEET)
    _MODE(key="fv_presentation_mode",
          data={"on": state.presentation(), "toggle": key_class(toggle_key) if toggle_key else None})


def show_toggle(title: str, *, restyles_in_browser: bool) -> None:
    """The page's presentation toggle, kept across pages; in a fragment where the page `restyles_in_browser`."""
    (_toggle_fragment if restyles_in_browser else _toggle)(title)


def _toggle(title: str) -> None:
    key = state.presentation_toggle(title)
    st.toggle("Presentation", key=key, on_change=state.toggled, args=(key,),
              help="Large type, one chart that fits the screen; the sidebar folds away")
    show_mode(key)


_toggle_fragment = st.fragment(_toggle)
