"""Every scene of the default talk, legible from the back of the room, in the real browser at 1920 × 1080 with the
sidebar folded and open (issue 45): its headline at 40 px or more, the line under it at 24 px or more and whole
on one line, the chart's tick labels at 18 px or more (read from the SVG text Plotly draws), and the chart above
the fold. A caption too long for its line was set smaller, down to 0.8 rem (12.8 px); now a line that does not fit
fails here and is written shorter. The same floors hold in what `python -m fusionviz export` draws, read from the
SVG kaleido draws the PNG from (tests/recorded/test_shipped_charts.py checks the layout it is handed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

import ui.web.selectors as ST
from fusionviz.charts.export import CHROMIUM, HEADLINE_PX, TICK_PX
from fusionviz.charts.registry import VIEWS
from fusionviz.cli import main
from fusionviz.records.talk import load_talk
from tests.e2e.pages import SLIDE, charts_still, open_page, settle

ROOT = Path(__file__).resolve().parents[2]
TALK = load_talk(ROOT / "talks" / "fusion_story.toml", views=VIEWS)
HEADLINE_FLOOR, LINE_FLOOR = 40, 24  # px, issue 45's: a headline, the caption line under it

# The scene on screen as drawn: the headline and its line (their computed size, the line's drawn width against its
# box's, and how many lines each takes), every tick label of the visible plot (the font size Plotly set on it), and
# where the plot ends.
MEASURE = """() => {
  const head = document.querySelector('[data-fv-headline]'), line = document.querySelector('[data-fv-line]');
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find((p) => p.checkVisibility());
  const lines = (e) => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight));
  const ticks = plot ? [...plot.querySelectorAll('g')].filter((g) => /^[xy]\\d*tick$/.test(g.getAttribute('class')))
    .map((g) => g.querySelector('text')).filter((t) => t && t.textContent.trim() && t.checkVisibility())
    .map((t) => parseFloat(t.style.fontSize || getComputedStyle(t).fontSize)) : [];
  return head && line && plot && {
    headline: head.textContent, headlinePx: parseFloat(getComputedStyle(head).fontSize),
    line: line.textContent, linePx: parseFloat(getComputedStyle(line).fontSize),
    lineDrawn: line.scrollWidth, lineBox: line.clientWidth, lineLines: lines(line),
    headlineCut: head.scrollWidth > head.clientWidth,
    ticks, plotBottom: plot.getBoundingClientRect().bottom, screen: window.innerHeight};
}"""


def scene_on_screen(page: Page, number: int) -> dict[str, Any]:
    """The scene `number` (from 1) as drawn, once Streamlit's run has ended and its title is the scene's."""
    title = f"{number} / {len(TALK.scenes)} · "
    page.get_by_text(title, exact=False).first.wait_for(timeout=120_000)
    settle(page)
    page.wait_for_function(f"({MEASURE})() !== null", timeout=60_000)
    charts_still(page)  # the plot's text is laid out a frame after it is drawn
    found: dict[str, Any] = page.evaluate(MEASURE)
    return found


def measured_talk(page: Page) -> list[tuple[int, dict[str, Any]]]:
    """Every scene of the talk as drawn, stepping with the ▶ button."""
    found = []
    for number in range(1, len(TALK.scenes) + 1):
        if number > 1:
            page.locator(f"{ST.keyed('story_next')} button").click()
        found.append((number, scene_on_screen(page, number)))
    return found


def problems(number: int, scene: dict[str, Any]) -> list[str]:
    """What on scene `number` a room cannot read, or is cut, or lies below the fold."""
    where = f"scene {number} ({scene['headline']!r})"
    found = []
    if scene["headlinePx"] < HEADLINE_FLOOR or scene["headlineCut"]:
        found.append(f"{where}: headline at {scene['headlinePx']} px, cut: {scene['headlineCut']}")
    if scene["linePx"] < LINE_FLOOR or scene["lineDrawn"] > scene["lineBox"] or scene["lineLines"] > 1:
        found.append(f"{where}: line at {scene['linePx']} px, {scene['lineDrawn']} px drawn in {scene['lineBox']} "
                     f"px, {scene['lineLines']} lines: {scene['line']!r}")
    if scene["ticks"] and min(scene["ticks"]) < TICK_PX:
        found.append(f"{where}: tick labels at {min(scene['ticks'])} px")
    if scene["plotBottom"] > scene["screen"]:
        found.append(f"{where}: the chart ends at {scene['plotBottom']:.0f} px, below the {scene['screen']} px screen")
    return found


@pytest.mark.parametrize("sidebar", ["folded", "open"])
def test_every_scene_of_the_talk_is_legible_at_1920_by_1080(server: str, browser: Browser, sidebar: str) -> None:
    page = open_page(browser, SLIDE)
    page.goto(f"{server}/Story")
    scene_on_screen(page, 1)
    if sidebar == "open":
        page.locator(ST.SIDEBAR_OPEN).first.click()
        page.wait_for_function(f"document.querySelector({ST.SIDEBAR!r}).getBoundingClientRect().right > 200")
        settle(page)
    scenes = measured_talk(page)
    print(f"\nsidebar {sidebar}: " + "; ".join(
        f"{n}: headline {s['headlinePx']:g} px, line {s['linePx']:g} px ({s['lineDrawn']}/{s['lineBox']} px), "
        f"ticks {min(s['ticks'], default=0):g}-{max(s['ticks'], default=0):g} px, chart to {s['plotBottom']:.0f}"
        for n, s in scenes))
    assert len(scenes) == len(TALK.scenes)
    assert [p for n, s in scenes for p in problems(n, s)] == []
    assert sum(bool(s["ticks"]) for _, s in scenes) >= len(scenes) - 2  # the ticks were read (the animation and
    # the grid's heat map may carry none)
    page.close()


TITLE_PX = re.compile(r'<text class="gtitle"[^>]*?font-size: ?([\d.]+)px')
TICK_PX_DRAWN = re.compile(r'<g class="[xy]\d*tick"><text[^>]*?font-size: ?([\d.]+)px')


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_each_view_of_the_talk_exported_as_a_slide_keeps_the_floors(tmp_path: Path) -> None:
    """`export --view … --format svg` of the first scene of each view in the talk, the picture kaleido draws a PNG
    from: its title (the headline) drawn at HEADLINE_PX or more, every tick label at TICK_PX or more."""
    firsts = {scene.view: (number, scene) for number, scene in reversed(list(enumerate(TALK.scenes, start=1)))}
    drawn = []
    for number, scene in sorted(firsts.values(), key=lambda found: found[0]):
        out = tmp_path / f"scene_{number}.svg"
        args = ["export", str(ROOT / "sessions" / scene.session), "--view", scene.view, "--format", "svg",
                "--out", str(out), *(["--mode", scene.mode] if scene.mode else [])]
        assert main(args) == 0, scene
        svg = out.read_text()
        titles = [float(size) for size in TITLE_PX.findall(svg)]
        ticks = [float(size) for size in TICK_PX_DRAWN.findall(svg)]
        assert titles, f"scene {number}: no title drawn"
        drawn.append((number, scene.view, min(titles), min(ticks, default=0.0)))
    print("\nexported: " + "; ".join(f"{n} ({v}): title {t:g} px, ticks from {k:g} px" for n, v, t, k in drawn))
    assert [(n, v, t) for n, v, t, _ in drawn if t < HEADLINE_PX] == []
    assert [(n, v, k) for n, v, _, k in drawn if 0 < k < TICK_PX] == []
    assert sum(k > 0 for *_, k in drawn) >= len(drawn) - 1  # the ticks were read (the animation's still may have
    # none)
