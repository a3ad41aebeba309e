"""Showing one view of a session so it fits a projector's screen (a talk's scene, the lab's presentation
mode), and stepping through a talk with buttons, the arrow keys or a clicker."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import msgspec
import streamlit as st

from fusionviz.analysis.headline import Headline
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.export import NO_BROWSER, gif_bytes, html_bytes, image_bytes, image_export_available, slide
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.view_captions import view_headline
from fusionviz.charts.views import view_figure, view_problem
from fusionviz.records.session import Session
from fusionviz.records.talk import Scene, Talk
from ui import sections, state, web
from ui.background import Priority, scheduler
from ui.memo import memo
from ui.text import plain

# The chart's height on a 1920 × 1080 screen under the title row, a one-line headline and its line of mechanism
# (measured in Chromium, tests/e2e/test_scene_type.py): tall enough to read from the back of a room, short enough
# that nothing lies below the fold. A headline of two lines takes one line's height off the chart (`fitted_height`).
SCREEN_CHART_PX = 850
PAGE_CHART_PX = SCREEN_CHART_PX - 90  # on a page of its own: room for its title and a view selector above
PACES = [2, 3, 4, 6, 8, 12]  # seconds the animation takes from eager to merged
DEFAULT_PACE = 4
SCENE_PLOT = "story_scene"  # the plot a talk's scenes are drawn on (`show_scene`)
NAV, BACK, NEXT = "story_nav", "◀ back", "next ▶"  # the talk's buttons, and the container they are in

# A screen's type, fixed: legible from the back of a room at 1920 × 1080 (issue 45's floors: a headline 40 px, a
# caption 24 px). Text too long for its line is written shorter (the budgets of `analysis.headline`), never set
# smaller.
HEADLINE_PX = 42
LINE_PX = 26
HEADLINE_LEADING = 1.2  # a headline line's height, in its font size
LINE_LEADING = 1.4
HEADLINE_EM_PER_CHAR = 0.52  # the widest a character of the page's font (semibold) runs on average, in em
# The narrowest the headline is laid out in: the main column at 1920 wide with the sidebar open (measured in
# Chromium), so that a headline that wraps there is given its second line.
HEADLINE_ROOM_PX = 1460


def headline_lines(text: str) -> int:
    """The lines `text` takes as a headline in HEADLINE_ROOM_PX (1 or 2: a headline has 12 words at most)."""
    per_line = int(HEADLINE_ROOM_PX / (HEADLINE_EM_PER_CHAR * HEADLINE_PX))
    return 1 if len(text) <= per_line else 2


def fitted_height(headline: Headline, height: int) -> int:
    """The chart's `height` (laid out under a one-line headline) less the lines the headline takes beyond one."""
    return height - (headline_lines(headline.text) - 1) * round(HEADLINE_PX * HEADLINE_LEADING)


def headline_html(headline: Headline, name: str) -> str:
    """The screen's headline at HEADLINE_PX, and under it its mechanism on one line at LINE_PX, both fixed: what
    a speaker reads aloud, then why. The details are the headline's hover (a fold the room does not see). A
    line that still outgrows its width (a talk's own caption template) ends in an ellipsis, whole on hover;
    the shipped talk's never do (tests/e2e/test_scene_type.py). Marked `data-fv-caption="<name>"`, for a view
    picker that switches it in the browser (`web.Picker`)."""
    details = html.escape(" ".join(headline.details) or headline.text)
    line = html.escape(headline.mechanism)
    return (f'<div data-fv-caption="{html.escape(name)}">'
            f'<div data-fv-headline title="{details}" style="font-size: {HEADLINE_PX}px; font-weight: 600; '
            f'line-height: {HEADLINE_LEADING}; margin: 0">{unbroken(headline.text)}</div>'
            f'<div data-fv-line title="{line}" style="font-size: {LINE_PX}px; line-height: {LINE_LEADING}; '
            f'min-height: {LINE_LEADING}em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis">'
            f'{line}</div></div>')


def unbroken(text: str) -> str:
    """`text` as HTML, each word with a hyphen in it kept whole on its line: a headline of two lines broke
    "max-autotune" after "max-"."""
    return " ".join(f'<span style="white-space: nowrap">{word}</span>' if "-" in word else word
                    for word in html.escape(text).split(" "))


