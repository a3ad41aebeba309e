"""The device queues' ordering, sharing and cancelling, with plain Python jobs (no worker process is started:
a lane's worker starts only on a request, and these jobs make none)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import streamlit as st

from fusionviz.errors import FusionvizError
from fusionviz.measure.protocol import Progress
from fusionviz.measure.queue import DeviceQueues, Reports
from fusionviz.measure.service import WARM_KEY
from fusionviz.measure.worker import Cancelled, Worker
from ui import state
from ui.backend import _waiting_label


@pytest.fixture
def queues() -> Iterator[DeviceQueues]:
    q = DeviceQueues()
    yield q
    q.close()


def held(gate: threading.Event, value: Any = None, log: list[str] | None = None) -> Callable[[Worker, Progress], Any]:
    """A job that reports progress until `gate` opens, then returns `value`."""
    def job(_worker: Worker, progress: Progress) -> Any:
        if log is not None:
            log.append(str(value))
        while not gate.wait(0.01):
            progress("holding")
        return value
    return job


def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_one_device_runs_in_order_one_at_a_time_and_says_where_each_stands(queues: DeviceQueues) -> None:
    gates = [threading.Event() for _ in range(3)]
    order: list[str] = []
    tickets = [queues.submit(f"k{i}", "cpu", held(g, i, order)) for i, g in enumerate(gates)]
    until(lambda: tickets[0].state == "running")
    assert [t.position() for t in tickets] == [0, 1, 2] and tickets[0].stage in ("", "holding")
    for gate in reversed(gates):  # opening the last gate first changes nothing: the line is kept
        gate.set()
    assert all(t.wait(5) for t in tickets)
    assert order == ["0", "1", "2"] and [t.result() for t in tickets] == [0, 1, 2]
    assert [t.state for t in tickets] == ["done"] * 3 and tickets[0].position() is None
    spans = queues.intervals("cpu")
    assert len(spans) == 3 and all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


def test_a_busy_device_does_not_hold_up_another(queues: DeviceQueues) -> None:
    gpu_gate = threading.Event()
    gpu = queues.submit("big", "cuda:0", held(gpu_gate, "gpu"))
    until(lambda: gpu.state == "running", 60)  # its worker started (slow on a loaded 2-core machine)
    cpu = queues.submit("small", "cpu", held(_open(), "cpu"))
    assert cpu.wait(60) and cpu.result() == "cpu"
    assert gpu.state == "running"  # held all along: the CPU's line did not wait for it
    gpu_gate.set()
    assert gpu.wait(60) and gpu.result() == "gpu"


def _open() -> threading.Event:
    gate = threading.Event()
    gate.set()
    return gate


def test_identical_requests_in_flight_share_one_run_and_a_finished_one_runs_again(queues: DeviceQueues) -> None:
    gate = threading.Event()
    runs: list[str] = []
    first = queues.submit("same", "cpu", held(gate, "a", runs))
    second = queues.submit("same", "cpu", held(gate, "b", runs))
    assert second is first
    gate.set()
    assert first.wait(5) and first.result() == "a" and runs == ["a"]
    again = queues.submit("same", "cpu", held(gate, "c", runs))
    assert again is not first and again.wait(5) and runs == ["a", "c"]


def test_cancel_drops_one_interest_and_then_leaves_the_line_or_stops_the_run(queues: DeviceQueues) -> None:
    gate = threading.Event()
    running = queues.submit("running", "cpu", held(gate, "r"))
    waiting = queues.submit("waiting", "cpu", held(gate, "w"))
    queues.submit("waiting", "cpu", held(gate, "w"))  # a second session's interest
    until(lambda: running.state == "running")
    queues.cancel(waiting)
    assert waiting.state == "waiting" and waiting.position() == 1  # someone still wants it
    queues.cancel(waiting)
    assert waiting.state == "cancelled" and waiting.finished and waiting.position() is None
    with pytest.raises(Cancelled):
        waiting.result()
    queues.cancel(running)  # the job stops at its next progress report
    assert running.wait(5) and running.state == "cancelled" and "cancelled" in (running.error or "")
    after = queues.submit("after", "cpu", held(_open(), "next"))
    assert after.wait(5) and after.result() == "next"  # the device serves on


def test_a_failing_job_fails_its_ticket_only(queues: DeviceQueues) -> None:
    def refused(_worker: Worker, _progress: Progress) -> None:
        raise FusionvizError("no such model")

    def bug(_worker: Worker, _progress: Progress) -> None:
        raise ValueError("a bug")

    failed, broken = queues.submit("refused", "cpu", refused), queues.submit("bug", "cpu", bug)
    ok = queues.submit("ok", "cpu", held(_open(), 1))
    assert ok.wait(5) and ok.result() == 1
    assert failed.state == broken.state == "failed" and failed.error == "no such model"
    with pytest.raises(ValueError, match="a bug"):  # a bug keeps its type and traceback for the caller
        broken.result()


def test_close_cancels_what_waits_and_refuses_new_runs() -> None:
    queues = DeviceQueues()
    gate = threading.Event()
    running = queues.submit("r", "cpu", held(gate))
    waiting = queues.submit("w", "cpu", held(gate))
    until(lambda: running.state == "running")
    queues.close()
    assert waiting.state == "cancelled" and running.state == "cancelled"
    with pytest.raises(FusionvizError, match="shutting down"):
        queues.submit("x", "cpu", held(gate))


def test_the_app_keeps_its_one_set_of_queues_when_streamlit_caches_are_cleared() -> None:
    """Streamlit's "Clear caches" empties every st.cache_resource: the app's queues must outlive it, or a
    second worker per device would measure at the same time as the first."""
    first = state.runs()
    st.cache_resource.clear()
    st.cache_data.clear()
    assert state.runs() is first and state.runs().queues is first.queues


def test_a_run_behind_the_warm_up_says_what_the_warm_up_pays_for(queues: DeviceQueues) -> None:
    gate = threading.Event()
    warming = queues.submit(WARM_KEY, "cpu", held(gate))
    until(lambda: warming.state == "running")
    run = queues.submit("session", "cpu", held(gate))
    assert _waiting_label(run, queues).startswith("1st in line for cpu, behind the compiler's warm-up (")
    gate.set()
    assert run.wait(5)
    other = threading.Event()
    first = queues.submit("first", "cpu", held(other))
    until(lambda: first.state == "running")
    second = queues.submit("second", "cpu", held(other))
    assert _waiting_label(second, queues).startswith("1st in line for cpu · ")
    other.set()
    assert second.wait(5)


def test_a_job_hands_its_ticket_a_partial_result_before_its_whole_one(queues: DeviceQueues) -> None:
    """A session timed by its first process is shown while the others time: the ticket holds it as its preview,
    with every stage reported before and after, and the whole result replaces it at the end."""
    gate, handed = threading.Event(), threading.Event()

    def job(_worker: Worker, reports: Reports) -> str:
        reports("timing process 1")
        reports.partial("one process")
        handed.set()
        assert gate.wait(5)
        reports("timing process 2")
        return "two processes"

    ticket = queues.submit("partly", "cpu", job)
    assert handed.wait(5)
    assert (ticket.preview, ticket.previews, ticket.stage, ticket.finished) == ("one process", 1, "timing process 1",
                                                                               False)
    assert ticket.previewed is not None and ticket.started is not None and ticket.previewed >= ticket.started
    gate.set()
    assert ticket.wait(5) and ticket.result() == "two processes"
    assert [stage for _, stage in ticket.stages] == ["timing process 1", "timing process 2"]


def test_a_cancelled_job_stops_when_it_hands_over_a_partial_result(queues: DeviceQueues) -> None:
    gate, after = threading.Event(), []

    def job(_worker: Worker, reports: Reports) -> None:
        assert gate.wait(5)
        reports.partial("too late")
        after.append("went on")

    ticket = queues.submit("cancelled", "cpu", job)
    until(lambda: ticket.state == "running")
    ticket.cancel()
    gate.set()
    assert ticket.wait(5) and ticket.state == "cancelled"
    assert ticket.preview is None and after == []
