"""Whether a page's script run is in flight, for work done ahead of a page to come (the presentation's next views,
ui/served_views.py; the story's next scene, ui/story.py): it waits for the runs in flight to end, or at most
`QUIET_WAIT_S`. A build beside a run slows that run by as long as it takes (0.2-0.5 s for a timeline or a story's
scene), the server's Python being one core at a time (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

log = logging.getLogger(__name__)

QUIET_WAIT_S = 2.0  # the longest work done ahead waits for the page runs in flight to end
# What `ahead` leaves the browser to draw the page a run sent before it builds (0.3-0.5 s for the Story here): a
# build at once, beside that drawing on the machine's two cores, slowed a page switch to the Story from 0.41-0.62 s
# to 0.48-0.96 s (benchmarks/RESULTS.md).
SETTLE_S = 0.6
_QUIET = threading.Event()  # set while no page run is in flight
_QUIET.set()
_RUNNING = [0]
_ENDED = [0.0]  # time.monotonic() when the last page run ended
_RUNNING_LOCK = threading.Lock()
_AHEAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fusionviz-ahead")  # one build at a time, in order


@contextlib.contextmanager
def page_run() -> Iterator[None]:
    """Around a script run of a page (app.py)."""
    with _RUNNING_LOCK:
        _RUNNING[0] += 1
        _QUIET.clear()
    try:
        yield
    finally:
        with _RUNNING_LOCK:
            _RUNNING[0] -= 1
            if not _RUNNING[0]:
                _ENDED[0] = time.monotonic()
                _QUIET.set()


def wait_quiet() -> None:
    """Until no page run is in flight, or `QUIET_WAIT_S` has passed."""
    _QUIET.wait(QUIET_WAIT_S)


def ahead(make: Callable[[], Any]) -> Future[None]:
    """`make()` in the background once the page runs in flight have ended and the browser has had `SETTLE_S` since
    the last to draw; it logs rather than raises (the page that needs the value makes it itself). Done when the
    future is."""
    def run() -> None:
        wait_quiet()
        time.sleep(max(0.0, _ENDED[0] + SETTLE_S - time.monotonic()))
        wait_quiet()
        try:
            make()
        except Exception:
            log.warning("could not build ahead", exc_info=True)

    return _AHEAD.submit(run)
