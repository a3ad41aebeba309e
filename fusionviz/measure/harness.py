"""The measuring toolkit shared by every job in the worker: building a configuration's model and inputs,
a clean Dynamo state, device sync, the timing loop, warm-up, profiling, graph explanation, and listening
to Inductor while it compiles. Runs in the worker (imports torch)."""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import re
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import counters

from fusionviz.errors import ConfigError
from fusionviz.measure.environment import available_host_bytes
from fusionviz.measure.zoo import ModelSpec, get_spec
from fusionviz.records.config import RunConfig
from fusionviz.records.session import GraphBreak, Latency

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TARGET_REPEAT_S = {"cuda": 0.025, "cpu": 0.03}
MAX_LOG_LINES = 60


def check_fits(config: RunConfig, spec: ModelSpec) -> None:
    """Refuse a configuration whose tensors cannot fit in the device's free memory."""
    with torch.device("meta"):
        model = spec.build(config.dim, config.seq)
        inputs = spec.inputs(config.batch, config.dim, config.seq)
    elem = torch.empty((), dtype=TORCH_DTYPES[config.dtype]).element_size()
    params = sum(p.numel() for p in model.parameters())
    acts = spec.activation_elements(config.batch, config.dim, config.seq)
    elements = params + sum(t.numel() for t in inputs) + acts
    if config.pass_ == "train":
        elements += params + acts  # gradients, and activations saved for backward
    need = elements * elem * 1.2
    if config.is_cuda:
        free = torch.cuda.mem_get_info(torch.device(config.device))[0]
    else:
        free = available_host_bytes()
    if need > 0.9 * free:
        raise ConfigError(
            f"{config.model} at dim {config.dim}, batch {config.batch}"
            + (f", seq {config.seq}" if config.seq else "")
            + f" needs about {need / 2**30:.1f} GiB but {config.device} has {free / 2**30:.1f} GiB free: "
            "reduce the batch, dim or sequence length"
        )


class _CompileListener(logging.Handler):
    """Collects, while compiling, Inductor's generated code from the structured-trace logger (also on
    FX-cache hits) and Dynamo's and Inductor's warnings (autotune choices, rejected configs) as information."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.output_code: list[str] = []
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if metadata is not None:
            if "inductor_output_code" in metadata and getattr(record, "payload", None):
                self.output_code.append(record.payload)  # type: ignore[attr-defined]
        elif record.levelno >= logging.WARNING and len(self.lines) < MAX_LOG_LINES:
            self.lines.append(f"{record.name}: {record.getMessage()}"[:500])


@contextlib.contextmanager
def listening() -> Iterator[_CompileListener]:
    """Attach the listener for the duration of a compile; timing must run outside it, since structured
    logging records runtime events on every call while a handler listens."""
    listener = _CompileListener()
    trace_log = logging.getLogger("torch.__trace")
    old_level, old_propagate = trace_log.level, trace_log.propagate
    trace_log.setLevel(logging.DEBUG)
    trace_log.propagate = False
    loggers = [trace_log, logging.getLogger("torch._inductor"), logging.getLogger("torch._dynamo")]
    for logger in loggers:
        logger.addHandler(listener)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield listener
        listener.lines += [f"warning: {w.message}"[:500] for w in caught][: MAX_LOG_LINES - len(listener.lines)]
    finally:
        for logger in loggers:
            logger.removeHandler(listener)
        trace_log.setLevel(old_level)
        trace_log.propagate = old_propagate


_KERNEL_DEF = re.compile(
    r"^(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp|cuda)\((?:'\w+',\s*)?(?:\[[^\]]*\],\s*)?r?'''",
    re.MULTILINE,
)


def kernel_sources(output_code: list[str]) -> dict[str, str]:
    """Each Inductor kernel's source, cut from the generated modules (`name = async_compile.x('''...''')`)."""
    sources: dict[str, str] = {}
    for module in output_code:
        for match in _KERNEL_DEF.finditer(module):
            end = module.find("'''", match.end())
            if end > 0:
                sources[match.group(1)] = module[match.end():end].strip("\n")
    return sources


def reset_dynamo() -> None:
    """A clean slate: no compiled frames, counters or compile metrics from earlier configurations."""
    torch._dynamo.reset()
    counters.clear()
    torch._dynamo.utils.clear_compilation_metrics()


