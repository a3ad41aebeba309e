"""The app in a real headless Chromium against `streamlit run app.py`; screenshots go to a temporary folder,
or to docs/screenshots/ with `--refresh-screenshots`.

Uses Debian's /usr/bin/chromium through pip playwright (no browser download); skipped without it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import Error as PlaywrightError

import ui.web.selectors as ST
from fusionviz.charts.registry import VIEWS
from fusionviz.records.session import Session
from fusionviz.records.talk import load_talk
from tests.e2e.pages import (
    CHART_DRAWN,
    ELEMENTS_LOADED,
    RUN_TIMEOUT_MS,
    SLIDE,
    VIEWPORT,
    no_exceptions,
    open_page,
    settle,
    wait_for_charts,
)

ROOT = Path(__file__).resolve().parents[2]
PRESENTED_LAB = ST.keyed("fv_present_lab")  # the lab's presentation, on the page at the desk too, hidden


def shoot(page: Page, path: Path) -> None:
    """A screenshot of the page once every element is drawn (no grey skeleton: `pages.ELEMENTS_LOADED`)."""
    page.wait_for_function(ELEMENTS_LOADED, timeout=RUN_TIMEOUT_MS)
    page.screenshot(path=str(path))


def choose(page: Page, box: Locator, option: str) -> None:
    """Pick `option` in a selectbox; again if a rerun redrew the list while it was open (its option detached)."""
    for attempt in range(3):
        box.click()
        try:
            page.get_by_role("option", name=option).click(timeout=10_000)
            break
        except PlaywrightError:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
            settle(page)
    settle(page)


def click_kernel_bar(page: Page, kernel_class: str) -> None:
    """Click the first bar of one kernel class on the timeline (bars are SVG paths in trace order)."""
    index = page.evaluate(
        """(name) => {
            const plot = [...document.querySelectorAll('.js-plotly-plot')]
                .find(p => p.checkVisibility()
                    && (p.querySelector('.gtitle')?.textContent || '').startsWith('Kernel timeline'));
            plot.scrollIntoView();
            return plot.data.findIndex(t => t.name === name);
        }""", kernel_class)
    assert index >= 0
    plot = page.locator(".js-plotly-plot:visible").filter(has_text="Kernel timeline")
    box = plot.locator(".barlayer .trace").nth(index).locator(".point path").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.wait_for_timeout(400)  # Plotly picks the clicked point from the hover
    page.mouse.click(x, y)


# In the frame the page's first chart is drawn in: whether the lab's lower sections are there yet.
FIRST_CHART = f"""() => {CHART_DRAWN}
    && {{rest: document.body.innerText.includes('Kernels and generated code'),
        widgets: document.body.innerText.includes('Measure on this machine')}}"""


def test_a_first_visit_draws_the_first_chart_then_the_rest_of_the_lab(server: str, browser: Browser) -> None:
    """The browser's first run of the lab draws its top; the rest, the measuring widgets with it, follows,
    unasked, once that is on screen; plotly.js, named in the page's head, is fetched once; and the
    presentation's chart is drawn ahead."""
    page = open_page(browser, SLIDE)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "fusionviz-plotly-" in r.url else None)
    page.goto(server)
    first = page.wait_for_function(FIRST_CHART, timeout=120_000, polling="raf").json_value()
    assert first == {"rest": False, "widgets": False}
    page.get_by_text("Kernels and generated code").wait_for(timeout=60_000)
    page.get_by_text("Measure on this machine").wait_for(timeout=60_000)
    settle(page)
    page.get_by_text("Kernel timeline").first.wait_for()
    assert len(fetched) == 1, fetched
    # The presentation's chart, hidden at the desk, is drawn ahead at the width it is shown at: the toggle
    # shows it drawn.
    plot = f"document.querySelector('{PRESENTED_LAB} .js-plotly-plot')"
    page.wait_for_function(f"() => !!{plot}?._fullLayout", timeout=30_000)
    drawn_at = page.evaluate(f"{plot}._fullLayout.width")
    page.get_by_text("Presentation").click()
    shown_at = page.wait_for_function(f"() => {plot}.checkVisibility() && {plot}.clientWidth", polling="raf",
                                      timeout=30_000).json_value()
    assert abs(shown_at - drawn_at) < 2, (shown_at, drawn_at)
    assert page.evaluate(f"{plot}._fullLayout.width") == drawn_at  # not drawn again
    no_exceptions(page)
    page.close()


