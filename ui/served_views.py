"""The presentation's views served by URL, so that the browser switches views without a run of the server
(benchmarks/RESULTS.md, "The presentation's views switched in the browser, and Inductor's C++ header built beside
the CPU's probe").

The presentation's plot carries, for each view its picker offers, a URL of its figure and caption (`offer`); the
browser fetches the next views at once (built once the page runs have ended, ui/background.py) and draws them
hidden, and a click of the picker shows the picked one while the fragment's run, which sends the same figure,
follows (`web.Picker`). The figure is built when first asked for, by whichever comes first, the browser or a run,
and the other gets the same JSON (ui/memo.py): the two agree to the byte, so the run's answer redraws nothing.

Each view is registered in the app's routes (`web.register`), which the middleware answers; it points at the
report through a weak reference, so an answer never keeps a session alive.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Any

from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.export import camera_options
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.views import view_problem
from fusionviz.lru import LRU
from fusionviz.records.session import Session
from fusionviz.records.talk import Talk
from ui import sections, story, web
from ui.background import scheduler

KEPT = 256  # views offered, most recently first: every presented view of a few sessions, modes and sizes


@dataclass(frozen=True)
class _Offered:
    """A view offered under a name: what `story.show_view` is asked for it (a talk's scene adds its `zoom`,
    caption `template` and pace), and the mark of its headline's element (`story.headline_html`)."""

    report: weakref.ref[Report]
    view: str
    settings: ChartSettings
    mode: str | None
    height: int
    caption: str
    zoom: tuple[float, float] | None = None
    template: str | None = None
    seconds: float = story.DEFAULT_PACE

    def answer(self) -> str | None:
        """The view as JSON, once no page run is in flight (the browser asks for the next views as soon as the
        presentation's plot arrives, in the middle of a session switch's run): `figure`, what the presentation's
        plot is sent for it (`sections.drawn_json` of `story.kept_figure`, itself JSON), and `caption`, its
        headline's HTML (`story.headline_html`); None once its session is gone. The headline is made here, not in
        the run that offers the view, which a session switch waits for."""
        scheduler().wait_quiet()
        report = self.report()
        if report is None:
            return None
        fig = story.kept_figure(report, self.view, self.settings, mode=self.mode, zoom=self.zoom,
                                seconds=self.seconds, height=self.height)
        caption = story.headline_html(story.scene_headline(report, self.view, self.mode, self.template),
                                      self.caption)
        return json.dumps({"figure": sections.drawn_json(fig, sections.stamp_of(report), self.settings),
                           "caption": caption})


_NAMES: LRU[tuple[Any, ...], tuple[str, _Offered]] = LRU(KEPT)


def offer(report: Report, view: str, settings: ChartSettings, mode: str | None, height: int, caption: str, *,
          zoom: tuple[float, float] | None = None, template: str | None = None,
          seconds: float = story.DEFAULT_PACE) -> str:
    """The name (relative to the page's URL) the view is served under (`_Offered.answer`): the same for the same
    report and view as drawn (settings, mode, height, zoom, caption and pace) and caption's mark while it is
    kept."""
    key = (id(report), view, settings, mode, height, caption, zoom, template, seconds)
    kept = _NAMES.get(key)
    if kept is not None and kept[1].report() is report and web.registered(kept[0]):
        return kept[0]
    offered = _Offered(weakref.ref(report), view, settings, mode, height, caption, zoom, template, seconds)
    name = web.register(offered.answer)
    _NAMES.put(key, (name, offered))
    return name


def scene_neighbours(talk: Talk, at: int, library: dict[str, Session], settings: ChartSettings,
                     seconds: float) -> web.Picker | None:
    """A talk's ◀ and ▶ as a picker (`story.show_scene`) of scene `at` and of the scenes before and after it
    (but one whose session cannot show its view); None where scene `at` cannot."""
    offered: dict[str, dict[str, Any]] = {}
    for i in range(max(at - 1, 0), min(at + 2, len(talk.scenes))):
        scene = talk.scenes[i]
        session = library.get(scene.session)
        if session is None:
            continue
        report = analyse(session)
        if view_problem(report, scene.view, scene.mode):
            continue
        offered[_scene(i)] = {
            "url": offer(report, scene.view, settings, scene.mode, story.SCREEN_CHART_PX, story.SCENE_PLOT,
                         zoom=scene.zoom, template=scene.caption, seconds=seconds),
            "config": camera_options(settings, story.slide_name(report, scene.view))}
    if _scene(at) not in offered:
        return None
    buttons = {text: _scene(at + by) for text, by in ((story.NEXT, 1), (story.BACK, -1))
               if _scene(at + by) in offered}
    return web.Picker(web.key_class(story.NAV), story.SCENE_PLOT, offered, _scene(at), list(buttons.values()),
                      buttons)


def _scene(at: int) -> str:
    return f"scene {at + 1}"