def scene_headline(report: Report, view: str, mode: str | None = None, template: str | None = None) -> Headline:
    """What a view's screen leads with (`view_headline`): its headline, and under it its mechanism or, where a
    talk's scene gives a caption template, that template filled from the data."""
    headline = view_headline(report, view, mode)
    if template is None:
        return headline
    return msgspec.structs.replace(headline, mechanism=template.format(**report.caption_fields(mode)))


def show_view(report: Report, view: str, settings: ChartSettings, key: str, *, mode: str | None = None,
              zoom: tuple[float, float] | None = None, caption: str | None = None, seconds: float = 4.0,
              height: int = SCREEN_CHART_PX, on_click: Callable[[], None] | None = None,
              picker: web.Picker | None = None) -> None:
    """The view's headline and its line (`scene_headline`: `caption`, a talk's template, in place of the
    mechanism) and its figure at `height` (`fitted_height`), stamped with the session it drew (`on_click` is
    called with a clicked point, `state.selected_points(key)`; the plot follows `picker` in the browser); a
    sentence instead where the session cannot show the view."""
    problem = view_problem(report, view, mode)
    if problem:
        st.info(plain(problem[0].upper() + problem[1:] + "."))
        return
    st.html(headline_html(scene_headline(report, view, mode, caption), key))
    fig = kept_figure(report, view, settings, mode=mode, zoom=zoom, seconds=seconds, height=height)
    sections.chart(fig, key, stamp=sections.stamp_of(report), selectable=on_click or False, settings=settings,
                   name=slide_name(report, view), picker=picker)


def slide_name(report: Report, view: str) -> str:
    """The file name a view's slide and its toolbar camera's PNG are saved under."""
    return f"fusionviz-{report.session.config.model}-{view}"


def kept_figure(report: Report, view: str, settings: ChartSettings, *, mode: str | None = None,
                zoom: tuple[float, float] | None = None, seconds: float = 4.0, height: int = SCREEN_CHART_PX) -> Any:
    """The view's figure at `height` less the room its headline takes (`fitted_height`), kept per report: a story
    step or a view switch back to this view draws it from memory, and one built ahead (`build_next`,
    ui/served_views.py) is the one drawn."""
    return memo(report, ("view", view, settings, mode, zoom, seconds, height), lambda: view_figure(
        report, view, settings, mode=mode, zoom=zoom, seconds=seconds).update_layout(
        height=fitted_height(view_headline(report, view, mode), height)))


def slide_downloads(report: Report, view: str, key: str, *, mode: str | None = None,
                    zoom: tuple[float, float] | None = None, seconds: float = 4.0) -> None:
    """The view as a slide (1920 × 1080, stamped): PNG, SVG, offline HTML and, for the animation, a GIF,
    each drawn only when its button is pressed. Without a browser on the server, HTML alone, and why."""
    if view_problem(report, view, mode):
        return
    settings = ChartSettings.presentation()

    def figure() -> Any:
        return slide(view_figure(report, view, settings, mode=mode, zoom=zoom, seconds=seconds),
                     sections.stamp_of(report), settings)

    images = image_export_available()
    name = slide_name(report, view)
    png, svg, page, gif = st.columns(4)
    png.download_button("PNG", lambda: image_bytes(figure(), "png"), f"{name}.png", "image/png", key=f"{key}_png",
                        disabled=not images, width="stretch")
    svg.download_button("SVG", lambda: image_bytes(figure(), "svg"), f"{name}.svg", "image/svg+xml",
                        key=f"{key}_svg", disabled=not images, width="stretch")
    page.download_button("HTML", lambda: html_bytes(figure(), name), f"{name}.html", "text/html", key=f"{key}_html",
                         width="stretch")
    if VIEWS[view].animated:
        gif.download_button("GIF", lambda: gif_bytes(figure()), f"{name}.gif", "image/gif", key=f"{key}_gif",
                            disabled=not images, width="stretch", help="About 25 s to draw: a PNG per frame")
    if not images:
        st.caption(NO_BROWSER[0].upper() + NO_BROWSER[1:] + ".")


