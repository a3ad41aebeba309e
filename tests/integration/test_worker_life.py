"""A worker's life as one state machine: a close or an end at any instant of a start or a request returns at once
and wakes every thread waiting on the worker with a WorkerError of kind "ended", and nothing outlives the process
that started it. Each interleaving is forced through the worker's checkpoints (a thread held at a named point while
another ends the worker), not found by sleeping and hoping."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

from fusionviz.errors import WorkerError
from fusionviz.measure.protocol import DevicesJob
from fusionviz.measure.worker import Checkpoint, Worker
from tests.servers import WORKER_MODULE, measuring_workers

pytestmark = pytest.mark.slow

PROMPT_S = 1.0  # "at once": a close returns, and the woken request raises, within this


class Held:
    """A checkpoint that holds the requesting thread at `point` until released, and says when it got there."""

    def __init__(self, point: Checkpoint) -> None:
        self.point = point
        self.arrived, self.go = threading.Event(), threading.Event()

    def __call__(self, point: Checkpoint) -> None:
        if point == self.point:
            self.arrived.set()
            assert self.go.wait(60), "the test never released the held thread"


class Outcome:
    """A call run in a thread of its own: what it raised (or returned), and when it ended."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.error: BaseException | None = None
        self.ended_at: float | None = None

        def run() -> None:
            try:
                call()
            except BaseException as exc:
                self.error = exc
            self.ended_at = time.monotonic()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self, timeout: float = PROMPT_S) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()


def _ended(outcome: Outcome) -> None:
    assert isinstance(outcome.error, WorkerError) and outcome.error.kind == "ended", repr(outcome.error)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _in_select(thread: threading.Thread, timeout_s: float = 60) -> None:
    """Until `thread` is blocked in a selector's select (the read of its worker's reply)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident or 0)
        if frame is not None and frame.f_code.co_name == "select" and "selectors" in frame.f_code.co_filename:
            return
        time.sleep(0.005)
    raise AssertionError("the request never waited in select")


@pytest.mark.parametrize("point", ["spawned", "writing", "reading"])
def test_an_end_at_each_point_of_a_request_returns_at_once_and_wakes_it(point: Checkpoint) -> None:
    worker = Worker()
    held = Held(point)
    worker.checkpoint = held
    request = Outcome(lambda: worker.request(DevicesJob(), timeout_s=120))
    assert held.arrived.wait(60), f"the request never reached {point}"
    pid = worker._process.popen.pid if worker._process else None
    ending = Outcome(worker.end)
    if point == "spawned":  # the end waits for the start to finish (a fork), which the checkpoint holds
        deadline = time.monotonic() + 5
        while not worker._ending and time.monotonic() < deadline:
            time.sleep(0.001)
        assert worker._ending and worker.state == "starting" and ending.thread.is_alive()
        released = time.monotonic()
        held.go.set()
    else:  # busy: the end returns while the request is still held
        assert ending.join(), f"end at {point} did not return"
        released = time.monotonic()
        held.go.set()
    assert ending.join() and request.join(), f"end at {point}: the request was not woken"
    assert request.ended_at is not None and request.ended_at - released < PROMPT_S
    _ended(request)
    assert worker.state == "ended" and not worker.alive
    if pid is not None:
        deadline = time.monotonic() + 5
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _gone(pid)
    with pytest.raises(WorkerError, match="stopped"):
        worker.request(DevicesJob())


def test_an_end_while_the_request_waits_in_select_wakes_it() -> None:
    """The race CI met: the request's selector watched the pipe that the end closed. Now the end closes nothing of a
    busy process; it kills it and writes to the request's self-pipe, which the selector also watches."""
    worker = Worker()
    held = Held("reading")
    held.go.set()  # only to know it got there
    worker.checkpoint = held
    request = Outcome(lambda: worker.request(DevicesJob(), timeout_s=120))
    _in_select(request.thread)
    ended = time.monotonic()
    assert Outcome(worker.end).join() and request.join()
    assert request.ended_at is not None and request.ended_at - ended < PROMPT_S
    _ended(request)


def test_a_close_lets_the_next_request_start_afresh_and_each_state_is_seen() -> None:
    worker = Worker()
    seen: list[str] = [worker.state]
    worker.checkpoint = lambda point: seen.append(f"{point}:{worker.state}")
    worker.start()
    seen.append(worker.state)
    assert worker.request(DevicesJob(), timeout_s=120)["devices"]
    seen.append(worker.state)
    worker.close()
    seen.append(worker.state)
    assert worker.request(DevicesJob(), timeout_s=120)["devices"]  # a new process
    worker.end()
    seen.append(worker.state)
    assert seen == ["not_started", "spawned:starting", "idle", "writing:busy", "reading:busy", "idle",
                    "not_started", "spawned:starting", "writing:busy", "reading:busy", "ended"]


# A program that starts a run, says so once its first timing worker runs, and exits when told, mid-warm-up.
_EXITING = """
import sys, threading
from fusionviz.measure import client
from fusionviz.records.config import RunConfig, default_threads
config = RunConfig(model="mlp", dim=32, batch=8, modes=("eager", "default"), threads=default_threads())
threading.Thread(target=client.run_session, args=(config,), daemon=True).start()
sys.stdin.readline()
"""


def test_a_program_that_exits_mid_run_leaves_at_once_with_no_worker_behind() -> None:
    root = Path(__file__).resolve().parents[2]
    program = subprocess.Popen([sys.executable, "-c", _EXITING], cwd=root, stdin=subprocess.PIPE,
                               env={**os.environ, "PYTHONPATH": str(root)})
    assert program.stdin is not None
    try:
        deadline = time.monotonic() + 120
        workers: list[psutil.Process] = []
        while len(workers) < 2 and time.monotonic() < deadline:  # the capture's worker and a timing worker
            workers = measuring_workers(program.pid)
            time.sleep(0.05)
        assert len(workers) >= 2, "the run's workers never started"
        asked = time.monotonic()
        program.stdin.write(b"\n")
        program.stdin.flush()
        program.wait(timeout=30)
        took = time.monotonic() - asked
    finally:
        program.kill()
    assert took < 2.0, f"the program took {took:.1f} s to exit"
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and not all(_gone(p.pid) for p in workers):
        time.sleep(0.05)
    left = [p.pid for p in workers if not _gone(p.pid)]
    assert not left, f"workers ({WORKER_MODULE}) outlived their program: {left}"
