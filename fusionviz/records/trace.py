"""Read a torch.profiler Chrome trace (`export_chrome_trace`) into the kernel and CPU-op tables.

The same reader serves fusionviz's own captures and a user's plain trace, so both draw the same way.
It imports no torch: opening a trace costs JSON parsing only.

What counts as a kernel:
- on a GPU, every device event (`kernel`, `gpu_memcpy`, `gpu_memset`), assigned to the iteration
  (`ProfilerStep#N`) in which its launching CPU call ran, CUDA-graph replays included;
- on the CPU, where there are no device events, the top-level compute calls: each ATen op reached from
  the iteration without passing through another ATen op (view and allocation ops skipped), and each
  Inductor C++ kernel (`cpp_fused_*`, visible when kernel profiling was on when it compiled). External
  GEMM calls inside compiled code are ATen ops (`aten::addmm`), so they count too.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from fusionviz.errors import TraceError
from fusionviz.records.kernels import (
    CPU_VIEW_OPS,
    classify,
    cpu_op_frame,
    cpu_op_row,
    fused_ops_from_name,
    kernel_frame,
    kernel_row,
    normalise_name,
)
from fusionviz.records.session import TraceSummary

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
HOST_CATEGORIES = frozenset({"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver"})
LAUNCH_CALLS = re.compile(r"^(cuda|cu)(LaunchKernel|LaunchKernelEx|LaunchKernelExC|GraphLaunch|LaunchCooperativeKernel"
                          r"|MemcpyAsync|MemsetAsync|MemcpyD2DAsync|Memcpy|Memset|MemcpyHtoDAsync|MemcpyDtoHAsync)")
STEP = re.compile(r"^ProfilerStep#(\d+)$")
REGION_PREFIXES = ("Torch-Compiled Region", "## Call CompiledFxGraph")


@dataclass
class ParsedTrace:
    """A trace read into tables. `kernel_files` maps Inductor kernel names to their generated files."""

    device_kind: str  # "cuda" or "cpu"
    kernels: pd.DataFrame
    cpu_ops: pd.DataFrame
    summary: TraceSummary
    kernel_files: dict[str, str] = field(default_factory=dict)


@dataclass
class _Event:
    name: str
    cat: str
    ts: float
    dur: float
    tid: Any
    args: dict[str, Any]
    children: list[_Event] = field(default_factory=list)

    @property
    def end(self) -> float:
        return self.ts + self.dur


def parse_trace(data: Any) -> ParsedTrace:
    """Parse a loaded Chrome trace. Raises TraceError when `data` is not a profiler trace."""
    events = _complete_events(data)
    steps = sorted((e for e in events if STEP.match(e.name) and e.cat in ("user_annotation", "cpu_op")),
                   key=lambda e: e.ts)
    host = [e for e in events if e.cat in HOST_CATEGORIES and not STEP.match(e.name)]
    device = [e for e in events if e.cat in DEVICE_CATEGORIES]
    if not steps:
        everything = host + device
        start = min(e.ts for e in everything)
        steps = [_Event("ProfilerStep#0", "user_annotation", start, max(e.end for e in everything) - start, None, {})]
    step_starts = [s.ts for s in steps]

    def iteration_of(ts: float) -> int | None:
        i = bisect.bisect_right(step_starts, ts) - 1
        return i if i >= 0 and ts <= steps[i].end else None

    compute, regions, graph_of = _walk_compute(host, steps)
    cpu_rows = [
        _cpu_row(it, e, "op", steps) for it, e in compute
    ] + [_cpu_row(it, e, "region", steps) for it, e in regions]
    launches = [e for e in host if e.cat in ("cuda_runtime", "cuda_driver") and LAUNCH_CALLS.match(e.name)]
    cpu_rows += [_cpu_row(it, e, "launch", steps) for e in launches if (it := iteration_of(e.ts)) is not None]

    kernel_files: dict[str, str] = {}
    for e in host:
        if e.args.get("kernel_file") and e.name.startswith("triton_"):
            kernel_files[e.name] = str(e.args["kernel_file"])

    if device:
        kernel_rows = _device_kernels(device, host, steps, iteration_of, graph_of)
        device_kind = "cuda"
    else:
        kernel_rows = [_cpu_kernel(it, e, steps, graph_of.get(id(e), "")) for it, e in compute]
        device_kind = "cpu"

    kernels = kernel_frame(kernel_rows, "trace kernel table")
    kernels = kernels.sort_values(["iteration", "start_us"], kind="stable").reset_index(drop=True)
    cpu_ops = cpu_op_frame(cpu_rows, "trace CPU op table")
    cpu_ops = cpu_ops.sort_values(["iteration", "start_us"], kind="stable").reset_index(drop=True)
    summary = summarise(kernels, [s.dur for s in steps], launches_counted=device_kind == "cuda",
                        launches=cpu_ops[cpu_ops.category == "launch"])
    return ParsedTrace(device_kind, kernels, cpu_ops, summary, kernel_files)


def _complete_events(data: Any) -> list[_Event]:
    if isinstance(data, dict):
        raw = data.get("traceEvents")
    elif isinstance(data, list):
        raw = data
    else:
        raw = None
    if not isinstance(raw, list):
        raise TraceError("this is not a Chrome trace: there is no \"traceEvents\" list at the top")
    events = [
        _Event(str(e.get("name", "")), str(e.get("cat", "")), float(e["ts"]), float(e.get("dur", 0.0)),
               (e.get("pid"), e.get("tid")), e.get("args") or {})
        for e in raw
        if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e
    ]
    if not any(e.cat in HOST_CATEGORIES or e.cat in DEVICE_CATEGORIES for e in events):
        raise TraceError("this Chrome trace holds no torch.profiler events (no cpu_op, kernel or runtime events)")
    return events


def _forest(events: list[_Event]) -> list[_Event]:
    """Nest events of one thread by time containment; returns the roots."""
    roots: list[_Event] = []
    stack: list[_Event] = []
    for e in sorted(events, key=lambda e: (e.ts, -e.dur)):
        e.children = []
        while stack and e.ts >= stack[-1].end:
            stack.pop()
        (stack[-1].children if stack else roots).append(e)
        stack.append(e)
    return roots


def _walk_compute(host: list[_Event], steps: list[_Event]) -> tuple[
        list[tuple[int, _Event]], list[tuple[int, _Event]], dict[int, str]]:
    """Top-level compute ops and compiled regions per iteration, and the compiled graph each op ran in."""
    by_thread: dict[Any, list[_Event]] = {}
    for e in host:
        if e.cat in ("cpu_op", "user_annotation", "python_function"):
            by_thread.setdefault(e.tid, []).append(e)
    step_starts = [s.ts for s in steps]
    compute: list[tuple[int, _Event]] = []
    regions: list[tuple[int, _Event]] = []
    graph_of: dict[int, str] = {}

    def visit(e: _Event, iteration: int, graph: str) -> None:
        if e.name.startswith(REGION_PREFIXES):
            regions.append((iteration, e))
            if e.name.startswith("## Call CompiledFxGraph"):
                graph = e.name.removeprefix("## Call CompiledFxGraph").strip(" #")
        if _is_compute(e):
            compute.append((iteration, e))
            graph_of[id(e)] = graph
            return
        for child in e.children:  # wrappers, regions, and view ops (`aten::to` may call a copy)
            visit(child, iteration, graph)

    for thread_events in by_thread.values():
        for root in _forest(thread_events):
            i = bisect.bisect_right(step_starts, root.ts) - 1
            if i < 0 or root.ts > steps[i].end:
                continue
            visit(root, i, "")
    return compute, regions, graph_of


def _is_compute(e: _Event) -> bool:
    name = normalise_name(e.name)
    if name.startswith(("cpp_fused", "triton_")):
        return True
    return e.cat == "cpu_op" and name.startswith("aten::") and name not in CPU_VIEW_OPS


def _cpu_row(iteration: int, e: _Event, category: str, steps: list[_Event]) -> dict[str, Any]:
    return cpu_op_row(iteration=iteration, name=normalise_name(e.name), category=category,
                      start_us=e.ts - steps[iteration].ts, dur_us=e.dur)


def _shapes(args: dict[str, Any]) -> str:
    dims = args.get("Input Dims")
    return str([d for d in dims if d != []]) if dims else ""


def _cpu_kernel(iteration: int, e: _Event, steps: list[_Event], graph: str) -> dict[str, Any]:
    name = normalise_name(e.name)
    fused = list(fused_ops_from_name(name)) if name.startswith("cpp_fused") else [name.removeprefix("aten::")]
    return kernel_row(
        iteration=iteration, name=name, kernel_class=classify(name, name, e.cat),
        start_us=e.ts - steps[iteration].ts, dur_us=e.dur, stream=-1, grid="", block="", launch_op=name,
        op_id=_op_id(e.args), input_shapes=_shapes(e.args), fused_ops=fused, source_file="", graph=graph)


def _device_kernels(device: list[_Event], host: list[_Event], steps: list[_Event], iteration_of: Any,
                    graph_of: dict[int, str]) -> list[dict[str, Any]]:
    launch_by_corr = {e.args["correlation"]: e for e in host
                      if e.cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.args}
    op_by_ext: dict[Any, _Event] = {}
    for e in host:
        ext = e.args.get("External id")
        if ext is not None and e.cat in ("cpu_op", "user_annotation") and not STEP.match(e.name):
            op_by_ext.setdefault(ext, e)
    rows = []
    for k in device:
        launch = launch_by_corr.get(k.args.get("correlation"))
        op = op_by_ext.get(k.args.get("External id"))
        anchor = launch.ts if launch else (op.ts if op else k.ts)
        iteration = iteration_of(anchor)
        if iteration is None:
            continue
        launch_op = op.name if op else (launch.name if launch else "")
        name = k.name
        if name.startswith("triton_"):
            fused: list[str] = list(fused_ops_from_name(name))
        elif op is not None and op.name.startswith("aten::"):
            fused = [op.name.removeprefix("aten::")]
        else:
            fused = []
        rows.append(kernel_row(
            iteration=iteration, name=name, kernel_class=classify(name, launch_op, k.cat),
            start_us=k.ts - steps[iteration].ts, dur_us=k.dur, stream=int(k.args.get("stream", -1) or -1),
            grid=_dims(k.args.get("grid")), block=_dims(k.args.get("block")), launch_op=launch_op,
            op_id=_op_id(op.args) if op else -1, input_shapes=_shapes(op.args) if op else "", fused_ops=fused,
            source_file=str(op.args.get("kernel_file", "")) if op else "",
            graph=graph_of.get(id(op), "") if op else ""))
    return rows


def _op_id(args: dict[str, Any]) -> int:
    ext = args.get("External id")
    return int(ext) if isinstance(ext, int) else -1


def _dims(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list) else ""


def _union_us(intervals: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Covered time, first start and last end of a set of (start, end) intervals."""
    covered, cur_start, cur_end = 0.0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None and cur_start is not None:
                covered += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None and cur_start is not None:
        covered += cur_end - cur_start
    return covered, min((s for s, _ in intervals), default=0.0), max((e for _, e in intervals), default=0.0)


