"""The caller's side of a run: validate, send each mode to the worker, assemble the session.

No torch here: the app and the CLI call `run_session`, and only the worker process imports torch.
Each mode is its own job, so a crash or an out-of-memory error loses that mode only, and the worker is
restarted for the next.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from typing import Any

from fusionviz.analysis import finalise
from fusionviz.catalog import CATALOG
from fusionviz.config import ConfigError, RunConfig, SweepRequest, not_applicable_reason, sweep_sizes, validate
from fusionviz.session import Environment, ModeRun, Session, Sweep, _build
from fusionviz.worker import Worker, WorkerError

Progress = Callable[[str], None]


def run_session(config: RunConfig, progress: Progress | None = None, worker: Worker | None = None) -> Session:
    """Run every mode of `config` in a worker and return the session. Raises ConfigError before any work
    when the configuration cannot run; errors of single modes are kept in their ModeRun."""
    config = validate(config, known_models=set(CATALOG))
    say = progress or (lambda stage: None)
    own_worker = worker is None or config.cold_compile
    if config.cold_compile:
        # A fresh process and an empty Inductor cache directory: nothing compiled before can be reused.
        cache = tempfile.mkdtemp(prefix="fusionviz-cold-cache-")
        worker = Worker(cache_dir=cache)
    elif worker is None:
        worker = Worker()
    environment: Environment | None = None
    runs: list[ModeRun] = []
    try:
        for mode in config.modes:
            reason = not_applicable_reason(config, mode)
            if reason:
                runs.append(ModeRun(mode=mode, status="not_applicable", error=reason))
                continue
            try:
                answer = worker.request({"op": "mode", "config": dataclasses.asdict(config), "mode": mode}, say,
                                        timeout_s=config.timeout_s)
            except WorkerError as exc:
                if exc.kind == "config":
                    raise ConfigError(str(exc)) from None
                runs.append(ModeRun(mode=mode, status="error", error=str(exc)))
                continue
            environment = environment or _build(Environment, answer["environment"])
            runs.append(_build(ModeRun, answer["run"]))
    finally:
        if own_worker:
            worker.close()
    session = Session(config=config, environment=environment or Environment(device_kind=config.device),
                      runs=runs, source="live")
    return finalise(session)


def run_sweep_session(config: RunConfig, request: SweepRequest, progress: Progress | None = None,
                      worker: Worker | None = None) -> Session:
    """Run a shape sweep in a worker and return a session holding it (no per-mode runs).

    With `request.cold_caches`, each strategy runs in a fresh worker with an empty Inductor cache."""
    config = validate(config, known_models=set(CATALOG))
    sweep_sizes(config, request)  # refuse a bad schedule here, before the worker starts
    if not request.cold_caches:
        answer = _sweep_job(config, request, progress, worker)
        return Session(config=config, environment=_build(Environment, answer["environment"]), runs=[],
                       sweep=_build(Sweep, answer["sweep"]), source="live")
    sweep: Sweep | None = None
    environment: Environment | None = None
    for strategy in request.strategies:
        with Worker(cache_dir=tempfile.mkdtemp(prefix="fusionviz-cold-cache-")) as fresh:
            answer = _sweep_job(config, dataclasses.replace(request, strategies=[strategy]), progress, fresh)
        part = _build(Sweep, answer["sweep"])
        environment = environment or _build(Environment, answer["environment"])
        if sweep is None:
            sweep = part
        else:
            sweep.strategies += part.strategies
    return Session(config=config, environment=environment or Environment(), runs=[], sweep=sweep, source="live")


def _sweep_job(config: RunConfig, request: SweepRequest, progress: Progress | None,
               worker: Worker | None) -> dict[str, Any]:
    own_worker = worker is None
    worker = worker or Worker()
    try:
        return worker.request({"op": "sweep", "config": dataclasses.asdict(config),
                               "sweep": dataclasses.asdict(request)}, progress, timeout_s=config.timeout_s)
    except WorkerError as exc:
        if exc.kind == "config":
            raise ConfigError(str(exc)) from None
        raise
    finally:
        if own_worker:
            worker.close()