def sync(device: torch.device) -> None:
    """Wait for the device: timings and profiled iterations must cover the work, not just its launch."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def prepare(config: RunConfig) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], torch.device]:
    """Build the model and inputs on the device, seeded so every mode sees the same weights and data."""
    spec = get_spec(config.model)
    check_fits(config, spec)
    device = torch.device(config.device)
    torch.manual_seed(0)
    model = spec.build(config.dim, config.seq)
    inputs = spec.inputs(config.batch, config.dim, config.seq)
    dtype = TORCH_DTYPES[config.dtype]
    model = model.to(device=device, dtype=dtype)
    model.train(config.pass_ == "train")
    inputs = tuple(t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device) for t in inputs)
    return model, inputs, device


def sized(config: RunConfig, dimension: str, size: int) -> RunConfig:
    """The configuration with its batch (or sequence length) set to `size`."""
    return replace(config, batch=size) if dimension == "batch" else replace(config, seq=size)


def make_step(config: RunConfig, model: torch.nn.Module, target: Callable[..., Any],
              inputs: tuple[torch.Tensor, ...]) -> Callable[[], None]:
    """One iteration: a forward, or a forward and backward for the train pass. Callers set the grad
    mode once around their loops (`grad_mode`), as a timing script would, not on every call."""
    if config.pass_ == "train":
        def train_step() -> None:
            model.zero_grad(set_to_none=True)
            target(*inputs).float().sum().backward()
        return train_step
    return lambda: target(*inputs)


def grad_mode(config: RunConfig) -> contextlib.AbstractContextManager[None]:
    """no_grad for the inference pass; autograd on for the train pass."""
    return torch.set_grad_enabled(config.pass_ == "train")


def time_calls(step: Callable[[], None], device: torch.device, calls: int) -> float:
    """Mean ms per call over `calls` calls: CUDA events on a GPU, perf_counter around synced work on a CPU."""
    with _gc_paused():
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(device)
            start.record()
            for _ in range(calls):
                step()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / calls
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        return (time.perf_counter() - t0) * 1e3 / calls


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No garbage collection inside a timed loop (as `timeit` does): a worker that has compiled many
    graphs holds a large heap, and a collection pass in the loop would be timed as the model's cost."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def warm_until_steady(step: Callable[[], None], device: torch.device, minimum: int, limit: int = 100) -> int:
    """Call until at least `minimum` calls ran and three single calls agree within 25%; returns the count."""
    recent: list[float] = []
    for calls in range(1, limit + 1):
        recent = (recent + [time_calls(step, device, 1)])[-3:]
        if calls >= minimum and len(recent) == 3 and max(recent) <= 1.25 * min(recent):
            return calls
    return limit


def measure_latency(step: Callable[[], None], device: torch.device, repeats: int) -> Latency:
    per_call = statistics.median(time_calls(step, device, 1) for _ in range(3))
    calls = int(min(1000, max(5, TARGET_REPEAT_S[device.type] * 1e3 / max(per_call, 1e-3))))
    samples = sorted(time_calls(step, device, calls) for _ in range(repeats))
    return Latency(
        median_ms=statistics.median(samples), p10_ms=_quantile(samples, 0.1), p90_ms=_quantile(samples, 0.9),
        samples_ms=samples, calls_per_repeat=calls,
        timer="cuda_events" if device.type == "cuda" else "perf_counter",
    )


def _quantile(sorted_values: list[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def profile(step: Callable[[], None], device: torch.device, iterations: int) -> dict[str, Any]:
    """Profile `iterations` steady iterations (after one profiler warm-up step); returns the Chrome trace."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        with torch.profiler.profile(
            activities=activities, record_shapes=True,
            schedule=torch.profiler.schedule(wait=0, warmup=1, active=iterations, repeat=1),
            on_trace_ready=lambda prof: prof.export_chrome_trace(str(path)),
        ) as prof:
            for _ in range(iterations + 1):
                step()
                sync(device)
                prof.step()
        return json.loads(path.read_text())


def explain(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> tuple[int, list[GraphBreak]]:
    """Graph count and each break's reason with the user's source line (`torch._dynamo.explain`)."""
    reset_dynamo()
    result = torch._dynamo.explain(model)(*inputs)
    breaks = []
    for reason in result.break_reasons:
        frame = reason.user_stack[-1] if reason.user_stack else None
        where = f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}" if frame else ""
        breaks.append(GraphBreak(reason=str(reason.reason).split("\n")[0], user_frame=where))
    reset_dynamo()
    return result.graph_count, breaks
