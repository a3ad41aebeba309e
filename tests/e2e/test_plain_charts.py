"""The app run plain (`FUSIONVIZ_PLAIN_CHARTS=1`, ui/web/switch.py) in a real headless Chromium: every page draws its
charts as Streamlit's own Plotly charts, with no middleware (the page's head names no plotly.js of the app's) and
no plot of the app's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

import ui.web.selectors as ST
from tests.e2e.conftest import Served, serve
from tests.e2e.pages import VIEWPORT, no_exceptions, open_page, settle
from ui.web.switch import ENV

# Each page, and the charts it draws of the recorded library on opening: the lab's verdict, metrics, timeline and
# what fused into what; the talk's first scene; the trace explorer's timeline and kernel classes; the naive loop
# against the measurement; the sweep's three charts.
PAGES = {"": 4, "Story": 1, "Trace_explorer": 2, "Methodology": 1, "Dynamic_shapes": 3}
PLAIN_CHARTS_DRAWN = f"document.querySelectorAll('{ST.PLOTLY_CHART} .js-plotly-plot .main-svg').length"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory, **{ENV: "1"})


@pytest.mark.parametrize("path", list(PAGES), ids=lambda p: p or "Fusion_lab")
def test_every_page_draws_its_charts_as_plain_plotly_charts(server: str, browser: Browser, shots: Path,
                                                              path: str) -> None:
    page = open_page(browser, VIEWPORT)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(f"{server}/{path}")
    page.wait_for_function(f"{PLAIN_CHARTS_DRAWN} >= {PAGES[path]}", timeout=120_000)
    settle(page)
    assert page.locator(".fusionviz-plot").count() == 0  # no kept plot
    assert not [url for url in asked if "fusionviz-plotly-" in url or "fusionviz-view-" in url]
    assert "fusionviz-plotly-" not in page.content()  # no middleware: the head is Streamlit's own
    no_exceptions(page)
    page.screenshot(path=str(shots / f"plain-{path or 'Fusion_lab'}.png"))
    page.close()
