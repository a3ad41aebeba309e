"""The measuring toolkit shared by every job in the worker: building a configuration's model and inputs,
a clean Dynamo state, device sync, the timing loop, warm-up, profiling, graph explanation, and listening
to Inductor while it compiles. Runs in the worker (imports torch)."""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import logging
import os
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch._dynamo
import torch._inductor.config
from torch._dynamo.utils import counters

from fusionviz.errors import ConfigError, FusionvizError
from fusionviz.measure.environment import available_host_bytes
from fusionviz.measure.provenance import Collector, graph_nodes, no_fusion
from fusionviz.measure.specs import spec_for
from fusionviz.measure.vec_isa import probe_only_the_pick
from fusionviz.measure.zoo import ModelSpec
from fusionviz.records.config import GRAPHED_EAGER, RunConfig
from fusionviz.records.session import GraphBreak, GraphNode
from fusionviz.records.variants import is_variant, parse_variant

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
TARGET_REPEAT_S = {"cuda": 0.025, "cpu": 0.03}
MAX_LOG_LINES = 60
# AOTAutograd's graphs on the structured-trace logger, by record: what a train pass recomputes is read off them
AOT_GRAPHS = {"aot_forward_graph": "forward", "aot_backward_graph": "backward", "aot_inference_graph": "inference"}


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
            + (f", seq {config.seq}" if config.seq else "") + (f", {config.layers} layers" if config.layers else "")
            + f" needs about {need / 2**30:.1f} GiB (its {params:,} parameters alone take "
            f"{params * elem / 2**30:.2f} GiB in {config.dtype}) but {config.device} has {free / 2**30:.1f} GiB "
            "free: reduce the batch, dim, sequence length" + (" or layers" if config.layers else "")
        )


class _CompileListener(logging.Handler):
    """Collects, while compiling, Inductor's generated code and provenance artifacts from the structured-trace
    logger (also on FX-cache hits), AOTAutograd's graphs, Inductor's reasons for skipping CUDA graphs (its
    `cudagraphs` log), the fusions its scheduler refused (its `fusion` log) and Dynamo's and Inductor's warnings
    (autotune choices, rejected configs) as information."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.output_code: list[str] = []
        self.provenance = Collector()
        self.lines: list[str] = []
        self.aot_graphs: list[tuple[str, str, str]] = []  # (kind, "frame/compile", AOTAutograd's graph as text)
        self.cudagraph_skips: list[tuple[int, str]] = []  # (the compiled graph being made, Inductor's reason)

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if metadata is not None:
            payload = getattr(record, "payload", None)
            kind = next((k for k in AOT_GRAPHS if k in metadata), None)
            if "inductor_output_code" in metadata and payload:
                self.output_code.append(payload)
                self.provenance.generated(len(self.output_code) - 1)
            elif isinstance(metadata.get("artifact"), dict):
                self.provenance.artifact(str(metadata["artifact"].get("name", "")), payload)
            elif kind is not None and isinstance(payload, str):
                frame = f"{metadata.get('frame_id', '')}/{metadata.get('frame_compile_id', '')}"
                self.aot_graphs.append((AOT_GRAPHS[kind], frame, payload))
            return
        if record.name.endswith(".__fusion"):
            self.provenance.refused(no_fusion(record))
            return
        if record.name.endswith("__cudagraphs") and "skipping cudagraph" in record.getMessage():
            self.cudagraph_skips.append((_skipped_graph(len(self.provenance.graphs) - 1), record.getMessage()[:500]))
        if record.levelno >= logging.WARNING and len(self.lines) < MAX_LOG_LINES:
            self.lines.append(f"{record.name}: {record.getMessage()}"[:500])


def _skipped_graph(latest: int) -> int:
    """The compiled graph a skip is logged for: the one being compiled (the latest), unless the graph tree skips
    at run time (a mutated input seen on a call), where no graph is being made: -1 then."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("cudagraph_trees.py"):
            return -1
        frame = frame.f_back  # type: ignore[assignment]
    return latest


@contextlib.contextmanager
def listening() -> Iterator[_CompileListener]:
    """Attach the listener for the duration of a compile; timing must run outside it, since structured
    logging records runtime events on every call while a handler listens."""
    listener = _CompileListener()
    trace_log = logging.getLogger("torch.__trace")
    old_level, old_propagate = trace_log.level, trace_log.propagate
    trace_log.setLevel(logging.DEBUG)
    trace_log.propagate = False
    # the scheduler's refused fusions (`provenance.no_fusion`): its `fusion` artifact log, off by default and not
    # propagated, is switched on for the compile alone; what it logs changes no decision
    fusion_log = logging.getLogger("torch._inductor.scheduler.__fusion")
    fusion_level = fusion_log.level
    fusion_log.setLevel(logging.DEBUG)
    loggers = [trace_log, logging.getLogger("torch._inductor"), logging.getLogger("torch._dynamo"), fusion_log]
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
        fusion_log.setLevel(fusion_level)


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