# Every plot laid out on the page (not hidden) drawn, those below the window too. A plot's div is a
# .fusionviz-plot from its mount (ui/plotly_view.js); Plotly marks it .js-plotly-plot only once it has drawn it.
EVERY_PLOT_DRAWN = ("[...document.querySelectorAll('.fusionviz-plot')].filter(p => p.offsetParent)"
                    ".every(p => p._fullLayout && p.querySelector('.main-svg'))")
# How many plots are laid out below the window, drawn or not.
PLOTS_BELOW = ("[...document.querySelectorAll('.fusionviz-plot')].filter(p => p.offsetParent && "
               "p.getBoundingClientRect().top >= window.innerHeight).length")


def test_a_session_switch_draws_the_charts_below_the_window_unscrolled(server: str, browser: Browser) -> None:
    """The charts under the window wait for the page's idle time after a switch (ui/plotly_view.js), and come
    then, with nobody scrolling to them."""
    page = open_page(browser, SLIDE)
    page.goto(server)
    page.get_by_text("Kernels and generated code").wait_for(timeout=120_000)
    settle(page)
    sidebar = page.locator(ST.SIDEBAR)
    choose(page, sidebar.locator(ST.SELECTBOX).filter(has_text="Session"),
           "h100_mlp_512x256_float32.json.gz")
    page.get_by_text("The naive loop against this measurement").wait_for(timeout=60_000)
    # The timeline, what fused into what and the naive loop's chart at least, mounted as the run ends.
    page.wait_for_function(f"{PLOTS_BELOW} >= 3", timeout=10_000)
    page.wait_for_function(EVERY_PLOT_DRAWN, timeout=10_000)
    assert page.evaluate("window.scrollY") == 0
    no_exceptions(page)
    page.close()


def test_lab_live_run_timeline_and_kernel_source(server: str, browser: Browser, shots: Path) -> None:
    page = open_page(browser, VIEWPORT)
    page.goto(server)
    page.get_by_text("Source of data: Recorded library").wait_for(timeout=120_000)
    settle(page)
    wait_for_charts(page, 4)
    shoot(page, shots / "first-visit-recorded.png")
    assert page.get_by_text("NVIDIA H200, torch").count() == 1
    no_exceptions(page)

    # The MLP's recorded session sets the measuring widgets to its sizes (512 × 256); measure LayerNorm + GELU
    # at those sizes here.
    sidebar = page.locator(ST.SIDEBAR)
    choose(page, sidebar.locator(ST.SELECTBOX).filter(has_text="Session"),
           "h100_mlp_512x256_float32.json.gz")
    choose(page, sidebar.locator(ST.SELECTBOX).filter(has_text="Model"), "linear_ln_gelu")
    started = time.monotonic()
    sidebar.get_by_role("button", name="Run", exact=True).click()
    # the first timing processes' figures first, said as such (the second may have ended before the browser drew
    # the first's, under load; the box that follows the rest is AppTest's to check, as the run may end any moment)
    partly = re.compile(r"This run was partly timed so far: [12] of 3 timing processes")
    page.get_by_text(partly).wait_for(timeout=RUN_TIMEOUT_MS)
    preview_s = time.monotonic() - started
    settle(page)
    shoot(page, shots / "fusion-lab-partly-timed.png")
    page.get_by_text("This run was measured in").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    first_s = time.monotonic() - started
    assert page.get_by_text("partly timed").count() == 0 and page.get_by_text("Refining:").count() == 0
    assert page.get_by_text("Live on this machine").count() == 1
    # The desk's timeline; the presentation's, drawn ahead in the browser's idle time, is hidden at the desk.
    timeline = page.locator(".js-plotly-plot:visible").filter(has_text="Kernel timeline")
    assert timeline.count() == 1
    no_exceptions(page)

    click_kernel_bar(page, "cpp_fused")
    page.get_by_text("Generated source of").wait_for(timeout=30_000)
    settle(page)
    wait_for_charts(page, 4)
    shoot(page, shots / "fusion-lab-live-cpu.png")

    started = time.monotonic()
    sidebar.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("answered from the cache").wait_for(timeout=30_000)
    cached_s = time.monotonic() - started
    print(f"\nlinear_ln_gelu dim 512 batch 256 in Chromium: first figures {preview_s:.1f} s, first run "
          f"{first_s:.1f} s, cached re-run {cached_s:.2f} s")
    no_exceptions(page)
    page.close()


