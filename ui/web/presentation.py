"""Presentation mode in the browser: large type for a projector, desk-only sections hidden, the sidebar folded.

The mode is a class on the page's root element (`html.fv-present`), set in the browser by a small element
(presentation.js), under which one stylesheet, always on the page, applies: a page whose elements are the same in
both modes is restyled by a flip of its toggle with no run of the server, its kept plots redrawn at their
presentation layout (benchmarks/RESULTS.md, "The presentation toggle in the browser"). Run plain
(ui/web/switch.py), the stylesheet holds the rules of the server's mode alone, and a flip reruns the page.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import ui.web.selectors as ST
from ui.web.switch import plain

DESK, PRESENTING = "fv_desk_", "fv_present_"  # key prefixes of the containers shown in one mode only
_MODE = "fv_web_presenting"  # the mode `show_mode` last drew, for a plain chart drawn after it

# Large type everywhere a projector's audience reads, selectors, buttons and tables included (their menus open in
# a layer of their own, outside the main block); little padding and a see-through header, so a chart fits the
# screen, which clicks pass through but on its buttons (its toolbar lay over the page's toggle); no focus frame
# around the page when a clicker's key steps a scene.
PRESENTATION_RULES = f"""
{ST.HEADER} {{background: transparent;}}
{ST.HEADER}, {ST.HEADER} * {{pointer-events: none;}}
{ST.HEADER} button, {ST.HEADER} button * {{pointer-events: auto;}}
{ST.MAIN}::before {{box-shadow: none !important;}}
{ST.MAIN_BLOCK} {{padding-top: 0.9rem; padding-bottom: 0.5rem;}}
{ST.MAIN_BLOCK} h1 {{font-size: 2.2rem; padding: 0;}}
{ST.MAIN_BLOCK} p, {ST.MAIN_BLOCK} li, {ST.SIDEBAR} p {{font-size: 1.45rem;}}
{", ".join(ST.WIDGET_TEXT)} {{font-size: 1.35rem !important;}}
.fv-table {{border-collapse: collapse; width: 100%; font-size: 1.35rem; margin-bottom: 0.5rem;}}
.fv-table th, .fv-table td {{padding: 0.15rem 0.6rem; text-align: right; white-space: nowrap;}}
.fv-table th {{font-weight: 600; border-bottom: 2px solid #D0D5DD; white-space: normal; overflow-wrap: anywhere;}}
.fv-table tbody tr:nth-child(even) {{background: #F3F5F8;}}
"""


def _hidden(prefix: str) -> str:
    """The rule that hides the containers whose keys start with `prefix`, and their layout wrappers: an empty
    wrapper still took the column's gap, and pushed a presentation past the fold."""
    keyed = ST.keyed_from(prefix)
    return f":is({keyed}, {ST.LAYOUT_WRAPPER}:has(> {keyed})) {{display: none;}}"


# The rules nested under the mode's class (CSS nesting: Chromium 120, Firefox 117, Safari 17.2). The sidebar folds
# and opens at once: animated, the page is laid out again on every frame of it and the charts redrawn once it
# settles, after the toggle has answered.
STYLESHEET = f"""<style>
html.fv-present {{{PRESENTATION_RULES}{_hidden(DESK)}
}}
html:not(.fv-present) {{{_hidden(PRESENTING)}}}
{ST.SIDEBAR} {{transition: none !important;}}
</style>"""


def plain_stylesheet(on: bool) -> str:
    """The rules of one mode alone, for a page run plain."""
    return f"<style>{PRESENTATION_RULES + _hidden(DESK) if on else _hidden(PRESENTING)}</style>"


@cache
def _element() -> Any:
    js = ST.script(Path(__file__).with_name("presentation.js").read_text())
    return st.components.v2.component("fusionviz.presentation", js=js, isolate_styles=False)


def desk_only(name: str) -> DeltaGenerator:
    """A container shown only at the desk (long tables, downloads): hidden in presentation mode."""
    return st.container(key=DESK + name)


def presentation_only(name: str) -> DeltaGenerator:
    """A container shown only in presentation mode."""
    return st.container(key=PRESENTING + name)


def show_mode(on: bool, toggle_key: str | None = None) -> None:
    """The stylesheet and the element that sets the page's mode to `on`; in the browser it also follows the toggle
    of key `toggle_key` at once. Every page draws it at the top."""
    st.session_state[_MODE] = on
    if plain():
        st.html(plain_stylesheet(on))
        return
    st.html(STYLESHEET)
    _element()(key="fv_presentation_mode",
               data={"on": on, "toggle": ST.key_class(toggle_key) if toggle_key else None})


def presenting() -> bool:
    """The mode `show_mode` drew this page in."""
    return bool(st.session_state.get(_MODE, False))


def clicker(keys: dict[str, str]) -> None:
    """A presenter's clicker: each key named (`event.key`, "PageDown") presses the button of the key it maps to.
    Drawn once per page; nothing when run plain (the buttons keep their own shortcuts)."""
    if plain():
        return
    buttons = json.dumps({key: f"{ST.keyed(button)} button" for key, button in keys.items()})
    js = f"""<script>
if (!window.fusionvizClicker) {{
  window.fusionvizClicker = true;
  const buttons = {buttons};
  document.addEventListener("keydown", (event) => {{
    const target = buttons[event.key];
    if (!target || event.target.closest("input, textarea, [contenteditable]")) return;
    const button = document.querySelector(target);
    if (button) {{ event.preventDefault(); button.click(); }}
  }});
}}
</script>"""
    st.html(js, unsafe_allow_javascript=True)
