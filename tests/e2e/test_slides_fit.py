"""What a speaker puts on a slide, in the real browser: the toolbar camera's PNG of each lab chart leaves a
blank edge on the left and at the top (it clipped "max-autotune-no-cudagraphs" and set the title on the edge:
the page's web font measured the margins and the PNG was drawn in a wider fallback), and the Story's caption
is whole with the sidebar open (it was cut to "… e…") and its legend clear of the source stamp. Every scene's
type and fit, sidebar folded and open: test_scene_type.py."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
from PIL import Image
from playwright.sync_api import Browser

import ui.web.selectors as ST
from fusionviz.charts.style import EDGE_PX
from tests.e2e.pages import SLIDE, VIEWPORT, open_page, settle

CAMERA = '[data-title="Download plot as a PNG"]'


def test_the_camera_png_leaves_an_edge_around_the_labels_and_the_title(server: str, browser: Browser,
                                                                        tmp_path: Path) -> None:
    page = open_page(browser, VIEWPORT, accept_downloads=True)
    page.goto(server)
    # the page's top comes first and its rest (the timeline) once the browser has painted it: between the two
    # runs nothing runs, and `settle` alone once returned there (CI, a loaded machine)
    page.locator(".js-plotly-plot .gtitle", has_text="Kernel timeline").first.wait_for(timeout=120_000)
    settle(page)
    plots = page.locator(".js-plotly-plot")
    titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"  # the presentation's, hidden
                           ".map(p => p.checkVisibility() && p.querySelector('.gtitle')?.textContent || '')")
    checked = []
    for i, title in enumerate(titles):
        if not title.startswith(("Latency per call", "Kernel timeline")):
            continue
        plots.nth(i).scroll_into_view_if_needed()
        plots.nth(i).hover()
        with page.expect_download(timeout=30_000) as download:
            plots.nth(i).locator(CAMERA).click(force=True)
        path = tmp_path / f"camera_{i}.png"
        download.value.save_as(path)
        picture = Image.open(io.BytesIO(path.read_bytes())).convert("L")
        ink = np.asarray(picture) < 200  # anything drawn darker than the light grid lines
        scale = picture.size[0] / 960  # the camera draws a desk chart at 960 × 540, doubled
        edge = int(EDGE_PX * scale * 0.75)
        assert picture.size == (1920, 1080)
        assert not ink[:, :edge].any(), f"{title}: something is drawn within {edge} px of the left edge"
        assert not ink[:edge, :].any(), f"{title}: something is drawn within {edge} px of the top"
        checked.append(title)
    assert any(t.startswith("Latency per call") for t in checked) and any(t.startswith("Kernel") for t in checked)


def test_the_story_caption_is_whole_with_the_sidebar_open(server: str, browser: Browser) -> None:
    page = open_page(browser, SLIDE)
    page.goto(f"{server}/Story")
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    settle(page)
    page.locator(ST.SIDEBAR_OPEN).first.click()
    page.wait_for_function(f"document.querySelector({ST.SIDEBAR!r}).getBoundingClientRect().right > 200")
    for number in range(2, 16):  # to the graph break scene (15), whose legend wraps to two rows
        page.locator(f"{ST.keyed('story_next')} button").click()
        # each click's scene on screen before the next: under a load of 14 on 2 cores a click made while the
        # page still ran the last one's was lost, and the test waited for scene 15 at scene 14
        page.locator("h3", has_text=re.compile(rf"^{number} / ")).first.wait_for(timeout=60_000)
        settle(page)
    caption = page.locator("[data-fv-line]")  # every scene's line: tests/e2e/test_scene_type.py
    fits = caption.evaluate("e => [e.scrollWidth <= e.clientWidth, e.textContent]")
    assert fits[0], f"the caption is cut: {fits[1]}"
    assert page.locator(ST.SIDEBAR).bounding_box()["width"] > 200  # the sidebar is open
    # The legend wraps to two rows at this width: both under the source stamp, where the second ran into it.
    stamp, legend = page.evaluate("""() => {
      const plot = document.querySelector('.js-plotly-plot');
      const box = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
      return [box(plot.querySelector('.gtitle-subtitle')), box(plot.querySelector('.legend'))];
    }""")
    assert legend["top"] >= stamp["bottom"], (stamp, legend)
