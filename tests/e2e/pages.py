"""What the browser tests share about the page: the screens they open it on, and how they wait for Streamlit and
for a chart."""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser, Page, WebSocket
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

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


@dataclass
class _Runs:
    """The reruns a page asked of Streamlit's server and the runs it saw end, numbered in the order seen (its
    websocket's BackMsg and ForwardMsg frames)."""

    seen: int = 0
    asked: int = 0  # the number of the last rerun asked
    ended: int = 0  # of the last run ended (not one cut short by a newer rerun)
    settled: int = 0  # the last number seen when `settle` last returned

    def watch(self, socket: WebSocket) -> None:
        socket.on("framesent", self.sent)
        socket.on("framereceived", self.received)

    def sent(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes) and BackMsg.FromString(payload).WhichOneof("type") == "rerun_script":
            self.seen += 1
            self.asked = self.seen

    def received(self, payload: str | bytes) -> None:
        if not isinstance(payload, bytes):
            return
        message = ForwardMsg.FromString(payload)
        if (message.WhichOneof("type") == "script_finished"
                and message.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN):
            self.seen += 1
            self.ended = self.seen


_RUNS: weakref.WeakKeyDictionary[Page, _Runs] = weakref.WeakKeyDictionary()
RERUN_ASKED_WITHIN_S = 0.5  # how long after an action its rerun may take to be asked (a click's is a few ms)


def open_page(browser: Browser, viewport: dict[str, int], **options: Any) -> Page:
    """A new page whose reruns `settle` follows."""
    page = browser.new_page(viewport=viewport, **options)  # type: ignore[arg-type]
    runs = _RUNS[page] = _Runs()
    page.on("websocket", runs.watch)
    return page


def settle(page: Page) -> None:
    """Wait until Streamlit has ended every run the page asked for (after an action, the rerun it asks, once
    asked), the current script run has finished, and the browser has the code of every element it drew."""
    runs = _RUNS[page]
    deadline = time.monotonic() + RERUN_ASKED_WITHIN_S
    while runs.asked <= runs.settled and time.monotonic() < deadline:  # an action's rerun may not be asked yet
        page.wait_for_timeout(20)
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
    while runs.ended < runs.asked:
        assert time.monotonic() < deadline, "Streamlit did not end the run the page asked for"
        page.wait_for_timeout(20)
    page.wait_for_selector(ST.RUNNING, state="detached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(ELEMENTS_LOADED, timeout=RUN_TIMEOUT_MS)
    runs.settled = runs.seen


# A JS function of a quiet time (ms): true once every plot on screen has kept its place, size, marks and text
# boxes that long. Plotly lays a plot's text out after drawing it, and a plot drawn above moves those below.
CHARTS_STILL = """(quiet) => {
  const now = JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].filter((p) => p.checkVisibility())
    .map((p) => [p.getBoundingClientRect(), p.querySelectorAll('path').length,
      [...p.querySelectorAll('text')].map((t) => t.getBoundingClientRect())]));
  const seen = globalThis.fusionvizTestCharts;
  if (!seen || seen.now !== now) {
    globalThis.fusionvizTestCharts = { now, at: performance.now() };
    return false;
  }
  return performance.now() - seen.at >= quiet;
}"""
CHARTS_QUIET_MS = 250


def wait_for_charts(page: Page, count: int) -> None:
    """Wait until `count` Plotly charts have drawn (Streamlit shows placeholders first) and every chart on screen
    holds still."""
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {count}", timeout=60_000)
    charts_still(page)


def charts_still(page: Page) -> None:
    """Wait until every chart on screen has held still for `CHARTS_QUIET_MS`."""
    page.wait_for_function(CHARTS_STILL, arg=CHARTS_QUIET_MS, polling=50, timeout=60_000)


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