def pace(key: str) -> float:
    """The animation's length in seconds, chosen by the speaker."""
    return float(st.select_slider("Animation length (s)", PACES, value=DEFAULT_PACE, key=key,
                                  help="Seconds the animation takes from eager to merged"))


def _step(talk_size: int, by: int) -> None:
    state.go_to_scene(min(max(state.scene() + by, 0), talk_size - 1))


def scene_index(talk: Talk) -> int:
    """The scene on screen, kept within the talk (a shorter talk may have replaced a longer one)."""
    return state.scene_within(len(talk.scenes))


def navigation(talk: Talk, at: int) -> None:
    """Back and next buttons around the scene's title: ← and → press them, and so do a clicker's Page Up and
    Page Down (the arrow keys are the buttons' own shortcuts)."""
    back, title, ahead = st.container(key=NAV).columns([1, 10, 1], vertical_alignment="center")
    back.button(BACK, key="story_back", on_click=_step, args=(len(talk.scenes), -1), disabled=at == 0,
                shortcut="Left", width="stretch")
    scene = talk.scenes[at]
    title.markdown(f"### {at + 1} / {len(talk.scenes)} · {plain(scene.title or talk.title)}")
    ahead.button(NEXT, key="story_next", on_click=_step, args=(len(talk.scenes), 1),
                 disabled=at == len(talk.scenes) - 1, shortcut="Right", width="stretch")
    web.clicker({"PageDown": "story_next", "PageUp": "story_back"})


def scene_list(talk: Talk) -> None:
    """Every scene by title, to jump to one while rehearsing."""
    state.mark_scene_in_list()
    st.radio("Scenes", range(len(talk.scenes)), key=state.SCENE_LIST,
             format_func=lambda i: f"{i + 1}. {plain(talk.scenes[i].title or talk.scenes[i].view)}",
             on_change=state.scene_picked)


def show_scene(scene: Scene, report: Report, settings: ChartSettings, seconds: float,
               neighbours: web.Picker | None) -> None:
    """A talk's scene, on the one plot every scene is drawn on, which keeps the scenes before and after it drawn
    hidden (`neighbours`, ui/served_views.py): ◀ or ▶ shows one at once in the browser, and the step's run, which
    sends the same figure, follows (benchmarks/RESULTS.md, "The Story's neighbouring scenes drawn ahead; clicks
    timed from their input")."""
    show_view(report, scene.view, settings, SCENE_PLOT, mode=scene.mode, zoom=scene.zoom, caption=scene.caption,
              seconds=seconds, picker=neighbours)


def build_view(report: Report, view: str, settings: ChartSettings, *, mode: str | None = None,
               zoom: tuple[float, float] | None = None, seconds: float = DEFAULT_PACE,
               height: int = SCREEN_CHART_PX) -> None:
    """What `show_view` sends the plot for the view, made ahead into the caches it reads (a story's next scene,
    the lab's presentation drawn hidden at the desk); nothing where the session cannot show the view."""
    if not view_problem(report, view, mode):
        fig = kept_figure(report, view, settings, mode=mode, zoom=zoom, seconds=seconds, height=height)
        sections.drawn_json(fig, sections.stamp_of(report), settings)


def scene_build(scene: Scene, library: dict[str, Session], settings: ChartSettings,
                seconds: float) -> Callable[[], None] | None:
    """What builds the figure `scene` draws, as `show_view` sends it, with its session's analysis (which the
    check of the view may need); None where its session is not in the library."""
    session = library.get(scene.session)
    if session is None:
        return None

    return lambda: build_view(analyse(session), scene.view, settings, mode=scene.mode, zoom=scene.zoom,
                              seconds=seconds)


def build_next(talk: Talk, at: int, library: dict[str, Session], settings: ChartSettings, seconds: float) -> None:
    """The scene after `at`, built in the background once this run has ended (ui/background.py): the step to it
    then draws it from memory."""
    build = scene_build(talk.scenes[at + 1], library, settings, seconds) if at + 1 < len(talk.scenes) else None
    if build is not None:
        scheduler().submit(Priority.STORY, "the talk's next scene", build)
