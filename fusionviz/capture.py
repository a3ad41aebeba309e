"""Measure one mode of one configuration: time it, profile it, explain its graphs, keep its code.

Runs inside the worker process (see `worker`), never in the app's: it imports torch, compiles, and may
crash. Each call starts from a clean Dynamo state, so nothing leaks between configurations.

Method (the reasons are in the README's "Measuring right"):
1. compiled modes: the first call is timed alone as compile time, with Inductor's cache hits and misses;
2. warm-up until steady (at least `warmup_calls`, then until three single calls agree within 25%);
3. timing: `repeats` repeats of N calls (N chosen so a repeat lasts ~25 ms), CUDA events on a GPU,
   perf_counter around synchronised work on the CPU; median, p10, p90 of the per-call means;
4. profiling, in a separate pass: `profile_iterations` steady iterations, each synchronised and
   marked by `prof.step()`, read back through the same trace reader as a user's trace.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import gzip
import json
import logging
import os
import platform
import re
import socket
import statistics
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import counters

from fusionviz import __version__
from fusionviz.config import ConfigError, RunConfig
from fusionviz.session import CompileInfo, Environment, GraphBreak, Latency, ModeRun
from fusionviz.trace import parse_trace
from fusionviz.zoo import ModelSpec, get_spec

Progress = Callable[[str], None]
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TARGET_REPEAT_S = {"cuda": 0.025, "cpu": 0.03}
MAX_LOG_LINES = 60


def environment(device: str) -> Environment:
    """What this capture ran on, recorded inside every session."""
    dev = torch.device(device)
    triton_version = None
    with contextlib.suppress(ImportError):
        import triton

        triton_version = triton.__version__
    env = Environment(
        device_kind=dev.type,
        torch_version=torch.__version__,
        triton_version=triton_version,
        cpu=_cpu_name(),
        cpu_count=os.cpu_count() or 0,
        python_version=platform.python_version(),
        hostname=socket.gethostname(),
        captured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        fusionviz_version=__version__,
    )
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        env.device_name = props.name
        env.cuda_version = torch.version.cuda
        env.driver_version = _driver_version()
        env.device_memory_gib = round(props.total_memory / 2**30, 1)
    else:
        env.device_name = f"CPU: {env.cpu} ({env.cpu_count} cores)"
        env.device_memory_gib = round(_available_host_bytes() / 2**30, 1)
    return env


def _cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _driver_version() -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True)
        return out.stdout.strip().splitlines()[0]
    return None


def _available_host_bytes() -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def check_fits(config: RunConfig, spec: ModelSpec) -> None:
    """Refuse a configuration whose tensors cannot fit in the device's free memory."""
    with torch.device("meta"):
        model = spec.build(config.dim, config.seq)
        inputs = spec.inputs(config.batch, config.dim, config.seq)
    elem = torch.empty((), dtype=DTYPES[config.dtype]).element_size()
    params = sum(p.numel() for p in model.parameters())
    acts = spec.activation_elements(config.batch, config.dim, config.seq)
    elements = params + sum(t.numel() for t in inputs) + acts
    if config.pass_ == "train":
        elements += params + acts  # gradients, and activations saved for backward
    need = elements * elem * 1.2
    if config.is_cuda:
        free = torch.cuda.mem_get_info(torch.device(config.device))[0]
    else:
        free = _available_host_bytes()
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
    dtype = DTYPES[config.dtype]
    model = model.to(device=device, dtype=dtype)
    model.train(config.pass_ == "train")
    inputs = tuple(t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device) for t in inputs)
    return model, inputs, device


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


def run_mode(config: RunConfig, mode: str, progress: Progress) -> ModeRun:
    """Measure one mode of `config` in this process. Errors propagate to the worker, which reports them."""
    reset_dynamo()
    model, inputs, device = prepare(config)
    run = ModeRun(mode=mode)
    with grad_mode(config):
        _measure(config, mode, run, model, inputs, device, progress)
    return run


def _measure(config: RunConfig, mode: str, run: ModeRun, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...],
             device: torch.device, progress: Progress) -> None:
    compiled = mode != "eager"
    with listening() as listener:
        if compiled:
            progress(f"{mode}: explaining graphs")
            run.graph_count, run.graph_breaks = explain(model, inputs)
            target: Callable[..., Any] = torch.compile(model, mode=mode, dynamic=config.dynamic)
        else:
            target = model
        step = make_step(config, model, target, inputs)
        progress(f"{mode}: compiling" if compiled else "eager: first call")
        sync(device)
        t0 = time.perf_counter()
        step()
        sync(device)
        first_call_s = time.perf_counter() - t0
        progress(f"{mode}: warming up")
        steady_after = warm_until_steady(step, device, config.warmup_calls)
    if compiled:
        hits = int(counters["inductor"].get("fxgraph_cache_hit", 0))
        misses = int(counters["inductor"].get("fxgraph_cache_miss", 0))
        cache = "warm" if hits and not misses else "cold" if misses and not hits else ("mixed" if hits else "unknown")
        run.compile = CompileInfo(first_call_s=first_call_s, cache=cache, fx_cache_hits=hits, fx_cache_misses=misses,
                                  cold_requested=config.cold_compile, steady_after_calls=steady_after)
    progress(f"{mode}: timing")
    run.latency = measure_latency(step, device, config.repeats)
    progress(f"{mode}: profiling")
    trace = profile(step, device, config.profile_iterations)
    run.recompiles = _recompiles() if compiled else None
    parsed = parse_trace(trace)
    run.kernels = parsed.kernels.to_dict("records")
    run.cpu_ops = parsed.cpu_ops.to_dict("records")
    run.summary = parsed.summary
    # The profiler slows the CPU side, so a profiled iteration's span overstates the idle time; the busy
    # fraction of a capture is the kernel time per iteration over the unprofiled latency.
    run.summary.busy_fraction = min(1.0, parsed.summary.kernel_time_us / (run.latency.median_ms * 1e3))
    run.output_code = listener.output_code
    run.kernel_sources = kernel_sources(listener.output_code)
    for name, path in parsed.kernel_files.items():
        if name not in run.kernel_sources:
            with contextlib.suppress(OSError):
                run.kernel_sources[name] = Path(path).read_text()
    run.trace_gz_b64 = base64.b64encode(gzip.compress(json.dumps(trace).encode(), mtime=0)).decode()
    run.logs = listener.lines


def _recompiles() -> int:
    """Compiles of a frame after its first (compile ids `frame/n` with n > 0)."""
    total = 0
    for metric in torch._dynamo.utils.get_compilation_metrics():
        if getattr(metric, "is_runtime", False):
            continue
        compile_id = str(getattr(metric, "compile_id", "") or "")
        parts = compile_id.split("/")
        if len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) > 0:
            total += 1
    return total