def idle_gaps(kernels: pd.DataFrame, iteration: int) -> list[tuple[float, float]]:
    """(start_us, dur_us) of each stretch of one iteration in which no kernel runs, from the step's start."""
    rows = kernels[kernels.iteration == iteration].sort_values("start_us")
    gaps, cursor = [], 0.0
    for start, dur in zip(rows.start_us, rows.dur_us, strict=True):
        if start > cursor:
            gaps.append((cursor, start - cursor))
        cursor = max(cursor, start + dur)
    return gaps


def summarise(kernels: pd.DataFrame, step_durations: list[float], *, launches_counted: bool,
              launches: pd.DataFrame) -> TraceSummary:
    """Means over iterations of kernel count, busy fraction and idle time; the span of an iteration runs
    from its step's start to the later of the step's end and its last kernel's end."""
    n = len(step_durations)
    spans, covered_all, gaps_all, largest = [], [], [], 0.0
    for i in range(n):
        rows = kernels[kernels.iteration == i]
        covered, _, last_end = _union_us(list(zip(rows.start_us, rows.start_us + rows.dur_us, strict=True)))
        span = max(step_durations[i], last_end)
        spans.append(span)
        covered_all.append(covered)
        gaps = idle_gaps(kernels, i)
        gaps_all.append(span - covered)
        largest = max([largest] + [g for _, g in gaps])
    span_mean = sum(spans) / n if n else 0.0
    covered_mean = sum(covered_all) / n if n else 0.0
    return TraceSummary(
        iterations=n,
        kernels_per_iteration=len(kernels) / n if n else 0.0,
        launches_per_iteration=(len(launches) / n if n else 0.0) if launches_counted else None,
        busy_fraction=covered_mean / span_mean if span_mean > 0 else None,
        span_us=span_mean,
        kernel_time_us=covered_mean,
        idle_us=sum(gaps_all) / n if n else 0.0,
        largest_gap_us=largest,
        representative_iteration=_median_index(spans),
    )


def _median_index(values: list[float]) -> int:
    if not values:
        return 0
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[len(order) // 2]