def warm_compiler(device: str) -> float:
    """Pay what the first compile in a fresh process pays before its model's own work, by compiling a function
    of two ops on `device`: Inductor's import (about 1.3 s on the development machine), on the CPU its probe of
    the vector instruction set it picks (`vec_isa`) and, the first time on a
    machine, the C++ kernels' precompiled header (about 6 s) or Triton's start. Returns the seconds it took."""
    started = time.perf_counter()
    if torch.device(device).type == "cpu":
        probe_only_the_pick()
    torch.compile(lambda x: torch.relu(x) + 1)(torch.ones(8, device=device))
    sync(torch.device(device))
    reset_dynamo()
    return time.perf_counter() - started


def prepare_compiler() -> float:
    """Pay the part of `warm_compiler` that is Python alone: Inductor's compile path imported, and a first trace
    through Dynamo and AOTAutograd (`aot_eager`: no kernel, so no C++ compiler, no header to wait for). In a
    fresh process on the development machine that is 0.6 s of a 1.1 s first compile that hits the cache.
    Returns the seconds it took."""
    started = time.perf_counter()
    import torch._inductor.compile_fx

    torch.compile(lambda x: torch.relu(x) + 1, backend="aot_eager")(torch.ones(8))
    reset_dynamo()
    return time.perf_counter() - started


def reset_dynamo() -> None:
    """A clean slate: no compiled frames, counters or compile metrics from earlier configurations."""
    torch._dynamo.reset()
    counters.clear()
    torch._dynamo.utils.clear_compilation_metrics()


def sync(device: torch.device) -> None:
    """Wait for the device: timings and profiled iterations must cover the work, not just its launch."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def use_threads(threads: int | None) -> None:
    """Set torch's CPU thread count, and Inductor's for the C++ kernels it generates (it bakes the count
    into their OpenMP pragmas, and the setting is part of its cache key, so a kernel cached with another
    count is not reused)."""
    if threads:
        torch.set_num_threads(threads)
        torch._inductor.config.cpp.threads = threads


def prepare(config: RunConfig, before_inputs: Callable[[], None] | None = None
            ) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...], torch.device]:
    """Build the model and inputs on the device, seeded so every mode sees the same weights and data, with
    the configuration's thread count in force. `before_inputs` is called once the model is on the device and
    before any input is made: a mode's memory is counted from there (`memory.MemoryProbe`)."""
    use_threads(config.threads)
    spec = spec_for(config)
    device = torch.device(config.device)
    if device.type == "cpu":
        probe_only_the_pick()
    if device.type == "cuda":
        # CUDA events, streams and graphs take the current device: left at cuda:0, a run on cuda:1 timed
        # cuda:0's stream instead of the work, i.e. only how fast the host enqueued it.
        torch.cuda.set_device(device)
    check_fits(config, spec)
    torch.manual_seed(0)
    model = spec.build(config.dim, config.seq)
    dtype = TORCH_DTYPES[config.dtype]
    model = model.to(device=device, dtype=dtype)
    model.train(config.pass_ == "train")
    if before_inputs is not None:
        before_inputs()
    inputs = spec.inputs(config.batch, config.dim, config.seq)  # after the build: the same draws of the seed
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
            first_tensor(target(*inputs)).float().sum().backward()
        return train_step
    return lambda: target(*inputs)


def first_tensor(output: Any) -> torch.Tensor:
    """What a train step's loss is summed from: the output itself, or the first tensor of a tuple, a list or a
    library's output record (transformers' ModelOutput is a dict of its fields, the last hidden states first)."""
    if isinstance(output, torch.Tensor):
        return output
    values = output.values() if isinstance(output, dict) else output
    return next(v for v in values if isinstance(v, torch.Tensor))


