"""Read a torch.profiler Chrome trace (`export_chrome_trace`) into the kernel and CPU-op tables.

The same reader serves fusionviz's own captures and a user's plain trace, so both draw the same way.
It imports no torch: opening a trace costs JSON parsing only. Traces of torch 1.x (2020–2022: capitalised
categories `Kernel`, `Runtime`, `Operator`, `Memcpy`, `Memset`, and `external id`) are read as today's.

What an iteration is: each `ProfilerStep#N`; in a trace without steps, the whole trace (one window), or, on
request (`iterations="calls"`), each top-level call of a compiled region.

What counts as a kernel:
- on a GPU, every device kernel (`kernel`: CUDA-graph replays and copy kernels included), assigned to the
  iteration in which its launching call ran (profiler correlation to the runtime/driver launch, else the
  External id of the CPU op). A kernel launched outside every iteration (a CUDA-graph replay launched before
  the profiled steps, whose launch the trace does not even hold) belongs to none: it is counted as excluded.
  Only a trace with no correlation data at all is placed by the kernels' own timestamps, and says so.
  Memcpy/Memset device operations (`gpu_memcpy`, `gpu_memset`) are rows too, of class `memory`, counted apart
  from kernels, as Nsight, HTA and the TensorBoard plugin do;
- on the CPU, where there are no device events, the top-level compute calls: each ATen op reached from
  the iteration without passing through another ATen op (view and allocation ops skipped), and each
  Inductor C++ kernel (`cpp_fused_*`, visible when kernel profiling was on when it compiled). External
  GEMM calls inside compiled code are ATen ops (`aten::addmm`), so they count too.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from fusionviz.errors import ConfigError, TraceError
from fusionviz.records.kernels import (
    CPU_VIEW_OPS,
    MEMORY_CLASS,
    classify,
    cpu_op_frame,
    cpu_op_row,
    fused_ops_from_name,
    kernel_frame,
    kernel_row,
    normalise_name,
)
from fusionviz.records.session import TraceSummary

IterationChoice = Literal["steps", "calls"]  # what parse_trace may be asked to take as an iteration
IterationSource = Literal["steps", "trace", "calls"]  # what it took (TraceSummary.iterations_from)

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})  # HIP calls of a ROCm trace appear here too
HOST_CATEGORIES = frozenset({"cpu_op", "user_annotation", "python_function"}) | RUNTIME_CATEGORIES
# torch 1.x traces (2020–2022) named the categories differently.
LEGACY_CATEGORIES: dict[str, str] = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel",
                                     "Memcpy": "gpu_memcpy", "Memset": "gpu_memset", "Python": "python_function"}
# Categories that hold no device work of their own: device-side mirrors of annotations, syncs, flow arrows,
# profiler overhead and trace markers.
QUIET_CATEGORIES = frozenset({"gpu_user_annotation", "cuda_sync", "cuda_event", "overhead", "cpu_instant_event",
                              "Trace", "ac2g", "fwdbwd", "external_correlation", "Net"})
LAUNCH_CALLS = re.compile(r"^(?:cuda|cu|hip)(?:Ext|Hcc)?(?:Module|Drv)?"
                          r"(?:LaunchKernel|GraphLaunch|LaunchCooperativeKernel|Memcpy|Memset)")
STEP = re.compile(r"^ProfilerStep#(\d+)$")
COMPILED_REGION = "Torch-Compiled Region"
REGION_PREFIXES = (COMPILED_REGION, "## Call CompiledFxGraph")
_FRAME = re.compile(r"^Torch-Compiled Region: (\d+)/")
_STREAM_THREAD = re.compile(r"stream\s*(\d+)")


@dataclass
class ParsedTrace:
    """A trace read into tables. `device_kind` says where the kernel table's kernels ran: "cuda" (device
    events read) or "cpu" (top-level CPU calls; `summary.device_note` says when the trace's device work was of
    a kind fusionviz does not read). `kernel_files` maps Inductor kernel names to their generated files."""

    device_kind: str
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


class _Windows:
    """The iterations as time windows, in order; finds the one that holds a point or an event."""

    def __init__(self, events: list[_Event], source: IterationSource) -> None:
        self.events, self.source = events, source
        self._starts = [w.ts for w in events]

    def __len__(self) -> int:
        return len(self.events)

    def at(self, ts: float) -> int | None:
        i = bisect.bisect_right(self._starts, ts) - 1
        return i if i >= 0 and ts <= self.events[i].end else None

    def holding(self, e: _Event) -> int | None:
        i = self.at(e.ts)
        return i if i is not None and e.end <= self.events[i].end else None


def parse_trace(data: Any, iterations: IterationChoice = "steps") -> ParsedTrace:
    """Parse a loaded Chrome trace. `iterations="calls"` takes each top-level call of a compiled region as an
    iteration, for a trace without ProfilerSteps. Raises TraceError when `data` is not a profiler trace, and
    ConfigError when `iterations="calls"` does not apply to it."""
    events = _complete_events(data)
    host = [e for e in events if e.cat in HOST_CATEGORIES and not STEP.match(e.name)]
    device = [e for e in events if e.cat in DEVICE_CATEGORIES]
    windows = _windows(events, host, device, iterations)

    compute, regions, graph_of = _walk_compute(host, windows)
    cpu_rows = [_cpu_row(it, e, "op", windows) for it, e in compute]
    cpu_rows += [_cpu_row(it, e, "region", windows) for it, e in regions]
    launches = [e for e in host if e.cat in RUNTIME_CATEGORIES and LAUNCH_CALLS.match(e.name)]
    cpu_rows += [_cpu_row(it, e, "launch", windows) for e in launches if (it := windows.at(e.ts)) is not None]

    kernel_files = {e.name: str(e.args["kernel_file"]) for e in host
                    if e.args.get("kernel_file") and e.name.startswith("triton_")}

    excluded: Counter[str] = Counter()
    placed_by_time = False
    if device:
        kernel_rows, excluded, placed_by_time = _device_kernels(device, host, windows, graph_of)
    else:
        kernel_rows = [_cpu_kernel(it, e, windows, graph_of.get(id(e), "")) for it, e in compute]

    kernels = kernel_frame(kernel_rows, "trace kernel table")
    kernels = kernels.sort_values(["iteration", "start_us"], kind="stable").reset_index(drop=True)
    cpu_ops = cpu_op_frame(cpu_rows, "trace CPU op table")
    cpu_ops = cpu_ops.sort_values(["iteration", "start_us"], kind="stable").reset_index(drop=True)
    summary = summarise(kernels, [w.dur for w in windows.events], launches_counted=bool(device),
                        launches=cpu_ops[cpu_ops.category == "launch"])
    summary = dataclasses.replace(
        summary, iterations_from=windows.source,
        region_calls=_repeated_calls(host) if windows.source == "trace" else 0,
        excluded_kernels=excluded["kernel"], excluded_memory_ops=excluded[MEMORY_CLASS],
        placed_by_time=placed_by_time, device_note="" if device else _device_note(events))
    return ParsedTrace("cuda" if device else "cpu", kernels, cpu_ops, summary, kernel_files)


def _complete_events(data: Any) -> list[_Event]:
    if isinstance(data, dict):
        raw = data.get("traceEvents")
    elif isinstance(data, list):
        raw = data
    else:
        raw = None
    if not isinstance(raw, list):
        raise TraceError("this is not a Chrome trace: there is no \"traceEvents\" list at the top")
    events = [_event(e) for e in raw if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e]
    if not any(e.cat in HOST_CATEGORIES or e.cat in DEVICE_CATEGORIES for e in events):
        found = ", ".join(sorted({e.cat for e in events})[:8]) or "none"
        raise TraceError("this Chrome trace holds no torch.profiler events (no cpu_op, kernel or runtime events; "
                         f"its categories: {found})")
    return events


def _event(raw: dict[str, Any]) -> _Event:
    """One complete event, in today's spelling: torch 1.x categories mapped, `external id` as `External id`."""
    cat = str(raw.get("cat", ""))
    args = raw.get("args") or {}
    if "external id" in args and "External id" not in args:
        args = {**args, "External id": args["external id"]}
    return _Event(str(raw.get("name", "")), LEGACY_CATEGORIES.get(cat, cat), float(raw["ts"]),
                  float(raw.get("dur", 0.0)), (raw.get("pid"), raw.get("tid")), args)


