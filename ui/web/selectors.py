"""Every selector of Streamlit's own page that the app relies on: the one file an upgrade of Streamlit can break.

Streamlit marks its elements with `data-testid` attributes and `st*` classes, and gives a keyed element (a
container, a widget) the class `st-key-<key>`; none of it is a public API. The Python and the stylesheet take them
from here by name, the scripts as the object `ST` (`script`), and so do the browser tests (tests/e2e).
"""

from __future__ import annotations

import json
import re

KEY_PREFIX = "st-key-"  # the class of a keyed element: this, then its key (`key_class`)
HEADER = 'header[data-testid="stHeader"]'
MAIN = '[data-testid="stMain"]'
MAIN_BLOCK = ".stMainBlockContainer"  # the main column, under the header
SIDEBAR = 'section[data-testid="stSidebar"]'
SIDEBAR_FOLDED = "data-collapsed"  # the sidebar's attribute: "true" while it is folded away
SIDEBAR_BUTTON = 'button[aria-controls="stSidebar"]'  # folds or opens it: `aria-expanded` says which
SIDEBAR_NAV = '[data-testid="stSidebarNav"]'  # the pages' links
SIDEBAR_OPEN = '[data-testid="stExpandSidebarButton"]'  # opens the sidebar, folded
LAYOUT_WRAPPER = '[data-testid="stLayoutWrapper"]'  # the wrapper a container is laid out in
ELEMENT = '[data-testid="stElementContainer"]'
SELECTBOX = '[data-testid="stSelectbox"]'
CHECKBOX = '[data-testid="stCheckbox"]'
TOGGLE = '[data-testid="stToggle"]'
UPLOADER_INPUT = '[data-testid="stFileUploaderDropzoneInput"]'
PLOTLY_CHART = '[data-testid="stPlotlyChart"]'  # Streamlit's own Plotly chart
RUNNING = '[data-testid="stStatusWidget"]'  # on the page while a script run is in flight
STALE = '[data-stale="true"]'  # an element of the run before, not yet drawn again by the run in flight
EXCEPTION = '[data-testid="stException"]'
SKELETON = '[data-testid="stSkeleton"]'  # an element whose code is still loading
# Text that presentation mode sets large: widgets' labels, options and inputs, buttons, metrics, captions, code.
WIDGET_TEXT = ('[data-testid="stWidgetLabel"] p', '[data-baseweb="select"] div', '[data-baseweb="tag"] span',
               '[role="option"]', '[data-testid="stSelectbox"] input', '[data-testid="stMultiSelect"] input',
               '[data-testid="stNumberInput"] input', '[data-testid="stTextInput"] input',
               '[data-testid="stSliderThumbValue"]', '[data-testid="stMetricLabel"] p',
               '[data-testid="stRadio"] label p', ".stButton button p", ".stDownloadButton button p",
               '[data-testid="stCaptionContainer"] p', '[data-testid="stMarkdownContainer"] code')


def key_class(key: str) -> str:
    """The class Streamlit gives the element of key `key`."""
    return KEY_PREFIX + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def keyed(key: str) -> str:
    """The selector of the element of key `key`."""
    return "." + key_class(key)


def keyed_from(prefix: str) -> str:
    """The selector of every element whose key starts with `prefix`."""
    return f'[class*="{KEY_PREFIX}{prefix}"]'


def script(js: str, **more: str) -> str:
    """`js` (an element's module) with the selectors above in front of it as `const ST = {...}`, and `more` (its
    own selectors made from them) among them."""
    found = {name: value for name, value in globals().items() if name.isupper() and isinstance(value, str)}
    return f"const ST = {json.dumps({**found, **more}, sort_keys=True)};\n{js}"
