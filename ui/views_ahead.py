"""The presentation's next views built while the presenter talks over the one on screen, so that a view switch
draws from memory. A first switch to the lab's timeline waited 0.3-0.4 s of the server's time to build its figure
(benchmarks/RESULTS.md); built here, in a thread of its own once the run that drew the view has ended, it waits
for nothing, and a switch that comes while a figure is being built waits for that figure (ui/memo.py's lock per
value) rather than building it again. Only the next few views are built, as a talk steps through them, and a
newer request (the presenter moved on) supersedes an older one before its next view.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from fusionviz.analysis.report import Report
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.views import view_problem
from ui import sections, story

AHEAD = 2  # views built past the one on screen
AFTER_S = 0.5  # how long after the run that asks the building starts: its messages go out first
_BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fusionviz-views-ahead")
_REQUESTS = itertools.count(1)
_LATEST = [0]
_LOCK = threading.Lock()


def next_views(views: Sequence[str], shown: str, ahead: int = AHEAD) -> list[str]:
    """The `ahead` views after `shown` in the order offered, wrapping round to the first."""
    if shown not in views:
        return list(views[:ahead])
    at = list(views).index(shown)
    return [views[(at + step) % len(views)] for step in range(1, min(ahead, len(views) - 1) + 1)]


def build_next(report: Report, views: Sequence[str], shown: str, settings: ChartSettings, height: int,
               modes: dict[str, str | None], ahead: int = AHEAD) -> None:
    """Queue the figures of the `ahead` views after `shown` (each in the mode its picker holds, `modes`), as
    `story.show_view` draws them; animations are Streamlit's own charts, built when shown."""
    with _LOCK:
        request = _LATEST[0] = next(_REQUESTS)
    wanted = [v for v in next_views(views, shown, ahead) if not VIEWS[v].animated]
    _BUILDER.submit(_build, request, time.monotonic() + AFTER_S, report, wanted, settings, height, modes)


def _build(request: int, due: float, report: Report, views: list[str], settings: ChartSettings, height: int,
           modes: dict[str, str | None]) -> None:
    """Starting at `due` (a request queued behind others waits no longer than that; one superseded meanwhile
    returns at once, without waiting)."""
    if _LATEST[0] != request:
        return
    time.sleep(max(0.0, due - time.monotonic()))
    for view in views:
        if _LATEST[0] != request:
            return
        mode = modes.get(view)
        if view_problem(report, view, mode) is None:
            fig = story.kept_figure(report, view, settings, mode=mode, height=height)
            sections.drawn_json(fig, report.source.stamp, settings)