def _windows(events: list[_Event], host: list[_Event], device: list[_Event],
             iterations: IterationChoice) -> _Windows:
    """The iterations: the ProfilerSteps; without them the whole trace, or each compiled-region call."""
    steps = sorted((e for e in events if STEP.match(e.name) and e.cat in ("user_annotation", "cpu_op")),
                   key=lambda e: e.ts)
    if iterations == "calls":
        if steps:
            raise ConfigError("this trace has ProfilerSteps, and each step is an iteration: per-call iterations "
                              "are for traces without steps")
        calls = _region_calls(host)
        if not calls:
            raise ConfigError(f"this trace holds no call of a compiled region (`{COMPILED_REGION}`) to take "
                              "as an iteration")
        return _Windows(calls, "calls")
    if steps:
        return _Windows(steps, "steps")
    everything = host + device
    start = min(e.ts for e in everything)
    whole = _Event("whole trace", "user_annotation", start, max(e.end for e in everything) - start, None, {})
    return _Windows([whole], "trace")


def _region_calls(host: list[_Event]) -> list[_Event]:
    """Top-level calls of compiled regions: regions not inside another one (a graph break's resumed frame
    runs inside the frame that broke)."""
    calls: list[_Event] = []
    for e in sorted((e for e in host if e.name.startswith(COMPILED_REGION)), key=lambda e: (e.ts, -e.dur)):
        if not calls or e.ts >= calls[-1].end:
            calls.append(e)
    return calls


