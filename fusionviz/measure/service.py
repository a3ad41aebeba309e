"""The app's one door to the measuring side: a run is asked for by what it measures (`SessionRun`, `NaiveRun`,
`SweepRun`), answered with a ticket that tells its place in line and its stages, and finally its result or the
error its user is shown.

The service owns the device queues (`measure.queue`: one line and one worker per device, identical requests in
flight sharing one run) and the rule that only complete results are shared: a run that failed in part (a
crashed, timed-out or out-of-memory mode, a failed timing process or sweep strategy) is a fault of that run, not
an answer for its configuration. A complete one goes into the shared store the moment it ends, in the queue's
thread, so it is kept even when the user who asked has left. The store is asked for then, not when the run is
queued: the app may have replaced it meanwhile (Streamlit's "Clear caches"). No torch here: the app's process
imports this module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec

from fusionviz.lru import LRU
from fusionviz.measure.client import (
    keep_spares,
    list_devices,
    run_naive,
    run_session,
    run_sweep_session,
    warm_worker,
)
from fusionviz.measure.protocol import Device as Device  # re-exported: the app's fallback when none are listed
from fusionviz.measure.queue import DeviceQueues as DeviceQueues  # re-exported: what the app's progress box reads
from fusionviz.measure.queue import Reports
from fusionviz.measure.queue import Ticket as Ticket  # re-exported: what the app follows
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig, SweepRequest
from fusionviz.records.session import NaiveResult, Session

WARM_KEY = "warm"  # the key of a worker's warm-up in its device's line
# How long after a run its device's next timing workers start (`keep_spares`), so that their torch imports do not
# take the cores the result is drawn with.
SPARES_AFTER_S = 5.0


class _Run:
    """What every run holds: the configuration it measures, on the device it names. Its `measure(worker, reports)`
    tells its stages, and a run that has one its partial result, through `reports`."""

    kind: ClassVar[str]
    config: RunConfig

    @property
    def key(self) -> str:
        """The key of its result: its kind and what determines it, as JSON (the same for every user)."""
        return f"{self.kind}|{msgspec.json.encode(self, order='sorted').decode()}"


@dataclass(frozen=True)
class SessionRun(_Run):
    """Every mode of `config`, captured and timed (the lab; the methodology page's proper measurement)."""

    config: RunConfig
    kind: ClassVar[str] = "session"

    def measure(self, worker: Worker, reports: Reports) -> Session:
        """The session, handed over partly timed after each timing process but the last (the lab draws it)."""
        return run_session(self.config, reports, worker=worker, partial=reports.partial)


@dataclass(frozen=True)
class NaiveRun(_Run):
    """The naive snippet's measurement of `mode` against eager over `calls` calls (the methodology page)."""

    config: RunConfig
    mode: str
    calls: int
    kind: ClassVar[str] = "naive"

    def measure(self, worker: Worker, progress: Reports) -> NaiveResult:
        return run_naive(self.config, self.mode, self.calls, progress, worker=worker)


@dataclass(frozen=True)
class SweepRun(_Run):
    """A shape sweep of `config` (the Dynamic shapes page)."""

    config: RunConfig
    request: SweepRequest
    kind: ClassVar[str] = "sweep"

    def measure(self, worker: Worker, progress: Reports) -> Session:
        return run_sweep_session(self.config, self.request, progress, worker=worker)


Run = SessionRun | NaiveRun | SweepRun


def complete(value: Any) -> bool:
    """Whether a result may be shared: no mode, timing process or sweep strategy of it failed."""
    if not isinstance(value, Session):
        return True
    return (all(run.status != "error" for run in value.runs)
            and (value.timing is None or all(p.error is None for p in value.timing.processes))
            and (value.sweep is None or all(s.status != "error" for s in value.sweep.strategies)))


class RunService:
    """The device queues and the shared store of complete results (`store()`, by `Run.key`); see the module."""

    def __init__(self, store: Callable[[], LRU[str, Any]]) -> None:
        self.queues = DeviceQueues()
        self._store = store

    def devices(self) -> list[Device]:
        """Each GPU, then the CPU: asked of the CPU's worker, which the CPU's runs then reuse (its torch already
        imported). Raises WorkerError when the worker cannot say."""
        ticket = self.queues.submit("devices", "cpu", lambda worker, _progress: list_devices(worker))
        ticket.wait()
        return ticket.result()

    def warm(self, device: str) -> Ticket[float]:
        """Queue, on `device`'s line, the warm-up of its worker (`client.warm_worker`): a first Run pressed while
        it runs waits behind work that run would have done itself. The first run's timing workers are not
        started ahead here: their three torch imports beside a first visit's clicks slowed a session switch
        from 0.85 to 1.9 s and the presentation toggle from 0.3 to 1.5 s, for 1 s off that run (RESULTS.md)."""
        return self.queues.submit(WARM_KEY, device, lambda worker, _progress: warm_worker(worker, device))

    def wait_idle(self) -> None:
        """Until no device runs or has waiting a run or warm-up."""
        self.queues.wait_idle()

    def shared(self, key: str) -> Any:
        """The complete result of `key` kept for everyone, or None."""
        return self._store().get(key)

    def submit(self, run: Run) -> Ticket[Any]:
        """Queue `run` on its device, or join the identical run waiting or running there."""
        key = run.key

        def measure(worker: Worker, reports: Reports) -> Any:
            value = run.measure(worker, reports)
            if isinstance(run, SessionRun) and not run.config.cold_compile:
                spares = threading.Timer(SPARES_AFTER_S, keep_spares,
                                         (run.config.processes, run.config.device, worker.cache_dir))
                spares.daemon = True
                spares.start()
            if complete(value):
                self._store().put(key, value)
            return value

        return self.queues.submit(key, run.config.device, measure)
