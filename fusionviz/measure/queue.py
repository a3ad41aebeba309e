"""One queue per device, so that every user of one app process shares the machine fairly and safely.

Each device ("cpu", "cuda:0", …) has its own first-in first-out line, its own dispatcher thread and its own
long-lived worker process: runs on one device never overlap (a timing on a busy device is wrong), while a
CPU run never waits for a GPU run. A request for a key that is already waiting or running joins that run
instead of starting a second one; every request holds an interest in its ticket, and a ticket nobody is
interested in any more leaves the line, or stops if it runs (its worker is stopped through `abort_on`, and the
next job starts a fresh one). The queue keeps no results: a finished ticket is dropped from the line, so the
next request for its key runs again; what may be kept, and for whom, is the caller's choice. A job may hand its
ticket a partial result before its whole one (`Reports.partial`: a session timed by its first process), which
the ticket holds as its `preview` for anyone following it.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from fusionviz.errors import FusionvizError
from fusionviz.measure.worker import Cancelled, Worker, abort_on

T = TypeVar("T")
TicketState = Literal["waiting", "running", "done", "failed", "cancelled"]
Job = Callable[[Worker, "Reports"], T]
INTERVALS_KEPT = 1000  # run intervals remembered per device (for tests and diagnostics), the oldest dropped
JOIN_S = 10.0  # how long closing waits for a running job to notice its abort


class Ticket(Generic[T]):
    """One run in a device's line, shared by every request for its key while it waits or runs. Its state is
    written by the dispatcher thread and read by anyone."""

    def __init__(self, key: str, device: str, job: Job[T], queues: DeviceQueues) -> None:
        self.key, self.device = key, device
        self.state: TicketState = "waiting"
        self.stages: list[tuple[float, str]] = []  # (monotonic time, stage) of each stage the job reported
        self.preview: T | None = None  # the latest partial result the job handed over, until its whole one
        self.previews = 0  # how many it has handed over
        self.previewed: float | None = None  # when it handed over the latest (monotonic seconds)
        self.submitted = time.monotonic()
        self.started: float | None = None
        self.ended: float | None = None
        self._job = job
        self._queues = queues
        self._interest = 1
        self._abort = threading.Event()
        self._finished = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the ticket is finished or `timeout` passes; whether it is finished."""
        return self._finished.wait(timeout)

    def cancel(self) -> None:
        """Drop this request's interest in the ticket (`DeviceQueues.cancel`)."""
        self._queues.cancel(self)

    def position(self) -> int | None:
        """0 while it runs, n while it is the n-th waiting on its device, None once finished."""
        return self._queues.position(self)

    @property
    def error(self) -> str | None:
        """What went wrong, for the user, once it failed or was cancelled."""
        return str(self._error) if self._error is not None else None

    def result(self) -> T:
        """The job's value; raises its FusionvizError (Cancelled when cancelled), or re-raises a bug as it was."""
        if not self.finished:
            raise RuntimeError(f"ticket {self.key} has not finished")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    @property
    def stage(self) -> str:
        """The latest stage the job reported ("" before its first)."""
        return self.stages[-1][1] if self.stages else ""

    def _progress(self, stage: str) -> None:
        """The job's progress callback: records the stage, and stops a cancelled job at its next report."""
        self._go_on()
        self.stages.append((time.monotonic(), stage))

    def _partial(self, value: T) -> None:
        """The job's partial-result callback: holds `value` as the preview (a cancelled job stops here too)."""
        self._go_on()
        self.preview, self.previewed = value, time.monotonic()
        self.previews += 1

    def _go_on(self) -> None:
        if self._abort.is_set():
            raise Cancelled("the run was cancelled")


class Reports:
    """What a running job is given to tell its ticket: each stage it starts (call it with the stage, as any
    `Progress`), and a partial result worth showing before its whole one (`partial`)."""

    def __init__(self, ticket: Ticket[Any]) -> None:
        self._ticket = ticket

    def __call__(self, stage: str) -> None:
        self._ticket._progress(stage)

    def partial(self, value: Any) -> None:
        self._ticket._partial(value)


@dataclass
class _Lane:
    """One device's line, its worker and the intervals of the runs it has served."""

    device: str
    worker: Worker = field(default_factory=Worker)
    waiting: deque[Ticket[Any]] = field(default_factory=deque)
    running: Ticket[Any] | None = None
    intervals: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=INTERVALS_KEPT))
    thread: threading.Thread | None = None