def _repeated_calls(host: list[_Event]) -> int:
    """How many top-level calls of one compiled region the trace holds, when it holds several of the same
    frame and nothing else compiled at the top level; 0 otherwise."""
    calls = _region_calls(host)
    frames = {compiled_frame(e.name) for e in calls}
    return len(calls) if len(calls) > 1 and len(frames) == 1 else 0


def compiled_frame(region_name: str) -> str:
    """The compiled frame of `Torch-Compiled Region: <frame>/<compile>` (recompiles keep the frame; a graph
    break resumes in a new frame)."""
    match = _FRAME.match(region_name)
    return match.group(1) if match else region_name


def _device_note(events: list[_Event]) -> str:
    """What a trace without kernel events holds on its device side, when it holds something there."""
    unread = Counter(e.cat for e in events
                     if e.cat not in HOST_CATEGORIES | DEVICE_CATEGORIES | QUIET_CATEGORIES)
    if not unread:
        return ""
    shown = " (top-level ops, as for a CPU trace); kernel counts, classes and busy time here are the CPU ops', " \
            "not the device's."
    if "cuda_profiler_range" in unread:
        return (f"This file is a CUPTI range-profiler capture: its {unread['cuda_profiler_range']:,} "
                "`cuda_profiler_range` events hold performance counters per kernel range, not a timeline of "
                f"kernels. fusionviz draws its CPU side only{shown}")
    found = ", ".join(f"{n:,} `{cat}`" for cat, n in unread.most_common(3))
    return (f"This trace's device work is recorded as {found} events, which fusionviz does not read (it reads "
            f"CUDA and ROCm `kernel`, `gpu_memcpy` and `gpu_memset` events). It draws the CPU side only{shown}")


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


def _walk_compute(host: list[_Event], windows: _Windows) -> tuple[
        list[tuple[int, _Event]], list[tuple[int, _Event]], dict[int, str]]:
    """Top-level compute ops and compiled regions per iteration, and the compiled graph each op ran in.

    An event that no single iteration holds (a Python frame around the whole loop) is looked inside."""
    by_thread: dict[Any, list[_Event]] = {}
    for e in host:
        if e.cat in ("cpu_op", "user_annotation", "python_function"):
            by_thread.setdefault(e.tid, []).append(e)
    compute: list[tuple[int, _Event]] = []
    regions: list[tuple[int, _Event]] = []
    graph_of: dict[int, str] = {}

    def visit(e: _Event, graph: str) -> None:
        iteration = windows.holding(e)
        if iteration is not None and e.name.startswith(REGION_PREFIXES):
            regions.append((iteration, e))
            if e.name.startswith("## Call CompiledFxGraph"):
                graph = e.name.removeprefix("## Call CompiledFxGraph").strip(" #")
        if iteration is not None and _is_compute(e):
            compute.append((iteration, e))
            graph_of[id(e)] = graph
            return
        for child in e.children:  # wrappers, regions, and view ops (`aten::to` may call a copy)
            visit(child, graph)

    for thread_events in by_thread.values():
        for root in _forest(thread_events):
            visit(root, "")
    return compute, regions, graph_of


def _is_compute(e: _Event) -> bool:
    name = normalise_name(e.name)
    if name.startswith(("cpp_fused", "triton_")):
        return True
    return e.cat == "cpu_op" and name.startswith("aten::") and name not in CPU_VIEW_OPS


def _cpu_row(iteration: int, e: _Event, category: str, windows: _Windows) -> dict[str, Any]:
    return cpu_op_row(iteration=iteration, name=normalise_name(e.name), category=category,
                      start_us=e.ts - windows.events[iteration].ts, dur_us=e.dur)


def _shapes(args: dict[str, Any]) -> str:
    dims = args.get("Input Dims")
    return str([d for d in dims if d != []]) if dims else ""


def _cpu_kernel(iteration: int, e: _Event, windows: _Windows, graph: str) -> dict[str, Any]:
    name = normalise_name(e.name)
    fused = list(fused_ops_from_name(name)) if name.startswith("cpp_fused") else [name.removeprefix("aten::")]
    return kernel_row(
        iteration=iteration, name=name, kernel_class=classify(name, name, e.cat),
        start_us=e.ts - windows.events[iteration].ts, dur_us=e.dur, stream=-1, grid="", block="", launch_op=name,
        op_id=_op_id(e.args), input_shapes=_shapes(e.args), fused_ops=fused, source_file="", graph=graph)


