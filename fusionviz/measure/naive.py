"""The naive measurement, kept to show what it gets wrong (the methodology page).

The widely copied snippet: a wall-clock loop with no eager warm-up (so eager pays its one-off start-up
costs inside the timed loop) and `len(prof.key_averages())` read as a kernel count (it counts distinct
op names, CPU ops included). The compiled function gets one untimed call, as the snippet does, so its
compile is left out. Runs in the worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from fusionviz.measure.harness import grad_mode, make_step, prepare, reset_dynamo, sync
from fusionviz.measure.protocol import Progress
from fusionviz.records.config import RunConfig
from fusionviz.records.session import NaiveResult


def _wall_ms(step: Callable[[], None], device: torch.device, calls: int) -> float:
    t0 = time.time()
    for _ in range(calls):
        step()
    sync(device)
    return (time.time() - t0) * 1e3 / calls


def _key_average_rows(step: Callable[[], None], device: torch.device) -> int:
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        step()
        sync(device)
    return len(prof.key_averages())


def measure(config: RunConfig, mode: str, calls: int, progress: Progress) -> NaiveResult:
    with grad_mode(config):
        return _naive_loops(config, mode, calls, progress)


def _naive_loops(config: RunConfig, mode: str, calls: int, progress: Progress) -> NaiveResult:
    reset_dynamo()
    model, inputs, device = prepare(config)
    eager = make_step(config, model, model, inputs)
    progress("naive: eager loop, no warm-up")
    eager_ms = _wall_ms(eager, device, calls)
    compiled = make_step(config, model, torch.compile(model, mode=mode, dynamic=config.dynamic), inputs)
    progress(f"naive: compiling {mode}")
    compiled()
    sync(device)
    progress(f"naive: {mode} loop")
    mode_ms = _wall_ms(compiled, device, calls)
    progress("naive: counting key_averages() rows")
    return NaiveResult(mode=mode, calls=calls, naive_eager_ms=eager_ms, naive_mode_ms=mode_ms,
                       naive_speedup=eager_ms / mode_ms, key_averages_rows_eager=_key_average_rows(eager, device),
                       key_averages_rows_mode=_key_average_rows(compiled, device))