def mode_step(config: RunConfig, mode: str, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...],
              device: torch.device) -> Callable[[], None]:
    """One iteration of `mode`: eager, compiled by `torch.compile`, or eager captured as one CUDA graph and
    replayed (GRAPHED_EAGER; raises NotCapturable where the capture fails)."""
    if mode == GRAPHED_EAGER:
        return cuda_graphed(make_step(config, model, model, inputs), device)
    if mode == "eager":
        return make_step(config, model, model, inputs)
    variant = parse_variant(mode)
    if variant.mark_dynamic is not None:
        inputs = (marked_dynamic(inputs[0], variant.mark_dynamic), *inputs[1:])
    kwargs: dict[str, Any] = {"dynamic": config.dynamic, **variant.compile_kwargs}
    compiled = model_for(mode, model)
    if variant.inductor_options:  # torch.compile takes a mode or options, not both: the mode's own options first
        options: dict[str, Any] = {**torch._inductor.list_mode_options(variant.base), **variant.inductor_options}
        target = torch.compile(compiled, options=options, **kwargs)
    else:
        target = torch.compile(compiled, mode=variant.base, **kwargs)
    return make_step(config, model, target, inputs)


def model_for(mode: str, model: torch.nn.Module) -> torch.nn.Module:
    """What `mode` compiles: the model, or for a variant that leaves a submodule to eager (`disable=PATH`) a copy
    of it that does (explained and compiled alike)."""
    disabled = parse_variant(mode).disabled if is_variant(mode) else None
    return model if disabled is None else with_eager_submodule(model, disabled)


def with_eager_submodule(model: torch.nn.Module, path: str) -> torch.nn.Module:
    """A shallow copy of `model` whose submodule `path` runs its forward under `torch.compiler.disable`: the copies
    (the submodule and each module above it) share every parameter and buffer with `model`, so the other modes of
    the process compile the model as it is."""
    names = [name for name, _ in model.named_modules() if name]
    if path not in names:
        shown = ", ".join(names[:8]) + (f" … ({len(names)} in all)" if len(names) > 8 else "")
        raise ConfigError(f"disable={path}: the model has no submodule of that name: choose from {shown}")
    *above, last = path.split(".")
    top = parent = copy.copy(model)
    for name in above:
        parent._modules = dict(parent._modules)  # this copy's own children: the original's stay as they are
        child = copy.copy(parent.get_submodule(name))
        parent._modules[name] = child
        parent = child
    parent._modules = dict(parent._modules)
    leaf = copy.copy(parent.get_submodule(last))
    leaf.forward = torch.compiler.disable(type(leaf).forward.__get__(leaf))  # type: ignore[method-assign]
    parent._modules[last] = leaf
    return top


def marked_dynamic(tensor: torch.Tensor, dim: int) -> torch.Tensor:
    """A new tensor object over `tensor`'s storage (no copy) with dimension `dim` marked dynamic: the mark stays
    with this object, so the other modes of the process keep their static shapes."""
    if not 0 <= dim < tensor.dim():
        raise ConfigError(f"mark_dynamic={dim}: the first input has {tensor.dim()} dimensions "
                          f"({'x'.join(map(str, tensor.shape))}): choose from 0 to {tensor.dim() - 1}")
    alias = tensor.detach().requires_grad_(tensor.requires_grad) if tensor.is_leaf else tensor.view_as(tensor)
    torch._dynamo.mark_dynamic(alias, dim)
    return alias


@contextlib.contextmanager
def variant_settings(mode: str) -> Iterator[None]:
    """The Dynamo and Inductor settings of `mode`'s variant, patched in while the mode compiles: callers enter it
    around the first call and the warm-up (recompiles happen there), never around a timed call. Nothing for a plain
    mode. The Inductor settings also go to `torch.compile(options=…)`, but that patches them only once Dynamo has
    traced, and Dynamo reads some of them itself: under `freezing` it keeps the parameters as attributes, which
    Inductor can then fold; with `options=` alone they were graph inputs and nothing froze."""
    variant = parse_variant(mode) if is_variant(mode) else None
    with contextlib.ExitStack() as stack:
        if variant is not None and variant.dynamo_options:
            stack.enter_context(torch._dynamo.config.patch(dict[str, Any](variant.dynamo_options)))
        if variant is not None and variant.inductor_options:
            stack.enter_context(torch._inductor.config.patch(dict[str, Any](variant.inductor_options)))
        yield


class NotCapturable(FusionvizError):
    """Eager's step cannot be captured as a CUDA graph (it syncs with the host or allocates there)."""