def test_trace_explorer_compares_session_and_trace(server: str, browser: Browser, shots: Path,
                                                   ln_gelu_session: Session, tmp_path: Path) -> None:
    trace = tmp_path / "default.pt.trace.json"
    trace.write_bytes(ln_gelu_session.run("default").chrome_trace())
    page = open_page(browser, VIEWPORT)
    page.goto(f"{server}/Trace_explorer")
    page.get_by_text("Per-kernel statistics", exact=True).wait_for(timeout=60_000)
    page.get_by_text("Compare with a second file").click()
    settle(page)
    page.get_by_text("Upload a file").last.click()
    settle(page)
    page.locator(ST.UPLOADER_INPUT).last.set_input_files(str(trace))
    page.get_by_text("Kernels that differ").wait_for(timeout=60_000)
    settle(page)
    wait_for_charts(page, 2)
    assert page.locator(".js-plotly-plot").count() >= 2
    no_exceptions(page)
    shoot(page, shots / "trace-explorer-compare.png")
    page.close()


# The timeline's title size in px; NaN until the plot is drawn (its plotly.js is read after the page's run).
TIMELINE_TITLE_PX = """() => parseFloat([...document.querySelectorAll('.js-plotly-plot .gtitle')]
    .find(t => t.textContent.startsWith('Kernel timeline'))?.style.fontSize)"""


def test_the_trace_explorer_presents_in_the_browser(server: str, browser: Browser, shots: Path) -> None:
    """Its toggle restyles the page where it is: the timeline redrawn at its presentation size, the long tables
    hidden, the sidebar folded one click away; and back, the page as it was."""
    page = open_page(browser, SLIDE)
    page.goto(f"{server}/Trace_explorer")
    statistics = page.get_by_text("Per-kernel statistics", exact=True)
    statistics.wait_for(timeout=60_000)
    settle(page)
    sidebar = page.locator(ST.SIDEBAR)
    left_out = page.get_by_text("left out in presentation mode")

    def shown(presenting: bool) -> None:
        page.wait_for_function(f"({TIMELINE_TITLE_PX})() === {30 if presenting else 16}", timeout=RUN_TIMEOUT_MS)
        settle(page)
        assert statistics.is_visible() != presenting and left_out.is_visible() == presenting
        assert sidebar.get_attribute("data-collapsed") == str(presenting).lower()
        no_exceptions(page)

    toggle = page.get_by_text("Presentation", exact=True)
    shown(False)
    # The element that sets the mode found the toggle's input, to restyle the page before the server answers.
    assert page.evaluate(f"document.querySelector('{ST.keyed('_pres_Trace explorer')} input').fusionvizMode")
    toggle.click()
    shown(True)
    shoot(page, shots / "trace-explorer-presentation.png")
    toggle.click()
    shown(False)
    page.close()


def test_methodology_page(server: str, browser: Browser, shots: Path) -> None:
    page = open_page(browser, VIEWPORT)
    page.goto(f"{server}/Methodology")
    page.get_by_role("button", name="Measure both ways").click()
    # the recorded session's chart is on the page from the start: wait for this machine's measurement instead
    page.get_by_text("Source of data: Live on this machine").wait_for(timeout=RUN_TIMEOUT_MS)
    page.locator(".js-plotly-plot").filter(has_text="Naive loop vs proper").wait_for(timeout=RUN_TIMEOUT_MS)
    settle(page)
    assert page.get_by_text("Naive loop: ", exact=False).count() >= 1  # its headline leads
    wait_for_charts(page, 1)
    no_exceptions(page)
    shoot(page, shots / "methodology.png")
    page.close()


