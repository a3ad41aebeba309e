"""ui.background: one task at a time, the first in priority order whose gates are open; quiet work waits for the
page runs in flight and the browser's settling after them, but not for ever."""

from __future__ import annotations

import threading
import time

import pytest

from ui.background import Priority, Scheduler, Settings

FAST = Settings(settle_s=0.2, quiet_wait_s=0.6, poll_s=0.01)


def test_tasks_run_one_at_a_time_by_priority_then_in_the_order_queued() -> None:
    scheduler, done, gate = Scheduler(FAST), [], threading.Event()
    scheduler.submit(Priority.FIRST_PAGE, "held", gate.wait, quiet=False)  # holds the worker while the rest queue
    for priority, name in ((Priority.LIBRARY, "library 1"), (Priority.STORY, "story"), (Priority.LIBRARY, "library 2"),
                           (Priority.DEVICES, "devices")):
        scheduler.submit(priority, name, lambda name=name: done.append(name), quiet=False)
    gate.set()
    assert scheduler.drain(timeout=5)
    assert done == ["devices", "story", "library 1", "library 2"]


def test_a_closed_gate_lets_the_next_open_task_go_first() -> None:
    scheduler, done, opened = Scheduler(FAST), [], threading.Event()
    scheduler.submit(Priority.DEVICES, "devices", lambda: done.append("devices"), ready=opened.is_set, quiet=False)
    scheduler.submit(Priority.STORY, "story", lambda: done.append("story"), quiet=False)
    assert scheduler.drain(Priority.STORY, timeout=0.3) is False  # the devices wait for their gate
    assert done == ["story"]
    opened.set()
    scheduler.poke()
    assert scheduler.drain(timeout=5) and done == ["story", "devices"]


def test_quiet_work_waits_for_the_page_runs_and_the_browser_to_settle() -> None:
    scheduler, ran = Scheduler(FAST), []
    ended = [0.0]
    with scheduler.page_run():
        scheduler.submit(Priority.STORY, "next scene", lambda: ran.append(time.monotonic()))
        scheduler.submit(Priority.COMPILER, "compiler", lambda: ran.append(-1.0), quiet=False)
        time.sleep(0.2)
        assert ran == [-1.0]  # work that is not quiet goes beside a run
        ended[0] = time.monotonic()
    assert scheduler.drain(timeout=5)
    assert ran[1] - ended[0] >= FAST.settle_s


def test_quiet_work_waits_no_longer_than_its_limit_for_a_run_that_goes_on() -> None:
    scheduler, ran = Scheduler(FAST), threading.Event()
    with scheduler.page_run():  # a run that follows a measurement lasts as long as it
        started = time.monotonic()
        scheduler.submit(Priority.LIBRARY, "a part", ran.set)
        assert ran.wait(5)
        assert FAST.quiet_wait_s <= time.monotonic() - started < FAST.quiet_wait_s + 1


def test_an_answer_waits_for_the_runs_in_flight() -> None:
    scheduler, ended = Scheduler(FAST), []

    def page() -> None:
        with scheduler.page_run():
            time.sleep(0.3)
            ended.append(time.monotonic())

    running = threading.Thread(target=page)
    running.start()
    time.sleep(0.05)
    scheduler.wait_quiet()
    assert ended and time.monotonic() >= ended[0]
    running.join()


def test_a_task_that_fails_is_logged_and_the_next_one_runs(caplog: pytest.LogCaptureFixture) -> None:
    scheduler, done = Scheduler(FAST), []
    scheduler.submit(Priority.STORY, "broken", lambda: 1 / 0, quiet=False)
    scheduler.submit(Priority.LIBRARY, "next", lambda: done.append("next"), quiet=False)
    assert scheduler.drain(timeout=5) and done == ["next"]
    assert "broken could not be made ahead" in caplog.text


def test_a_gate_that_cannot_say_lets_its_task_go(caplog: pytest.LogCaptureFixture) -> None:
    scheduler, done = Scheduler(FAST), []

    def broken() -> bool:
        raise RuntimeError("no answer")

    scheduler.submit(Priority.STORY, "gated", lambda: done.append("gated"), ready=broken, quiet=False)
    assert scheduler.drain(timeout=5) and done == ["gated"]
    assert "the gate of gated could not say" in caplog.text
