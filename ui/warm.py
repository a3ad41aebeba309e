"""What the app makes ahead of its first visitor, queued on the background scheduler (ui/background.py) when the
server starts (`lifespan`, which app.py hands to `st.App`; where nothing starts a server, as under AppTest, at the
first script run). In the scheduler's order:
- first page: the first page's modules imported, the recorded library opened and the lab's top built for its first
  session (`lab.warm_top`), before any page is asked for;
- devices: the worker started and asked for its devices once a page's first chart is on screen (its torch import
  would take a core from the browser drawing it); the lab's measuring widgets wait for the answer;
- compiler: the worker warmed for a first compile on the device the lab offers first, once a page has been drawn
  whole; a Run pressed then waits behind work it would have done itself;
- story, library: the default talk's first two scenes, then the lab's desk of every other session its picker
  offers, a part at a time, each once the compiler's warm-up has ended, nothing is measured and the pages are
  quiet.
What waits for a page starts `Settings.idle_start_s` after the server without one. A page that asks for a value
while it is being made waits for it (ui/memo.py), so nothing is made twice. Figures: benchmarks/RESULTS.md, "A first
visit: the worker started once the first chart is on screen".
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import streamlit as st

from ui.background import Priority, Scheduler, scheduler

if TYPE_CHECKING:  # imported with the first page, not with the server
    from fusionviz.measure.service import Ticket


class WarmUp:
    """One warm-up of the app process: what it has reached, and its tasks (see the module)."""

    def __init__(self, background: Scheduler) -> None:
        self.scheduler = background
        self.started = time.monotonic()
        self.shown = threading.Event()  # a page's first chart is on screen, or a page was drawn whole
        self.served = threading.Event()  # a page was drawn whole
        self.devices_known = threading.Event()  # the worker has answered for its devices
        self.compiler: Ticket[float] | None = None  # the compiler's warm-up, once queued on its device
        self.devices: list[str] = []

    def queue(self) -> None:
        """The first page, the devices and the compiler's warm-up; the last queues the rest behind it."""
        self.scheduler.submit(Priority.FIRST_PAGE, "the first page", _first_page, quiet=False)
        self.scheduler.submit(Priority.DEVICES, "the devices", self._devices, quiet=False,
                              ready=lambda: self.shown.is_set() or self._waited())
        self.scheduler.submit(Priority.COMPILER, "the compiler's warm-up", self._compiler, quiet=False,
                              ready=lambda: self.served.is_set() or self._waited())

    def _waited(self) -> bool:
        return time.monotonic() - self.started >= self.scheduler.settings.idle_start_s

    def _devices(self) -> None:
        from ui import backend

        try:
            backend.devices_or_cpu()
        finally:
            self.devices_known.set()

    def _compiler(self) -> None:
        from ui import backend, state

        self.devices = [d.device for d in backend.devices_or_cpu()]
        self.compiler = state.runs().warm(self.devices[0])  # the lab's device picker offers the first one
        self.queue_ahead()

    def queue_ahead(self) -> None:
        """The default talk's first two scenes (a visitor's next page) and then the lab's desk of every session of
        the library but the first, in its picker's order, as parts that each wait for `_idle` (a click waits behind
        one part at most)."""
        from fusionviz.charts.registry import VIEWS
        from fusionviz.charts.style import ChartSettings
        from fusionviz.errors import TalkFileError
        from fusionviz.records.talk import load_talk
        from ui import backend, lab, story

        library = backend.library()[0]
        try:
            scenes = [story.scene_build(scene, library, ChartSettings.presentation(), story.DEFAULT_PACE)
                      for scene in load_talk(backend.DEFAULT_TALK, views=VIEWS).scenes[:2]]
        except TalkFileError:
            scenes = []
        for scene in scenes:
            if scene is not None:
                self.scheduler.submit(Priority.STORY, "a scene of the default talk", scene, ready=self._idle)
        for session in [s for s in library.values() if s.runs][1:]:
            for part in lab.warm_parts(session):
                self.scheduler.submit(Priority.LIBRARY, "a part of the lab's desk", part, ready=self._idle)

    def _idle(self) -> bool:
        """The compiler's warm-up has ended and no device measures: what is made ahead leaves the cores to a run."""
        from ui import state

        queues = state.runs().queues
        return (self.compiler is not None and self.compiler.finished
                and all(queues.running(device) is None for device in self.devices))

    def wait_compiler(self, timeout: float) -> bool:
        """Until the compiler's warm-up has been queued and has ended; whether it did within `timeout`."""
        self.scheduler.drain(Priority.COMPILER, timeout)
        return self.compiler is not None and self.compiler.wait(timeout)


def _first_page() -> None:
    from ui import web

    web.prepare()
    import streamlit.emojis  # noqa: F401 (set_page_config reads it to tell the page icon is an emoji)

    st.empty()  # the process's first element looks through the call stack for a REPL once

    from ui import backend, lab  # the pages' modules: Plotly, pandas and the charts imported here, once

    shelf = [s for s in backend.library()[0].values() if s.runs]
    if shelf:
        lab.warm_top(shelf[0])


@st.cache_resource(show_spinner=False)
def start() -> WarmUp:
    """Start the warm-up once per app process (again after "Clear caches", which the caches it fills follow)."""
    warm_up = WarmUp(scheduler())
    warm_up.queue()
    return warm_up


def page_shown() -> None:
    """The browser has painted a first run's top (ui/page.py): the worker may start, beside the run that draws the
    rest, whose measuring widgets wait for its answer."""
    start().shown.set()
    scheduler().poke()


def page_served() -> None:
    """A script run ended: where it drew its page whole (not a first run's top), the worker and the compiler's
    warm-up may start."""
    from ui import state

    if not state.rest_pending():
        warm_up = start()
        warm_up.shown.set()
        warm_up.served.set()
        scheduler().poke()


def devices_known() -> bool:
    """Whether the worker has answered the warm-up's question for the devices: a device picker drawn now does not
    wait for the worker to start."""
    return start().devices_known.is_set()


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """`st.App`'s hook at server start: the warm-up begins before any page is asked for."""
    start()
    yield