def cuda_graphed(step: Callable[[], None], device: torch.device, warmup: int = 3) -> Callable[[], None]:
    """`step` captured as one CUDA graph, after a warm-up on a side stream (as torch's docs capture a whole
    network: the caching allocator and cuBLAS set up outside the capture); its inputs stay where they are, so a
    replay recomputes the same call. Returns the replay."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.stream(side):
            for _ in range(warmup):
                step()
        torch.cuda.current_stream(device).wait_stream(side)
        with torch.cuda.graph(graph):
            step()
    except RuntimeError as exc:
        first = (str(exc).strip().splitlines() or ["no message"])[0]
        raise NotCapturable(f"eager's step could not be captured as one CUDA graph ({first}): a model that syncs "
                            "with the host (.item(), printing a tensor) or allocates there cannot be "
                            "captured") from None
    return graph.replay


def grad_mode(config: RunConfig) -> contextlib.AbstractContextManager[None]:
    """no_grad for the inference pass; autograd on for the train pass."""
    return torch.set_grad_enabled(config.pass_ == "train")


def time_calls(step: Callable[[], None], device: torch.device, calls: int) -> float:
    """Mean ms per call over `calls` calls: CUDA events on a GPU, perf_counter around synced work on a CPU."""
    return timed_block(step, device, calls)[0]


def timed_block(step: Callable[[], None], device: torch.device, calls: int) -> tuple[float, float]:
    """Mean ms per call over `calls` calls (as `time_calls`), and the host's own ms per call: perf_counter
    around the loop that enqueues them, before waiting for the device. A host faster than the GPU finishes its
    loop early (until the launch queue fills); a host-bound mode's host time is its latency."""
    with _gc_paused():
        if device.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(device)
            t0 = time.perf_counter()
            start.record()
            for _ in range(calls):
                step()
            end.record()
            host_ms = (time.perf_counter() - t0) * 1e3 / calls
            end.synchronize()
            return start.elapsed_time(end) / calls, host_ms
        t0 = time.perf_counter()
        for _ in range(calls):
            step()
        elapsed = (time.perf_counter() - t0) * 1e3 / calls
        return elapsed, elapsed


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


def calls_per_block(step: Callable[[], None], device: torch.device) -> int:
    """How many calls make one timed block of about TARGET_REPEAT_S: long enough to dwarf the clock's
    resolution and the event overhead, short enough for many rounds."""
    per_call = statistics.median(time_calls(step, device, 1) for _ in range(3))
    return int(min(1000, max(5, TARGET_REPEAT_S[device.type] * 1e3 / max(per_call, 1e-3))))


def interleaved_rounds(steps: dict[str, Callable[[], None]], device: torch.device,
                       rounds: int) -> tuple[dict[str, int], list[dict[str, float]], list[dict[str, float]]]:
    """Time every step in `rounds` rounds, one block each per round, so that a slow episode of the machine
    hits every mode alike and a ratio within one round stays put. The order rotates from round to round,
    so no mode always runs first. One more round runs first and is dropped: on the GPU machine the first
    block after warm-up ran up to 3x slow. Each block follows a tenth as many untimed calls of its mode: the
    first calls after a switch of mode ran slower (the host's caches hold the other mode's path), which put
    eager 5–10% above a script that times one mode at a time. Returns the calls per block, each round's ms per
    call by mode, and each round's host ms per call by mode (`timed_block`)."""
    calls = {mode: calls_per_block(step, device) for mode, step in steps.items()}
    modes = list(steps)
    timed = []
    for r in range(rounds + 1):
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        result = {}
        for mode in order:
            for _ in range(max(2, calls[mode] // 10)):
                steps[mode]()
            result[mode] = timed_block(steps[mode], device, calls[mode])
        timed.append(result)
    return (calls, [{mode: result[mode][0] for mode in modes} for result in timed[1:]],
            [{mode: result[mode][1] for mode in modes} for result in timed[1:]])


def pinned_core(device: torch.device) -> int | None:
    """The one core a GPU timing worker runs on, recorded with its rounds: the client starts each one pinned
    from its start (`Worker(cpus=…)`, see `client.timing_cores` for why). None on the CPU, where the
    compiled kernels use several threads and nothing is pinned."""
    allowed = os.sched_getaffinity(0)
    return next(iter(allowed)) if device.type == "cuda" and len(allowed) == 1 else None


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


def explain(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]
            ) -> tuple[int, list[GraphBreak], list[GraphNode]]:
    """Graph count, each break's reason with the user's source line, and the captured graphs' nodes with their
    modules and lines (`torch._dynamo.explain`; Dynamo names the nodes as the compile's provenance does)."""
    reset_dynamo()
    result = torch._dynamo.explain(model)(*inputs)
    breaks = []
    for reason in result.break_reasons:
        frame = reason.user_stack[-1] if reason.user_stack else None
        where = f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}" if frame else ""
        breaks.append(GraphBreak(reason=str(reason.reason).split("\n")[0], user_frame=where))
    nodes = graph_nodes(result.graphs)
    reset_dynamo()
    return result.graph_count, breaks, nodes