class DeviceQueues:
    """Per device a line, a dispatcher thread and a worker (see the module). Thread-safe; every worker is
    stopped when the interpreter exits."""

    def __init__(self) -> None:
        self._lanes: dict[str, _Lane] = {}
        self._in_flight: dict[tuple[str, str], Ticket[Any]] = {}
        self._changed = threading.Condition()
        self._closed = False
        atexit.register(self.close)

    def submit(self, key: str, device: str, job: Job[T]) -> Ticket[T]:
        """Queue `job` on `device` under `key`, or join the ticket of that key already waiting or running
        there (the job given then is not used)."""
        with self._changed:
            if self._closed:
                raise FusionvizError("the app is shutting down; try again in a moment")
            ticket = self._in_flight.get((device, key))
            if ticket is not None:
                ticket._interest += 1
                return ticket
            ticket = Ticket(key, device, job, self)
            lane = self._lane(device)
            lane.waiting.append(ticket)
            self._in_flight[(device, key)] = ticket
            self._changed.notify_all()
            return ticket

    def cancel(self, ticket: Ticket[Any]) -> None:
        """Drop one interest in `ticket`; with none left it leaves the line, or stops if it runs."""
        with self._changed:
            if ticket.finished or ticket._interest == 0:
                return
            ticket._interest -= 1
            if ticket._interest:
                return
            lane = self._lanes[ticket.device]
            if ticket in lane.waiting:
                lane.waiting.remove(ticket)
                self._finish(ticket, "cancelled", None, Cancelled("the run was cancelled"))
            else:
                ticket._abort.set()  # the dispatcher ends it cancelled
                del self._in_flight[(ticket.device, ticket.key)]  # a new request for its key runs afresh

    def position(self, ticket: Ticket[Any]) -> int | None:
        with self._changed:
            if ticket.finished:
                return None
            lane = self._lanes[ticket.device]
            return 0 if lane.running is ticket else lane.waiting.index(ticket) + 1

    def running(self, device: str) -> Ticket[Any] | None:
        """The ticket `device` is running now, if any."""
        with self._changed:
            lane = self._lanes.get(device)
            return lane.running if lane else None

    def wait_idle(self) -> None:
        """Until no line has a job running or waiting (work done ahead by the app leaves the cores to a run)."""
        with self._changed:
            self._changed.wait_for(lambda: all(lane.running is None and not lane.waiting
                                               for lane in self._lanes.values()) or self._closed)

    def worker_pid(self, device: str) -> int | None:
        """The process id of `device`'s worker while it runs (for diagnostics and fault injection)."""
        with self._changed:
            lane = self._lanes.get(device)
            return lane.worker.pid if lane else None

    def intervals(self, device: str) -> list[tuple[float, float]]:
        """(start, end) of each run `device` served, in monotonic seconds, oldest first."""
        with self._changed:
            lane = self._lanes.get(device)
            return list(lane.intervals) if lane else []

    def close(self) -> None:
        """Cancel what waits, stop what runs, end the dispatchers and their workers. Idempotent."""
        with self._changed:
            self._closed = True
            for lane in self._lanes.values():
                while lane.waiting:
                    self._finish(lane.waiting.popleft(), "cancelled", None, Cancelled("the app is shutting down"))
                if lane.running is not None:
                    lane.running._abort.set()
            self._changed.notify_all()
            threads = [lane.thread for lane in self._lanes.values() if lane.thread is not None]
        for thread in threads:
            thread.join(JOIN_S)

    def _lane(self, device: str) -> _Lane:
        """The device's lane, its dispatcher started on first use."""
        lane = self._lanes.get(device)
        if lane is None:
            lane = self._lanes[device] = _Lane(device)
            lane.thread = threading.Thread(target=self._serve, args=(lane,), name=f"fusionviz-queue-{device}",
                                           daemon=True)
            lane.thread.start()
        return lane

    def _serve(self, lane: _Lane) -> None:
        """The dispatcher: one job after another, each under its ticket's abort event."""
        try:
            while True:
                with self._changed:
                    while not lane.waiting and not self._closed:
                        self._changed.wait()
                    if self._closed:
                        return
                    ticket = lane.running = lane.waiting.popleft()
                    ticket.state, ticket.started = "running", time.monotonic()
                value, error = None, None
                try:
                    with abort_on(ticket._abort):
                        value = ticket._job(lane.worker, Reports(ticket))
                except Exception as exc:  # kept on the ticket: its callers raise it, bugs with their traceback
                    error = exc
                ended = time.monotonic()
                with self._changed:
                    assert ticket.started is not None
                    lane.intervals.append((ticket.started, ended))
                    lane.running = None
                    state: TicketState = ("cancelled" if isinstance(error, Cancelled)
                                          else "failed" if error is not None else "done")
                    self._finish(ticket, state, value, error, ended)
        finally:
            lane.worker.close()

    def _finish(self, ticket: Ticket[Any], state: TicketState, value: Any, error: BaseException | None,
                ended: float | None = None) -> None:
        """Record how `ticket` ended and wake its waiters and those of an idle line; the caller holds the lock."""
        if self._in_flight.get((ticket.device, ticket.key)) is ticket:
            del self._in_flight[(ticket.device, ticket.key)]
        ticket.state, ticket._value, ticket._error = state, value, error
        ticket.ended = ended if ended is not None else time.monotonic()
        ticket._finished.set()
        self._changed.notify_all()