def test_dynamic_shapes_page_shows_the_shipped_gpu_sweep(server: str, browser: Browser, shots: Path) -> None:
    page = open_page(browser, VIEWPORT)
    page.goto(f"{server}/Dynamic_shapes")
    page.get_by_text("You are looking at").wait_for(timeout=60_000)
    settle(page)
    wait_for_charts(page, 3)
    assert page.get_by_text("Recorded session: NVIDIA H200").count() == 1
    assert page.get_by_text("Lines that differ").count() == 1
    no_exceptions(page)
    shoot(page, shots / "dynamic-shapes-h200-sweep.png")
    page.close()


def test_presentation_mode_shows_one_large_chart(server: str, browser: Browser, shots: Path) -> None:
    page = open_page(browser, SLIDE)
    page.goto(server)
    page.get_by_text("Source of data: Recorded library").wait_for(timeout=120_000)
    settle(page)
    page.get_by_text("Presentation").click()
    settle(page)
    page.get_by_text("Timeline", exact=True).click()
    settle(page)
    wait_for_charts(page, 1)
    # The sidebar folds away but stays one click off, to change what is on screen without leaving the mode.
    assert page.locator(ST.SIDEBAR).get_attribute(ST.SIDEBAR_FOLDED) == "true"
    # The desk stays on the page, hidden, so the toggle back draws none of it again: one chart is on screen.
    assert page.locator(".js-plotly-plot:visible").count() == 1
    assert page.locator(f"{PRESENTED_LAB} .js-plotly-plot:visible").count() == 1
    assert_nothing_below_the_fold(page)
    no_exceptions(page)
    shoot(page, shots / "presentation-timeline.png")
    page.close()


# The presentation's plot: its title and its caption, as shown.
PRESENTED_VIEW = f"""() => {{
  const plot = [...document.querySelectorAll('{PRESENTED_LAB} .js-plotly-plot')]
      .find(p => p.checkVisibility());
  const caption = document.querySelector('[data-fv-caption="present_view_plot"]');
  return plot && caption
      && {{title: plot.querySelector('.gtitle')?.textContent || '', caption: caption.innerText}};
}}"""


def test_the_presentation_switches_views_in_the_browser(server: str, browser: Browser) -> None:
    """A click on the presentation's view picker draws the view and its caption without the server: they are
    on screen with every message from the browser to the server held back from the click on."""
    page = open_page(browser, SLIDE)
    held, fetched = [False], []

    def hold(ws: Any) -> None:
        server_side = ws.connect_to_server()
        ws.on_message(lambda message: None if held[0] else server_side.send(message))

    page.route_web_socket(re.compile(r".*/_stcore/stream"), hold)
    page.goto(server)
    page.get_by_text("Source of data: Recorded library").wait_for(timeout=120_000)
    settle(page)
    page.get_by_text("Presentation").click()
    settle(page)
    before = page.wait_for_function(PRESENTED_VIEW, timeout=30_000).json_value()
    assert before["title"] and not before["title"].startswith("Kernel timeline")
    # The next view is fetched and drawn ahead, hidden, in the browser's idle time.
    page.wait_for_function(f"""[...document.querySelectorAll('{PRESENTED_LAB} .js-plotly-plot')].some(p =>
        !p.checkVisibility() && (p.querySelector('.gtitle')?.textContent || '').startsWith('Kernel timeline'))""",
                           timeout=30_000)
    held[0] = True
    page.locator(ST.keyed("present_view")).get_by_text("Timeline", exact=True).click()
    after = page.wait_for_function(f"(({PRESENTED_VIEW})() || {{}}).title?.startsWith('Kernel timeline') "
                                   f"&& ({PRESENTED_VIEW})()", timeout=10_000).json_value()
    assert after["caption"] and after["caption"] != before["caption"]
    # A view not fetched ahead is fetched at the click; the view the server drew is kept in the browser.
    page.locator(ST.keyed("present_view")).get_by_text(VIEWS["roofline"].label, exact=True).click()
    page.wait_for_function(f"(({PRESENTED_VIEW})() || {{}}).title !== {after['title']!r}", timeout=10_000)
    page.on("request", lambda r: fetched.append(r.url) if "fusionviz-view-" in r.url else None)
    page.locator(ST.keyed("present_view")).get_by_text(VIEWS["verdict"].label, exact=True).click()
    back = page.wait_for_function(f"(({PRESENTED_VIEW})() || {{}}).title === {before['title']!r} "
                                  f"&& ({PRESENTED_VIEW})()", timeout=10_000).json_value()
    assert back["caption"] == before["caption"] and fetched == []
    no_exceptions(page)
    page.close()


