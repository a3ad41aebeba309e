"""A run's fresh timing workers come up one at a time until its capture begins, so that while the capture's worker
is still busy with what was ahead of it (on a machine that never compiled, Inductor's C++ header and the CPU's
probe, one g++ per core of two) they take one core, not three; once the capture begins, all at once."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time

import psutil

from fusionviz.measure import client
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig, default_threads
from tests.servers import measuring_workers

COUNT = 3


def _started(workers: list[Worker], timeout_s: float) -> list[float]:
    """Each worker's process start time, once every one has started."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not all(w.pid for w in workers):
        time.sleep(0.02)
    pids = [w.pid for w in workers]
    assert all(pids), f"not every timing worker started: {pids}"
    return [psutil.Process(pid).create_time() for pid in pids if pid]


def test_before_the_capture_begins_each_timing_worker_starts_once_the_one_before_is_prepared() -> None:
    with contextlib.closing(client._TimingWorkers(COUNT, None, "cpu")) as timers:
        started = _started(timers.workers, timeout_s=120)
        # a torch import and a first trace (about 3 s here) between two starts; started together, milliseconds
        assert all(later - earlier > 1.0 for earlier, later in itertools.pairwise(started)), started
        assert len(timers.warmed()) == COUNT and all(w.alive for w in timers.workers)


def test_once_the_capture_begins_every_timing_worker_not_yet_up_starts_at_once() -> None:
    with contextlib.closing(client._TimingWorkers(COUNT, None, "cpu")) as timers:
        timers.begin()
        started = _started(timers.workers, timeout_s=30)
        assert max(started) - min(started) < 1.0, started
        assert len(timers.warmed()) == COUNT


def test_a_run_says_when_it_waits_for_its_timing_processes() -> None:
    """A capture of a small model ends seconds before three fresh workers are warm; the wait is a stage of its own,
    not the last stage shown (it read "the device's ceilings" for 5-6 s in the app)."""
    stages: list[str] = []
    client.run_session(RunConfig(model="pointwise_chain", dim=64, batch=8, modes=("eager", "default"), rounds=3,
                                 threads=default_threads()), progress=stages.append)
    waiting = stages.index("starting the timing processes")
    assert stages[waiting - 1] == "the device's ceilings" and stages[waiting + 1].startswith("timing process 1:")


def test_a_run_that_ends_while_its_timing_workers_start_ends_them_all() -> None:
    """A run refused by its capture closes its timing workers within milliseconds, while the first is starting:
    CI hung there (a close freed the log file the start was handing its child, and the start then waited on a pipe
    the child held). Every close must return, leaving no worker process, however early it comes."""
    before = {p.pid for p in measuring_workers(os.getpid())}
    for delay_ms in range(0, 60, 3):
        timers = client._TimingWorkers(COUNT, None, "cpu")
        time.sleep(delay_ms / 1000)
        closing = threading.Thread(target=timers.close, daemon=True)
        closing.start()
        closing.join(timeout=30)
        assert not closing.is_alive(), f"closing {delay_ms} ms after the run began did not return"
        assert not any(w.alive for w in timers.workers), f"a worker outlived its run ({delay_ms} ms)"
    assert {p.pid for p in measuring_workers(os.getpid())} <= before
