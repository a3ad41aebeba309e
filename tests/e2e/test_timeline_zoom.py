"""Zooming a large timeline in the browser, through the real reruns a drawn box makes (AppTest cannot draw one):
time slices, a box that narrows the window until every kernel is drawn, narrower until each can be clicked, a
click for the kernel, and Whole back to the slices; each box answered by one chart, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from fusionviz.charts.timeline import CLICK_KERNELS, DETAIL_KERNELS
from tests.e2e.pages import VIEWPORT, no_exceptions, open_page, settle
from tests.synthetic import encoded, gpu_trace

KERNELS = DETAIL_KERNELS + 2_000  # one iteration: more kernels than the detailed view draws, so it starts as slices

TIMELINE_DRAWN = """() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]
    .some(t => t.checkVisibility() && t.textContent.startsWith('Kernel timeline'))"""

# The kernel timeline's plot on screen (the page may hold hidden ones drawn ahead): the start of the scripts below.
TIMELINE_PLOT = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.checkVisibility()
      && (p.querySelector('.gtitle')?.textContent || '').startsWith('Kernel timeline'));
"""

PLOT_BOX = TIMELINE_PLOT + """  plot.scrollIntoView();
  const r = plot.querySelector('.nsewdrag').getBoundingClientRect();
  return {x: r.left, y: r.top, width: r.width, height: r.height};
}"""

CLICK_POINT = TIMELINE_PLOT + """  const click = plot._fullData.find(t => t.name === 'click');
  if (!click) return null;
  const xa = plot._fullLayout.xaxis, ya = plot._fullLayout.yaxis;
  const r = plot.querySelector('.nsewdrag').getBoundingClientRect();
  const i = Math.floor(click.x.length / 2);
  return {x: r.left + xa.l2p(click.x[i]), y: r.top + ya.l2p(click.y[i])};
}"""


@pytest.fixture(scope="module", autouse=True)
def large_trace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A library of one synthetic trace, a single iteration of KERNELS kernels (set before `server`)."""
    folder = tmp_path_factory.mktemp("sessions")
    (folder / "large.trace.json.gz").write_bytes(encoded(gpu_trace(1, KERNELS)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSIONVIZ_SESSIONS_DIR", str(folder))
        yield folder


def drag(page: Page, start: float, end: float) -> None:
    """Draw a box on the timeline from `start` to `end` (fractions of the plot's width), top to bottom."""
    box = page.evaluate(PLOT_BOX)
    page.mouse.move(box["x"] + box["width"] * start, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * end, box["y"] + box["height"] - 5, steps=5)
    page.mouse.up()


def timelines(page: Page) -> int:
    return int(page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]
        .filter(t => t.checkVisibility() && t.textContent.startsWith('Kernel timeline')).length"""))


def test_a_box_narrows_a_large_timeline_until_each_kernel_can_be_clicked(server: str, browser: Browser) -> None:
    page = open_page(browser, VIEWPORT)
    page.goto(f"{server}/Trace_explorer")
    page.get_by_text("slices of time").wait_for(timeout=120_000)
    page.wait_for_function(TIMELINE_DRAWN, timeout=60_000)  # plotly.js is read once, after the page's text
    settle(page)

    drag(page, 0.40, 0.60)  # a fifth of 8,000 kernels: each drawn, more than can be clicked
    page.get_by_text("Every kernel in").wait_for(timeout=60_000)
    settle(page)
    assert page.get_by_text("slices of time").count() == 0
    assert page.get_by_text("Every kernel in the whole").count() == 0
    assert page.get_by_text(f"around {CLICK_KERNELS:,} kernels or fewer").count() == 1  # not clickable yet
    assert page.evaluate(CLICK_POINT) is None and timelines(page) == 1

    drag(page, 0.45, 0.50)  # a twentieth of the 1,600 in the window: about 80, each with its click marker
    page.get_by_text("click a kernel for its code").wait_for(timeout=60_000)
    settle(page)
    point = page.evaluate(CLICK_POINT)
    assert point is not None and timelines(page) == 1
    page.mouse.move(point["x"], point["y"])
    page.wait_for_timeout(300)  # Plotly picks the clicked point from the hover
    page.mouse.click(point["x"], point["y"])
    page.get_by_text("triton_poi_fused_add_mul_0").first.wait_for(timeout=60_000)  # what the kernel is
    settle(page)
    assert page.get_by_text("was not captured in this session").count() == 1

    page.get_by_role("button", name="Whole").click()
    page.get_by_text("slices of time").wait_for(timeout=60_000)
    settle(page)
    assert page.get_by_role("button", name="Whole").count() == 0 and timelines(page) == 1
    no_exceptions(page)
    page.close()
