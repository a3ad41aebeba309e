"""What a first visit needs, made in the background from the moment the server starts (`lifespan`, which
app.py hands to Streamlit's `st.App`; where nothing starts a server, as under AppTest, the first script run
starts it):
- the first page's modules imported, the recorded library opened and the first session's report and the
  figures of the lab's top built into the caches the lab reads (`lab.warm_top`);
- the worker started and asked for its devices once the first page's first chart is on screen: started when
  the first run had drawn the lab's top, its torch import took a core while the browser drew that chart (0.8-1.2
  s of a fresh server's first chart, with the lab's rest built then too, benchmarks/RESULTS.md); the lab's
  measuring widgets, which wait for that answer, come with the page's second run;
- the worker warmed for a first compile on the device the lab offers first (a first Run of the lab's default
  waits 2.5 s less on the CPU here, and on a machine that never compiled, the 6 s of Inductor's C++ header), once
  a page has been drawn whole (the lab's rest after its top, ui/first_paint.py), so that it does not take the
  cores the first page is drawn with;
- once that warm-up has ended, the Story's first two scenes (a visitor's next page) and then every other
  session the lab's picker offers, in its order, a part at a time, each while no page runs and nothing is being
  measured (`_rest`).
What waits for a page starts a minute after the server without one. A page that asks for one of them while it
is being made waits for that one (an import's module lock, a cache's lock, ui.memo's lock per value), so nothing
is made twice. Begun at the first script run, it began with the page, which then made the same figures alongside
it (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import streamlit as st

DEVICES, FIRST_PAGE, COMPILER = "fusionviz-warm-devices", "fusionviz-warm-library", "fusionviz-warm-compiler"
REST = "fusionviz-warm-rest"
SERVED = threading.Event()  # set when a script run has drawn a page whole (`page_served`)
SHOWN = threading.Event()  # set when a page's first chart is on screen (`page_shown`), or a page drawn whole
IDLE_START_S = 60.0  # what waits for a page starts this long after the server without one


def _devices() -> None:
    from ui import backend

    SHOWN.wait(IDLE_START_S)
    backend.devices_or_cpu()


def page_shown() -> None:
    """The browser has painted a first run's top (ui/first_paint.py): the worker may start, beside the run that
    draws the rest, whose measuring widgets wait for its answer (1.5 s later where that run started it)."""
    SHOWN.set()


def page_served() -> None:
    """A script run ended: where it drew its page whole (not a first run's top, ui/first_paint.py), the worker
    and the compiler's warm-up may start."""
    from ui import state

    if not state.rest_pending():
        SHOWN.set()
        SERVED.set()


def _compiler(first_page: threading.Thread) -> None:
    """Queued the moment a page has been drawn whole: a Run pressed then waits behind work it would have done
    itself, where queued after it (behind the worker's own start) the first Run of a machine that never compiled
    came 3-4 s later (benchmarks/RESULTS.md)."""
    from ui import backend, state

    first_page.join()
    SERVED.wait(IDLE_START_S)
    state.runs().warm(backend.devices_or_cpu()[0].device).wait()  # the lab's device picker offers the first one


def _rest(compiler: threading.Thread) -> None:
    """A switch to a session not yet shown built its report and figures in its run: 1.0 s to the frame on a
    quiet machine here against 0.35 s for one shown before, 1.8-3.0 s under load (benchmarks/RESULTS.md). Each
    part (0.1-0.3 s) waits for the page runs to end (ui/page_runs.py), and one at a time, so that a page's own
    work done ahead (the Story's next scene) waits behind one part at most; a Run waits behind none, this
    waiting while anything is measured, so that a machine's two cores stay the run's."""
    from fusionviz.charts.registry import VIEWS
    from fusionviz.charts.style import ChartSettings
    from fusionviz.errors import TalkFileError
    from fusionviz.records.talk import load_talk
    from ui import backend, lab, page_runs, state, story

    compiler.join()
    library = backend.library()[0]
    try:
        scenes = [story.scene_build(scene, library, ChartSettings.presentation(), story.DEFAULT_PACE)
                  for scene in load_talk(backend.DEFAULT_TALK, views=VIEWS).scenes[:2]]
    except TalkFileError:
        scenes = []
    shelf = [s for s in library.values() if s.runs]
    for part in [b for b in scenes if b is not None] + [p for s in shelf[1:] for p in lab.warm_parts(s)]:
        state.runs().wait_idle()
        page_runs.ahead(part).result()


def _first_page() -> None:
    from ui import page_head

    page_head.plotly_name()  # read and hashed before the first page's HTML names it
    import streamlit.emojis  # noqa: F401 (set_page_config reads it to tell the page icon is an emoji)

    st.empty()  # the process's first element looks through the call stack for a REPL once: 0.1-0.15 s

    from ui import backend, lab  # the pages' modules: Plotly, pandas and the charts imported here, once

    shelf = [s for s in backend.library()[0].values() if s.runs]
    if shelf:
        lab.warm_top(shelf[0])


@st.cache_resource(show_spinner=False)
def start() -> dict[str, threading.Thread]:
    """Start the warm-up once per app process (again after "Clear caches", which the caches it fills follow);
    the threads are daemons, so they never hold up the server's exit."""
    threads = {DEVICES: threading.Thread(target=_devices, name=DEVICES, daemon=True),
               FIRST_PAGE: threading.Thread(target=_first_page, name=FIRST_PAGE, daemon=True)}
    threads[COMPILER] = threading.Thread(target=_compiler, args=(threads[FIRST_PAGE],), name=COMPILER, daemon=True)
    threads[REST] = threading.Thread(target=_rest, args=(threads[COMPILER],), name=REST, daemon=True)
    for thread in threads.values():
        thread.start()
    return threads


def devices_known() -> bool:
    """Whether the worker has answered the warm-up's question for the devices: a device picker drawn now does
    not wait for the worker to start."""
    return not start()[DEVICES].is_alive()


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """`st.App`'s hook at server start: the warm-up begins before any page is asked for."""
    start()
    yield
