"""Time every mode of a configuration in one process, in interleaved rounds. Runs in a fresh worker.

Each mode is compiled (an Inductor cache hit after the capture compiled it: the compile runs with the capture's
provenance setting, part of the FX-graph cache's key, else each timing process compiled again), warmed up until
steady, and then all modes are timed round by round: eager, m1, m2, eager, m1, m2… so that drift and slow episodes of
the machine hit every mode alike, and a speedup can be taken within one round. On a GPU the worker runs on
one core from its start (the client pins it). A timing process is fresh, so it also measures the memory of one mode,
which it runs first (`memory`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from fusionviz.measure.harness import (
    grad_mode,
    interleaved_rounds,
    mode_step,
    pinned_core,
    prepare,
    reset_dynamo,
    sync,
    variant_settings,
    warm_until_steady,
)
from fusionviz.measure.memory import MemoryProbe
from fusionviz.measure.protocol import Progress
from fusionviz.measure.provenance import tracking
from fusionviz.records.config import RunConfig
from fusionviz.records.session import ModeMemory, TimingProcess
from fusionviz.records.variants import is_compiled


def time_modes(config: RunConfig, modes: list[str], index: int, progress: Progress,
               memory_mode: str = "") -> tuple[TimingProcess, ModeMemory | None]:
    """Compile and warm every mode, then time them all in `config.rounds` interleaved rounds. With `memory_mode`,
    that mode is compiled first and its memory measured before any other mode runs in this fresh process
    (`memory.MemoryProbe`); the measuring calls come before any timed one."""
    reset_dynamo()
    probe = MemoryProbe(torch.device(config.device)) if memory_mode in modes else None
    model, inputs, device = prepare(config, before_inputs=probe.before_inputs if probe else None)
    steps: dict[str, Callable[[], None]] = {}
    memory = None
    with grad_mode(config):
        for mode in sorted(modes, key=lambda m: m != memory_mode):
            progress(f"timing process {index + 1}: " + ("compiling " + mode if is_compiled(mode) else mode))
            if probe is not None and mode == memory_mode:
                steps[mode] = probe.first_calls(config, mode, model, inputs)
                progress(f"timing process {index + 1}: the memory of {mode}")
                memory = probe.finish(config, mode, steps[mode], model, inputs, index)
                continue
            steps[mode] = mode_step(config, mode, model, inputs, device)
            with variant_settings(mode):  # a variant's settings while it compiles, not while it is timed
                with tracking(model):  # the first call compiles
                    steps[mode]()
                    sync(device)
                warm_until_steady(steps[mode], device, config.warmup_calls)
        steps = {mode: steps[mode] for mode in modes}  # the rounds' order, whichever mode was measured first
        progress(f"timing process {index + 1}: {config.rounds} rounds of {', '.join(modes)}")
        calls, rounds, host_rounds = interleaved_rounds(steps, device, config.rounds)
    return TimingProcess(index=index, rounds=rounds, calls_per_round=calls, host_rounds=host_rounds,
                         pinned_cpu=pinned_core(device), threads=torch.get_num_threads()), memory
