"""One background scheduler for the work the app does ahead of its visitors (the warm-up, ui/warm.py; a talk's next
scene, ui/story.py): one worker thread takes one task at a time, the first in `Priority` order whose gate is open,
so what a visitor will see first is made first and nothing made ahead overlaps anything else made ahead.

A task's gate is its own condition (a page shown, the compiler's warm-up ended) and, for work that would slow a
page, the one quiet gate: no page's script run in flight (`page_run`, around every run in app.py), and the
browser left `settle_s` to draw what the last one sent; a task never waits more than `quiet_wait_s` for runs that
go on (a run that follows a measurement lasts as long as it). A task under way is never interrupted: a click
waits behind one at most. Its settings are `Settings`. Why each waits: benchmarks/RESULTS.md, "The library's desk
built ahead, and timing workers kept ready after a run".
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache

log = logging.getLogger(__name__)


class Priority(IntEnum):
    """What is made first when several tasks may go."""

    FIRST_PAGE = 0  # the first page's modules, the library and the lab's top
    DEVICES = 1  # the worker started and asked for its devices
    COMPILER = 2  # the worker warmed for a first compile
    STORY = 3  # a talk's scenes: a visitor's next one, the default talk's first two
    LIBRARY = 4  # the lab's desk of every session of the library


@dataclass(frozen=True)
class Settings:
    """The scheduler's delays and timeouts."""

    idle_start_s: float = 60.0  # what waits for a visitor's page starts this long after the server without one
    settle_s: float = 0.6  # what the browser is left, after a page run, to draw what it sent
    quiet_wait_s: float = 2.0  # the longest quiet work waits for page runs that go on
    poll_s: float = 0.05  # how often a closed gate that says nothing when it opens is looked at again


@dataclass(order=True)
class _Task:
    priority: Priority
    order: int
    name: str = field(compare=False)
    work: Callable[[], object] = field(compare=False)
    ready: Callable[[], bool] = field(compare=False)
    quiet: bool = field(compare=False)


def _always() -> bool:
    return True


class Scheduler:
    """The queue, its worker thread (started with the first task) and the quiet gate; see the module."""

    def __init__(self, settings: Settings = Settings()) -> None:
        self.settings = settings
        self._changed = threading.Condition()
        self._tasks: list[_Task] = []
        self._order = itertools.count()
        self._working: _Task | None = None
        self._thread: threading.Thread | None = None
        self._runs = 0  # page runs in flight
        self._busy_since = 0.0  # when the runs in flight began (the first of them)
        self._ended = float("-inf")  # when the last page run ended

    def submit(self, priority: Priority, name: str, work: Callable[[], object], *,
               ready: Callable[[], bool] = _always, quiet: bool = True) -> None:
        """Queue `work`, to run once `ready()` and, if `quiet`, the quiet gate say so; it logs rather than raises
        (a page that needs the value makes it itself)."""
        with self._changed:
            self._tasks.append(_Task(priority, next(self._order), name, work, ready, quiet))
            self._tasks.sort()
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="fusionviz-background", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def poke(self) -> None:
        """A gate may have opened (a page was shown): look at the tasks again now."""
        with self._changed:
            self._changed.notify_all()

    @contextlib.contextmanager
    def page_run(self) -> Iterator[None]:
        """Around a page's script run (app.py): the quiet gate is closed while it is in flight."""
        with self._changed:
            if not self._runs:
                self._busy_since = time.monotonic()
            self._runs += 1
        try:
            yield
        finally:
            with self._changed:
                self._runs -= 1
                if not self._runs:
                    self._ended = time.monotonic()
                self._changed.notify_all()

    def wait_quiet(self) -> None:
        """Until no page run is in flight, or `quiet_wait_s` has passed (an answer the browser waits for)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._runs, self.settings.quiet_wait_s)

    def drain(self, upto: Priority = Priority.LIBRARY, timeout: float | None = None) -> bool:
        """Until no task of `upto`'s priority or a higher one waits or runs; whether that came within `timeout`."""
        with self._changed:
            return self._changed.wait_for(lambda: not any(
                t.priority <= upto for t in [*self._tasks, *([self._working] if self._working else [])]), timeout)

    def _quiet(self, now: float) -> bool:
        if self._runs:
            return now - self._busy_since >= self.settings.quiet_wait_s
        return now - self._ended >= self.settings.settle_s

    def _next(self) -> _Task | None:
        """The first task whose gates are open, taken off the queue (a gate many tasks share is asked once)."""
        quiet = self._quiet(time.monotonic())
        asked: dict[Callable[[], bool], bool] = {}
        for task in self._tasks:
            if task.quiet and not quiet:
                continue
            if task.ready not in asked:
                asked[task.ready] = _asked(task)
            if asked[task.ready]:
                self._tasks.remove(task)
                return task
        return None

    def _serve(self) -> None:
        while True:
            with self._changed:
                self._working = None
                self._changed.notify_all()
                while (task := self._next()) is None:
                    self._changed.wait(self.settings.poll_s if self._tasks else None)
                self._working = task
            try:
                task.work()
            except Exception:
                log.warning("%s could not be made ahead", task.name, exc_info=True)


def _asked(task: _Task) -> bool:
    """Whether the task's own gate is open; one that cannot say lets it go (its work then says what failed)."""
    try:
        return task.ready()
    except Exception:
        log.warning("the gate of %s could not say", task.name, exc_info=True)
        return True


@cache
def scheduler() -> Scheduler:
    """The app process's one scheduler (kept outside Streamlit's caches, which "Clear caches" empties)."""
    return Scheduler()
