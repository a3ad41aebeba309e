"""The caller's side of the worker: typed functions that validate, send jobs, and assemble sessions.

No torch here: the app and the CLI call these, and only the worker process imports torch. A session is
measured in two phases: each mode is captured (compiled, explained, profiled) as its own job, so a crash
or an out-of-memory error loses that mode only; then the modes that ran are timed together, in
interleaved rounds, in `config.processes` fresh worker processes, so the spread between processes shows
in the result instead of hiding behind one process's narrow interval.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, wait
from typing import Any, TypeVar

import msgspec

from fusionviz.errors import ConfigError, WorkerError
from fusionviz.measure.catalog import validated
from fusionviz.measure.load import machine_load
from fusionviz.measure.protocol import (
    CeilingsJob,
    CeilingsReply,
    Device,
    DevicesJob,
    DevicesReply,
    Job,
    MemoryJob,
    MemoryReply,
    ModeJob,
    ModeReply,
    NaiveJob,
    NaiveReply,
    Progress,
    SweepJob,
    SweepReply,
    TimingJob,
    TimingReply,
    WarmJob,
    WarmReply,
)
from fusionviz.measure.worker import Worker
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.config import (
    RunConfig,
    SweepRequest,
    not_applicable_reason,
    sweep_sizes,
)
from fusionviz.records.decode import decode
from fusionviz.records.session import (
    Environment,
    ModeMemory,
    ModeRun,
    NaiveResult,
    Session,
    Sweep,
    Timing,
    TimingProcess,
)

T = TypeVar("T")


def timing_cores(device: str, count: int) -> list[int]:
    """The cores a GPU's `count` timing workers run on, one each, from the last core down (cuda:0's first), so
    that they come up and warm side by side, not in turn on one core (with all three on one core, the first
    began timing 9.6 s after an H100 run's captures ended, benchmarks/RESULTS.md), and grids timing on several
    GPUs at once share none while the machine has cores enough (past that they wrap around)."""
    allowed = sorted(os.sched_getaffinity(0))
    index = int(device.split(":")[1]) if ":" in device else 0
    return [allowed[-1 - (index * count + i) % len(allowed)] for i in range(count)]


def _pinned(core: int | None) -> set[int] | None:
    return {core} if core is not None else None


def _cores_for_new(device: str, count: int, spares: list[_Spare]) -> list[int | None]:
    """The cores of the workers to start beside `spares` to make `count`: `timing_cores` less the spares' own, one
    entry each; on the CPU None for each (the compiled kernels use several threads: nothing is pinned)."""
    left: list[int | None] = list(timing_cores(device, count)) if device.startswith("cuda") else [None] * count
    for _, _, core in spares:
        if core in left:
            left.remove(core)
    return left[:count - len(spares)]


class _TimingWorkers:
    """`count` fresh workers: spares started and warmed before the run (`keep_spares`), the rest brought up one
    at a time from the run's start until `begin` is called, once the capture's worker reports its first stage
    (has finished what was ahead of it in its line): each in turn imports torch and pays the Python part of a
    first compile (`WarmJob` without compile). A Run pressed during the lab's warm-up (a job of its own in the
    device's line) starts once that has ended, so none of its workers comes up beside the warm-up's header build
    and probe of the CPU, one g++ on each core of two, on a machine that never compiled: three workers importing
    torch beside it at once made it 10-12 s against 5-8 s alone, three warm-ups beside it, which wait for its
    results but preprocess the header each, 23.1 s against 16.5 s, and one brought up beside it on 2026-12-04
    saved 0.2-0.4 s of a 14.5-15 s run (benchmarks/RESULTS.md). From `begin` on, every worker not yet up comes up
    at once, and each then warms (`WarmJob`: its compile hits the capture's Inductor cache). `warmed` returns them
    once every one is warm, so that no warm-up runs beside a timing. With a `core` (GPU runs) each runs on that
    core from its start, so its memory is allocated local to it: pinned only while timing, processes' medians
    still differed by up to 1.6x on the H200 machine, while a script pinned from its start agreed with the
    fastest of them. Each worker times one run only, a spare as much as the others: a spare is a fresh process
    started earlier, not one reused. A GPU run's workers run on cores of their own (`timing_cores`)."""

    def __init__(self, count: int, cache_dir: str | None, device: str) -> None:
        spares = _take_spares((cache_dir, device), count)
        fresh = [Worker(cache_dir=cache_dir, cpus=_pinned(core))
                 for core in _cores_for_new(device, count, spares)]
        self.workers = [w for w, _, _ in spares] + fresh
        self._fresh = fresh
        self._device = device
        self._warming: list[Future[None]] = [warming for _, warming, _ in spares]
        self._begun = threading.Event()
        self._lock = threading.Lock()
        self._first = [in_background(self._one_at_a_time)] if fresh else []

    def _one_at_a_time(self) -> None:
        for worker in self._fresh:
            if self._begun.is_set():
                return  # `begin` brings up the rest at once
            _warm(worker, self._device, compile=False)

    def begin(self) -> None:
        """Bring up every fresh worker not yet up and warm each, once (later calls do nothing)."""
        with self._lock:
            if not self._begun.is_set():
                self._begun.set()
                self._warming += [in_background(_warm, w, self._device) for w in self._fresh]

    def warmed(self, progress: Progress | None = None) -> list[Worker]:
        """The workers, once every one is warm; says so in `progress` where that is still to wait for."""
        self.begin()
        if progress is not None and not all(future.done() for future in self._warming):
            progress("starting the timing processes")
        for future in self._warming:
            future.result()
        return self.workers

    def close(self) -> None:
        """End every worker (`contextlib.closing` calls it however the run ends): a warm-up waiting on one wakes at
        once (WorkerError "ended", which `_warm` lets go), and one not yet started finds it ended."""
        with self._lock:
            self._begun.set()
        for w in self.workers:
            w.end()
        wait([*self._first, *self._warming], timeout=CLOSE_WAIT_S)


CLOSE_WAIT_S = 10.0  # how long closing waits for the warm-ups its ends woke; they return in milliseconds


def in_background(function: Callable[..., T], *args: Any) -> Future[T]:
    """`function(*args)` in a daemon thread, its outcome in the Future returned. A daemon, not an executor's
    thread: the interpreter joins those before its exit hooks run, so one waiting on a worker would hold up the
    exit for good, while a daemon is woken by the hook that ends every worker (`worker._end_all`)."""
    future: Future[T] = Future()

    def run() -> None:
        future.set_running_or_notify_cancel()
        try:
            value = function(*args)
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(value)

    threading.Thread(target=run, name=f"fusionviz-{getattr(function, '__name__', 'job')}", daemon=True).start()
    return future


_SpareKey = tuple[str | None, str]  # (Inductor cache folder, device) a run's timers need
_Spare = tuple[Worker, Future[None], int | None]  # a spare, its warm-up, and the core it runs on (GPU runs)
_SPARES: dict[_SpareKey, list[_Spare]] = {}
_SPARES_LOCK = threading.Lock()


def keep_spares(count: int, device: str, cache_dir: str | None = None) -> None:
    """Start, and warm, up to `count` timing workers for the next run on `device` whose capture compiles into
    `cache_dir` (the app, after each run): that run's timings then begin as soon as its capture ends. Waiting
    for three workers started with the run, a CPU run here spent 7 s of its 16 s after its capture
    (benchmarks/RESULTS.md). Each idles with torch imported (about 0.3 GB of memory) until a run takes it; they
    end with this process."""
    with _SPARES_LOCK:
        spares = _SPARES.setdefault((cache_dir, device), [])
        spares[:] = [spare for spare in spares if spare[0].alive]
        for core in _cores_for_new(device, count, spares):
            worker = Worker(cache_dir=cache_dir, cpus=_pinned(core))
            worker.start()
            spares.append((worker, in_background(_warm, worker, device), core))


def _take_spares(key: _SpareKey, count: int) -> list[_Spare]:
    """Up to `count` live spares kept for `key`, no longer kept."""
    with _SPARES_LOCK:
        spares = [spare for spare in _SPARES.pop(key, []) if spare[0].alive]
        taken, _SPARES[key] = spares[:count], spares[count:]
    return taken


@atexit.register
def _end_spares() -> None:
    with _SPARES_LOCK:
        for spares in _SPARES.values():
            for worker, _, _ in spares:
                worker.close()
        _SPARES.clear()


def _warm(worker: Worker, device: str, compile: bool = True) -> None:
    """A timing worker's warm-up; its failure is left to the timing job, which reports it as that process's."""
    with contextlib.suppress(WorkerError, ConfigError):
        warm_worker(worker, device, compile=compile)


def warm_worker(worker: Worker, device: str, timeout_s: float = 300.0, compile: bool = True) -> float:
    """Have `worker` pay now what its first compile on `device` pays before its own work (`WarmJob`; with
    `compile` False its Python part only); returns the seconds it took there."""
    reply: WarmReply = _ask(worker, WarmJob(device, compile), WarmReply, None, timeout_s)
    return reply.seconds


@contextlib.contextmanager
def _worker_for(worker: Worker | None, *, cold: bool) -> Iterator[Worker]:
    """The caller's worker; or, when `cold`, a fresh process with an empty Inductor cache directory
    (removed afterwards), so nothing compiled before can be reused; or a worker of our own."""
    if cold:
        with tempfile.TemporaryDirectory(prefix="fusionviz-cold-cache-", ignore_cleanup_errors=True) as cache, \
                Worker(cache_dir=cache) as fresh:
            yield fresh
    elif worker is not None:
        yield worker
    else:
        with Worker() as own:
            yield own


def _ask(worker: Worker, job: Job, reply_type: type[Any], progress: Progress | None, timeout_s: float) -> Any:
    """One job and its decoded reply; a configuration the worker refused comes back as ConfigError, other
    failures as WorkerError."""
    try:
        return decode(reply_type, worker.request(job, progress, timeout_s=timeout_s))
    except WorkerError as exc:
        if exc.kind == "config":
            raise ConfigError(str(exc)) from None
        raise


def list_devices(worker: Worker, timeout_s: float = 120.0) -> list[Device]:
    """Each GPU the worker sees, then the CPU."""
    reply: DevicesReply = _ask(worker, DevicesJob(), DevicesReply, None, timeout_s)
    return reply.devices


def run_session(config: RunConfig, progress: Progress | None = None, worker: Worker | None = None,
                naive_calls: int = 0, recalibrate: bool = False,
                partial: Callable[[Session], None] | None = None) -> Session:
    """Capture every mode of `config` in a worker, time the modes that ran in fresh workers, and return the
    session; with `naive_calls`, also the naive snippet's measurement of the first compiled mode, so that
    the methodology view can be shown from the session alone. The device's ceilings come from the cache of
    an earlier calibration, or are calibrated now (always, with `recalibrate`). `partial` is handed the session
    as it stands after each timing process but the last (its first verdict comes a process's time after the
    captures, not three). Raises ConfigError before any work when the configuration cannot run; errors of single
    modes are kept in their ModeRun, errors of a timing process in its TimingProcess."""
    config = validated(config)
    load_before = machine_load()
    environment: Environment | None = None
    runs: list[ModeRun] = []
    with _worker_for(worker, cold=config.cold_compile) as chosen, \
            contextlib.closing(_TimingWorkers(config.processes, chosen.cache_dir, config.device)) as timers:
        for mode in config.modes:
            reason = not_applicable_reason(config, mode)
            if reason:
                runs.append(ModeRun(mode=mode, status="not_applicable", error=reason))
                continue
            try:
                reply: ModeReply = _ask(chosen, ModeJob(config, mode), ModeReply, _then(timers.begin, progress),
                                        config.timeout_s)
            except WorkerError as exc:
                runs.append(ModeRun(mode=mode, status="error", error=str(exc)))
                continue
            environment = environment or reply.environment
            runs.append(reply.run)
        ceilings = _ceilings(chosen, config, recalibrate, progress) if any(r.ok for r in runs) else None
        ran = tuple(r.mode for r in runs if r.ok)
        compiled = [m for m in ran if m != "eager"]
        naive = None
        if naive_calls and compiled:
            reply_naive: NaiveReply = _ask(chosen, NaiveJob(config, compiled[0], naive_calls), NaiveReply, progress,
                                           config.timeout_s)
            naive = reply_naive.naive

        def session(processes: list[TimingProcess], measured: list[ModeMemory | str | None]) -> Session:
            timing = Timing(timer="cuda_events" if config.is_cuda else "perf_counter", processes=processes,
                            load_before=load_before, load_after=machine_load())
            return Session(config=config, environment=environment or Environment(device_kind=config.device),
                           runs=_with_memory(runs, measured), timing=timing, naive=naive, ceilings=ceilings,
                           source="live")

        processes: list[TimingProcess] = []
        measured: list[ModeMemory | str | None] = []
        timed = timers.warmed(progress) if ran else []
        for i, timer in enumerate(timed):
            process, memory = _time(timer, config, ran, i, progress, ran[i] if config.memory and i < len(ran) else "")
            processes.append(process)
            measured.append(memory)
            if partial is not None and i + 1 < len(timed):
                partial(session(list(processes), list(measured)))
        measured = measured[:len(ran)] + [None] * (len(ran) - len(measured))
        missing = [i for i, memory in enumerate(measured) if memory is None] if config.memory else []
        for i, found in zip(missing, _memory_not_timed(tuple(ran[i] for i in missing), chosen.cache_dir, config,
                                                       progress), strict=True):
            measured[i] = found
        return session(processes, measured)


def _then(first: Callable[[], None], progress: Progress | None) -> Progress:
    """`progress`, calling `first` before each stage it passes on."""
    def told(stage: str) -> None:
        first()
        if progress is not None:
            progress(stage)
    return told


def _ceilings(worker: Worker, config: RunConfig, redo: bool, progress: Progress | None) -> Ceilings | None:
    """The device's ceilings (cached per device, or calibrated: a few seconds); a failure leaves them out."""
    try:
        reply: CeilingsReply = _ask(worker, CeilingsJob(config, redo), CeilingsReply, progress, config.timeout_s)
    except WorkerError:
        return None
    return reply.ceilings


def _time(worker: Worker, config: RunConfig, modes: tuple[str, ...], index: int, progress: Progress | None,
          memory_mode: str) -> tuple[TimingProcess, ModeMemory | None]:
    """One timing process's rounds, and the memory of `memory_mode`, which it ran first; its failure is kept as
    the process's error, so the others still count."""
    try:
        reply: TimingReply = _ask(worker, TimingJob(config, modes, index, memory_mode), TimingReply, progress,
                                  config.timeout_s)
    except WorkerError as exc:
        return TimingProcess(index=index, error=str(exc)), None
    return reply.timing, reply.memory


def _with_memory(runs: list[ModeRun], measured: list[ModeMemory | str | None]) -> list[ModeRun]:
    """The runs, each that ran given its memory as measured (the i-th that ran, the i-th entry; an entry that is
    a string is why it was not measured, kept in the run's logs). New runs: a session handed out is not changed."""
    ran = iter(measured)
    given = []
    for run in runs:
        memory = next(ran, None) if run.ok else None
        if isinstance(memory, str):
            given.append(msgspec.structs.replace(run, logs=[*run.logs, memory]))
        else:
            given.append(msgspec.structs.replace(run, memory=memory) if memory is not None else run)
    return given


def _memory_not_timed(modes: tuple[str, ...], cache_dir: str | None, config: RunConfig,
                      progress: Progress | None) -> list[ModeMemory | str]:
    """The memory of each mode that ran but no timing process measured (process i measures the i-th mode that
    ran, first; a failed process none), each in a fresh worker of its own where no other mode ran before it; a
    failure is said as a line for the run's logs."""
    measured: list[ModeMemory | str] = []
    for mode in modes:
        try:
            with Worker(cache_dir=cache_dir, cpus=_pinned(_cores_for_new(config.device, 1, [])[0])) as fresh:
                reply: MemoryReply = _ask(fresh, MemoryJob(config, mode), MemoryReply, progress, config.timeout_s)
            measured.append(reply.memory)
        except (WorkerError, ConfigError) as exc:
            measured.append(f"memory not measured: {str(exc).splitlines()[0]}")
    return measured


def run_naive(config: RunConfig, mode: str, calls: int, progress: Progress | None = None,
              worker: Worker | None = None) -> NaiveResult:
    """The naive snippet's measurement of `mode` against eager, in a worker."""
    config = validated(config)
    with _worker_for(worker, cold=False) as chosen:
        reply: NaiveReply = _ask(chosen, NaiveJob(config, mode, calls), NaiveReply, progress, config.timeout_s)
    return reply.naive


def run_sweep_session(config: RunConfig, request: SweepRequest, progress: Progress | None = None,
                      worker: Worker | None = None) -> Session:
    """Run a shape sweep in a worker and return a session holding it (no per-mode runs).

    With `request.cold_caches`, each strategy runs in a fresh worker with an empty Inductor cache."""
    config = validated(config)
    sweep_sizes(config, request)  # refuse a bad schedule here, before the worker starts
    parts = [request] if not request.cold_caches else [
        dataclasses.replace(request, strategies=[strategy]) for strategy in request.strategies]
    sweep: Sweep | None = None
    environment: Environment | None = None
    for part in parts:
        with _worker_for(worker, cold=request.cold_caches) as chosen:
            reply: SweepReply = _ask(chosen, SweepJob(config, part), SweepReply, progress, config.timeout_s)
        environment = environment or reply.environment
        if sweep is None:
            sweep = reply.sweep
        else:
            sweep.strategies += reply.sweep.strategies
    return Session(config=config, environment=environment or Environment(), runs=[], sweep=sweep, source="live")