def _device_kernels(device: list[_Event], host: list[_Event], windows: _Windows, graph_of: dict[int, str]
                    ) -> tuple[list[dict[str, Any]], Counter[str], bool]:
    """Rows of the device events that an iteration launched; the count of those it did not, by "kernel" and
    "memory"; and whether events were placed by their own timestamps (a trace with no correlation data)."""
    launch_by_corr = {e.args["correlation"]: e for e in host
                      if e.cat in RUNTIME_CATEGORIES and "correlation" in e.args}
    op_by_ext: dict[Any, _Event] = {}
    for e in host:
        ext = e.args.get("External id")
        if ext is not None and e.cat in ("cpu_op", "user_annotation"):
            op_by_ext.setdefault(ext, e)
    linked = [(k, launch_by_corr.get(k.args.get("correlation")), op_by_ext.get(k.args.get("External id")))
              for k in device]
    placed_by_time = not any(launch or op for _, launch, op in linked)
    rows, excluded = [], Counter[str]()
    for k, launch, op in linked:
        anchor = launch.ts if launch else op.ts if op else k.ts if placed_by_time else None
        iteration = windows.at(anchor) if anchor is not None else None
        if iteration is None:
            excluded["kernel" if k.cat == "kernel" else MEMORY_CLASS] += 1
            continue
        rows.append(_device_row(iteration, k, launch, op, windows, graph_of))
    return rows, excluded, placed_by_time


def _device_row(iteration: int, k: _Event, launch: _Event | None, op: _Event | None, windows: _Windows,
                graph_of: dict[int, str]) -> dict[str, Any]:
    launch_op = op.name if op else (launch.name if launch else "")
    if k.cat != "kernel":
        fused: list[str] = []  # a memory operation covers no op
    elif k.name.startswith("triton_"):
        fused = list(fused_ops_from_name(k.name))
    elif op is not None and op.name.startswith("aten::"):
        fused = [op.name.removeprefix("aten::")]
    else:
        fused = []
    return kernel_row(
        iteration=iteration, name=k.name, kernel_class=classify(k.name, launch_op, k.cat),
        start_us=k.ts - windows.events[iteration].ts, dur_us=k.dur, stream=_stream(k),
        grid=_dims(k.args.get("grid")), block=_dims(k.args.get("block")), launch_op=launch_op,
        op_id=_op_id(op.args) if op else -1, input_shapes=_shapes(op.args) if op else "", fused_ops=fused,
        source_file=str(op.args.get("kernel_file", "")) if op else "",
        graph=graph_of.get(id(op), "") if op else "")


def _stream(k: _Event) -> int:
    """The device event's stream: `args.stream` (0 is a stream), else torch 1.x's thread name `stream 7`."""
    stream = k.args.get("stream")
    if stream is not None:
        return int(stream)
    match = _STREAM_THREAD.fullmatch(str(k.tid[1]).strip())
    return int(match.group(1)) if match else -1


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
    """(start_us, dur_us) of each stretch of one iteration in which no kernel runs, from the step's start
    (memory operations are not kernels: a Memcpy alone leaves the GPU's compute idle)."""
    rows = kernels[(kernels.iteration == iteration) & (kernels.kernel_class != MEMORY_CLASS)].sort_values("start_us")
    gaps, cursor = [], 0.0
    for start, dur in zip(rows.start_us, rows.dur_us, strict=True):
        if start > cursor:
            gaps.append((cursor, start - cursor))
        cursor = max(cursor, start + dur)
    return gaps


def summarise(rows: pd.DataFrame, step_durations: list[float], *, launches_counted: bool,
              launches: pd.DataFrame) -> TraceSummary:
    """Means over iterations of kernel count, busy fraction and idle time, from kernels only (memory
    operations are counted apart); the span of an iteration runs from its step's start to the later of the
    step's end and its last kernel's end. Launch calls are counted only where they apply (a GPU)."""
    n = len(step_durations)
    memory = rows.kernel_class == MEMORY_CLASS
    kernels, memory_ops = rows[~memory], rows[memory]
    spans, covered_all, gaps_all, largest = [], [], [], 0.0
    for i in range(n):
        mine = kernels[kernels.iteration == i]
        covered, _, last_end = _union_us(list(zip(mine.start_us, mine.start_us + mine.dur_us, strict=True)))
        span = max(step_durations[i], last_end)
        spans.append(span)
        covered_all.append(covered)
        gaps_all.append(span - covered)
        largest = max([largest] + [g for _, g in idle_gaps(kernels, i)])
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
        memory_ops_per_iteration=len(memory_ops) / n if n else 0.0,
    )


def _median_index(values: list[float]) -> int:
    if not values:
        return 0
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[len(order) // 2]
