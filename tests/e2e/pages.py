"""What the browser tests share about the page: the screens they open it on, and how they wait for Streamlit and
for a chart."""

from __future__ import annotations

from playwright.sync_api import Page

import ui.web.selectors as ST

VIEWPORT = {"width": 1500, "height": 4200}  # tall: a full-page screenshot misses Streamlit content below the fold
SLIDE = {"width": 1920, "height": 1080}  # a projector's screen
RUN_TIMEOUT_MS = 240_000

# A JS condition: a Plotly chart is drawn on screen (the page also holds hidden ones, drawn ahead).
CHART_DRAWN = "[...document.querySelectorAll('.js-plotly-plot .main-svg')].some(s => s.checkVisibility())"


# A JS condition: no element of the page is a grey skeleton, which Streamlit shows until the element's code has
# loaded (the lab's sliders and Run button came 3-4 s after the rest on a loaded machine; a clean-clone run beside
# another one at load 8 still had one after 30 s, and there a page's `st.html` stylesheet was not applied yet).
ELEMENTS_LOADED = f"() => !document.querySelector({ST.SKELETON!r})"


def settle(page: Page) -> None:
    """Wait until Streamlit has finished the current script run and the browser has the code of every element
    it drew."""
    page.wait_for_timeout(500)
    page.wait_for_selector(ST.RUNNING, state="detached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(ELEMENTS_LOADED, timeout=RUN_TIMEOUT_MS)


# The trace types of the plots drawn on the page that the page's plotly.js (a partial bundle, ui/web/bundle.py)
# lacks: it would draw each as a scatter, without a word.
UNKNOWN_TRACES = """() => { const known = new Set(Object.keys(globalThis.fusionvizPlotly.PlotSchema.get().traces));
  return [...document.querySelectorAll('.js-plotly-plot')].flatMap(p => [...(p.data || []),
    ...(p._transitionData && p._transitionData._frames || []).flatMap(f => f.data || [])])
    .map(t => t.type || 'scatter').filter(type => !known.has(type)); }"""


def no_exceptions(page: Page) -> None:
    """No exception on the page, and no plot of a trace type its plotly.js cannot draw."""
    assert page.locator(ST.EXCEPTION).count() == 0
    if page.evaluate("!!globalThis.fusionvizPlotly"):
        assert page.evaluate(UNKNOWN_TRACES) == []