def assert_nothing_below_the_fold(page: Page) -> None:
    """The page does not scroll, and every element of it ends inside the window."""
    fold = page.evaluate(f"""() => {{
        const main = document.querySelector('{ST.MAIN}');
        const bottoms = [...document.querySelectorAll('{ST.MAIN_BLOCK} {ST.ELEMENT}')]
            .map(e => e.getBoundingClientRect()).filter(r => r.height > 0).map(r => r.bottom);
        return {{scroll: main.scrollHeight - main.clientHeight, bottom: Math.max(...bottoms), height: innerHeight}};
    }}""")
    assert fold["scroll"] <= 0 and fold["bottom"] <= fold["height"], fold


def scene_heading(page: Page) -> str:
    return page.locator("h3").first.inner_text()


def assert_stamp_under_title(page: Page) -> None:
    """The chart's source stamp (its title's subtitle) lies under its title: an animation drawn ahead, hidden,
    had its stamp laid over the title."""
    boxes = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.checkVisibility())
      .map(p => [p.querySelector('.gtitle'), p.querySelector('.gtitle-subtitle')]).filter(([t, s]) => t && s)
      .map(([t, s]) => [t.getBoundingClientRect().bottom, s.getBoundingClientRect().top])""")
    assert boxes and all(top >= bottom - 1 for bottom, top in boxes), boxes


def test_the_default_talk_steps_through_every_scene_on_a_1920_by_1080_screen(server: str, browser: Browser,
                                                                              shots: Path) -> None:
    """Every scene of the default talk in turn, forward with the arrow key and a clicker's Page Down, then back:
    each fits the screen with nothing below the fold, draws its chart, and is kept as a screenshot."""
    scenes = load_talk(ROOT / "talks" / "fusion_story.toml", views=VIEWS).scenes
    n = len(scenes)
    page = open_page(browser, SLIDE)
    page.goto(f"{server}/Story")
    page.get_by_text(f"1 / {n}").wait_for(timeout=120_000)
    for i, scene in enumerate(scenes, start=1):
        settle(page)
        assert scene_heading(page).startswith(f"{i} / {n}"), (i, scene_heading(page))
        wait_for_charts(page, 1)
        assert_stamp_under_title(page)
        if scene.view == "animation":
            page.locator(".js-plotly-plot").get_by_text("② move").click()  # step by step: they move, then merge
            page.wait_for_timeout(1_300)  # about halfway: the picture shows them moving
        assert_nothing_below_the_fold(page)
        no_exceptions(page)
        shoot(page, shots / f"story-{i:02d}-{scene.view}.png")
        if i < n:
            page.keyboard.press("ArrowRight" if i % 2 else "PageDown")  # the button's shortcut, or a clicker
            page.get_by_text(f"{i + 1} / {n}").wait_for(timeout=30_000)
    for i in range(n - 1, 0, -1):
        page.keyboard.press("ArrowLeft" if i % 2 else "PageUp")
        page.get_by_text(f"{i} / {n}").wait_for(timeout=30_000)
    settle(page)
    assert scene_heading(page).startswith(f"1 / {n}")
    page.close()
