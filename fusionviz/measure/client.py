"""The caller's side of the worker: typed functions that validate, send jobs, and assemble sessions.

No torch here: the app and the CLI call these, and only the worker process imports torch. Each mode is
its own job, so a crash or an out-of-memory error loses that mode only, and the worker is restarted for
the next.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Iterator
from typing import Any

from fusionviz.errors import ConfigError, WorkerError
from fusionviz.measure.catalog import CATALOG
from fusionviz.measure.protocol import (
    Device,
    DevicesJob,
    DevicesReply,
    Job,
    ModeJob,
    ModeReply,
    NaiveJob,
    NaiveReply,
    Progress,
    SweepJob,
    SweepReply,
)
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig, SweepRequest, not_applicable_reason, sweep_sizes, validate
from fusionviz.records.session import Environment, ModeRun, NaiveResult, Session, Sweep, decode


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


def run_session(config: RunConfig, progress: Progress | None = None, worker: Worker | None = None) -> Session:
    """Run every mode of `config` in a worker and return the session. Raises ConfigError before any work
    when the configuration cannot run; errors of single modes are kept in their ModeRun."""
    config = validate(config, known_models=set(CATALOG))
    environment: Environment | None = None
    runs: list[ModeRun] = []
    with _worker_for(worker, cold=config.cold_compile) as chosen:
        for mode in config.modes:
            reason = not_applicable_reason(config, mode)
            if reason:
                runs.append(ModeRun(mode=mode, status="not_applicable", error=reason))
                continue
            try:
                reply: ModeReply = _ask(chosen, ModeJob(config, mode), ModeReply, progress, config.timeout_s)
            except WorkerError as exc:
                runs.append(ModeRun(mode=mode, status="error", error=str(exc)))
                continue
            environment = environment or reply.environment
            runs.append(reply.run)
    return Session(config=config, environment=environment or Environment(device_kind=config.device),
                   runs=runs, source="live")


def run_naive(config: RunConfig, mode: str, calls: int, progress: Progress | None = None,
              worker: Worker | None = None) -> NaiveResult:
    """The naive snippet's measurement of `mode` against eager, in a worker."""
    config = validate(config, known_models=set(CATALOG))
    with _worker_for(worker, cold=False) as chosen:
        reply: NaiveReply = _ask(chosen, NaiveJob(config, mode, calls), NaiveReply, progress, config.timeout_s)
    return reply.naive


def run_sweep_session(config: RunConfig, request: SweepRequest, progress: Progress | None = None,
                      worker: Worker | None = None) -> Session:
    """Run a shape sweep in a worker and return a session holding it (no per-mode runs).

    With `request.cold_caches`, each strategy runs in a fresh worker with an empty Inductor cache."""
    config = validate(config, known_models=set(CATALOG))
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
