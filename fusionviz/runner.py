"""The caller's side of a run: validate, send each mode to the worker, assemble the session.

No torch here: the app and the CLI call `run_session`, and only the worker process imports torch.
Each mode is its own job, so a crash or an out-of-memory error loses that mode only, and the worker is
restarted for the next.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from fusionviz.analysis import finalise
from fusionviz.catalog import CATALOG
from fusionviz.config import ConfigError, RunConfig, SweepRequest, not_applicable_reason, sweep_sizes, validate
from fusionviz.session import Environment, ModeRun, Session, Sweep, _build
from fusionviz.worker import Worker, WorkerError

Progress = Callable[[str], None]


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


def _ask(worker: Worker, payload: dict[str, Any], progress: Progress | None, timeout_s: float) -> dict[str, Any]:
    """One job; a configuration the worker refused comes back as ConfigError, other failures as WorkerError."""
    try:
        return worker.request(payload, progress, timeout_s=timeout_s)
    except WorkerError as exc:
        if exc.kind == "config":
            raise ConfigError(str(exc)) from None
        raise


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
                answer = _ask(chosen, {"op": "mode", "config": dataclasses.asdict(config), "mode": mode}, progress,
                              config.timeout_s)
            except WorkerError as exc:
                runs.append(ModeRun(mode=mode, status="error", error=str(exc)))
                continue
            environment = environment or _build(Environment, answer["environment"])
            runs.append(_build(ModeRun, answer["run"]))
    session = Session(config=config, environment=environment or Environment(device_kind=config.device),
                      runs=runs, source="live")
    return finalise(session)


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
            answer = _ask(chosen, {"op": "sweep", "config": dataclasses.asdict(config),
                                   "sweep": dataclasses.asdict(part)}, progress, config.timeout_s)
        done = _build(Sweep, answer["sweep"])
        environment = environment or _build(Environment, answer["environment"])
        if sweep is None:
            sweep = done
        else:
            sweep.strategies += done.strategies
    return Session(config=config, environment=environment or Environment(), runs=[], sweep=sweep, source="live")
