"""Capture one mode of one configuration: compile it, explain its graphs, profile it, keep its code.

Runs inside the worker process (see `worker`), never in the app's: it imports torch, compiles, and may
crash; each mode is its own job, so a crash loses that mode only. Each call starts from a clean Dynamo
state, so nothing leaks between configurations. Latency is measured apart from this, with every mode in
interleaved rounds (`timing`).

Method (the reasons are in docs/methodology.md, Capture and Timing):
1. compiled modes: the first call is timed alone as compile time, with Inductor's cache hits and misses;
2. warm-up until steady (at least `warmup_calls`, then until three single calls agree within 25%);
3. profiling: `profile_iterations` steady iterations, each synchronised and marked by `prof.step()`,
   read back through the same trace reader as a user's trace;
4. provenance: compiled modes keep Inductor's records of what each kernel computes, from the compile itself;
   eager runs one more, untimed, iteration that marks each op with its module and source line (`provenance`).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import re
import time
from pathlib import Path
from typing import Any, Literal

import torch
from torch._dynamo.utils import counters

from fusionviz.measure.harness import (
    NotCapturable,
    explain,
    grad_mode,
    kernel_sources,
    listening,
    mode_step,
    model_for,
    prepare,
    profile,
    reset_dynamo,
    sync,
    variant_settings,
    warm_until_steady,
)
from fusionviz.measure.protocol import Progress
from fusionviz.measure.provenance import op_sources, tracking
from fusionviz.records.config import GRAPHED_EAGER, RunConfig
from fusionviz.records.session import (
    AotGraph,
    AotNode,
    CacheState,
    CompileInfo,
    CudaGraphs,
    ModeRun,
    RecordedGraph,
    TensorShape,
)
from fusionviz.records.trace import parse_trace
from fusionviz.records.variants import is_compiled, parse_variant, replays_graphs


def run_mode(config: RunConfig, mode: str, progress: Progress) -> ModeRun:
    """Measure one mode of `config` in this process. Errors propagate to the worker, which reports them."""
    reset_dynamo()
    model, inputs, device = prepare(config)
    run = ModeRun(mode=mode)
    with grad_mode(config):
        try:
            _capture(config, mode, run, model, inputs, device, progress)
        except NotCapturable as exc:
            return ModeRun(mode=mode, status="not_applicable", error=str(exc))
    return run


def _capture(config: RunConfig, mode: str, run: ModeRun, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...],
             device: torch.device, progress: Progress) -> None:
    compiled = is_compiled(mode)
    with listening() as listener, tracking(model), variant_settings(mode):  # a variant's settings, compiling
        if compiled:
            progress(f"{mode}: explaining graphs")
            run.graph_count, run.graph_breaks, run.graph_nodes = explain(model_for(mode, model), inputs)
        step = mode_step(config, mode, model, inputs, device)
        progress(f"{mode}: compiling" if compiled else f"{mode}: first call")
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
        cache: CacheState = ("warm" if hits and not misses else "cold" if misses and not hits
                             else "mixed" if hits else "unknown")
        run.compile = CompileInfo(first_call_s=first_call_s, cache=cache, fx_cache_hits=hits, fx_cache_misses=misses,
                                  cold_requested=config.cold_compile, steady_after_calls=steady_after,
                                  settings=parse_variant(mode).settings)
    progress(f"{mode}: profiling")
    trace = profile(step, device, config.profile_iterations)
    run.recompiles = _recompiles() if compiled else None
    parsed = parse_trace(trace)
    run.kernels = parsed.kernel_rows
    run.cpu_ops = parsed.cpu_op_rows
    run.summary = parsed.summary
    run.output_code = listener.output_code
    run.provenance = listener.provenance.graphs
    run.kernel_sources = kernel_sources(listener.output_code)
    for name, path in parsed.kernel_files.items():
        if name not in run.kernel_sources:
            with contextlib.suppress(OSError):
                run.kernel_sources[name] = Path(path).read_text()
    run.trace_gz_b64 = base64.b64encode(gzip.compress(json.dumps(trace).encode(), mtime=0)).decode()
    run.logs = listener.lines
    run.aot_graphs = [aot_graph(kind, frame, text) for kind, frame, text in listener.aot_graphs if kind != "inference"]
    if config.is_cuda and replays_graphs(mode):
        run.cuda_graphs = cuda_graphs(mode, device, inputs, listener.cudagraph_skips)
    if mode == "eager":  # eager_cuda_graph replays: no op runs to be marked
        progress("eager: finding each op's module and line")
        run.op_sources = op_sources(model, step, device)


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


_AOT_NODE = re.compile(r"^\s+(\w+): \S.*? = torch\.ops\.(\w+)\.(\w+)[.(]", re.MULTILINE)


def aot_graph(kind: str, frame: str, text: str) -> AotGraph:
    """An AOTAutograd graph as printed on the structured-trace logger, as its computing nodes (`name: "f32[...]" =
    torch.ops.aten.mul.Tensor(...)` → `mul`, `aten.mul`)."""
    graph_kind: Literal["forward", "backward", "inference"] = (
        "backward" if kind == "backward" else "inference" if kind == "inference" else "forward")
    return AotGraph(kind=graph_kind, frame=frame,
                    nodes=[AotNode(name, f"{space}.{op}") for name, space, op in _AOT_NODE.findall(text)])


def cuda_graphs(mode: str, device: torch.device, inputs: tuple[torch.Tensor, ...],
                skips: list[tuple[int, str]]) -> CudaGraphs:
    """What `mode`'s CUDA graphs captured, after its warm-up: Inductor's skip reasons with the graph each was
    logged for, the graphs its graph tree recorded, Inductor's counters, and the model's inputs. Eager as one
    CUDA graph records its whole step once, its inputs in place."""
    shapes = [TensorShape(shape=list(t.shape), itemsize=t.element_size()) for t in inputs]
    if mode == GRAPHED_EAGER:
        return CudaGraphs(recorded=[RecordedGraph(function=0, kind="whole step")], inputs=shapes)
    inductor = counters["inductor"]
    return CudaGraphs(skips=[reason for _, reason in skips], skipped_graphs=[graph for graph, _ in skips],
                      recorded=_recorded(device), skip_count=int(inductor.get("cudagraph_skips", 0)),
                      non_static_inputs=int(inductor.get("cudagraph_recorded_non_static_inputs", 0)),
                      inputs=shapes)


def _recorded(device: torch.device) -> list[RecordedGraph]:
    """The graphs the device's CUDA-graph tree recorded, each with its function (numbered in the order the tree
    wrapped them), the function's kind and the recording's output shapes. The tree is torch's internals: where
    it is not there or not as expected, none are listed."""
    try:
        from torch._inductor import cudagraph_trees

        index = device.index if device.index is not None else torch.cuda.current_device()
        manager: Any = cudagraph_trees.get_manager(index, create_if_none_exists=False)
        if manager is None:
            return []
        functions = list(manager.ids_to_funcs)
        pending = [node for roots in manager.roots.values() for node in roots]
        found = []
        while pending:
            node = pending.pop(0)
            function = node.wrapped_function.id
            kind = manager.id_to_mode.get(function)
            shapes = ["x".join(map(str, meta["size"])) for meta in node.outputs_metadata
                      if isinstance(meta, dict) and "size" in meta]
            found.append(RecordedGraph(function=functions.index(function) if function in functions else 0,
                                       kind=kind.name.lower() if kind is not None else "", output_shapes=shapes))
            pending += [child for children in node.children.values() for child in children]
        return found
    except (AttributeError, KeyError, TypeError, ValueError, ImportError):
        return []
