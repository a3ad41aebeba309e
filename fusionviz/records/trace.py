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
import contextlib
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from fusionviz.errors import ConfigError, TraceError
from fusionviz.records.decode import INT64, clip, shown
from fusionviz.records.kernels import (
    CPU_VIEW_OPS,
    MEMORY_CLASS,
    CpuOpRow,
    KernelRow,
    classify,
    cpu_op_frame,
    fused_ops_from_name,
    kernel_frame,
    normalise_name,
    short_name,
)
from fusionviz.records.limits import Limits
from fusionviz.records.session import TraceSummary
from fusionviz.records.stacks import stack_lines
from fusionviz.records.trace_events import (
    DEVICE_CATEGORIES,
    Event,
    TraceDocument,
    complete_events,
    from_values,
    read_trace,
    shapes,
)

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for: `inspect` runs without it
    import pandas as pd

IterationChoice = Literal["steps", "calls"]  # what parse_trace may be asked to take as an iteration
IterationSource = Literal["steps", "trace", "calls"]  # what it took (TraceSummary.iterations_from)

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
_HOST_NESTED = frozenset({"cpu_op", "user_annotation", "python_function"})
_OP_CATEGORIES = frozenset({"cpu_op", "user_annotation"})  # the events an External id names
_STEP_CATEGORIES = frozenset({"user_annotation", "cpu_op"})  # where a ProfilerStep marker is taken as a step
_TS = operator.attrgetter("ts")
_DUR = operator.attrgetter("dur")
_START = operator.attrgetter("start_us")
_ITERATION = operator.attrgetter("iteration")
# The collectives a CPU backend runs on threads of its own (`gloo:all_reduce`): a job's communication where the
# trace has no device kernels (on a GPU, NCCL's and RCCL's kernels are the communication).
HOST_COLLECTIVES = ("gloo:",)


@dataclass
class ParsedTrace:
    """A trace read into tables. `device_kind` says where the kernel table's kernels ran: "cuda" (device
    events read) or "cpu" (top-level CPU calls; `summary.device_note` says when the trace's device work was of
    a kind fusionviz does not read). `kernel_files` maps Inductor kernel names to their generated files.

    The tables are kept as rows (`kernel_rows`, `cpu_op_rows`, in iteration and start order), as a session keeps
    them; `kernels` and `cpu_ops` are the same tables as DataFrames, built when first asked for, so that reading
    a trace needs no pandas."""

    device_kind: str
    kernel_rows: list[KernelRow]
    cpu_op_rows: list[CpuOpRow]
    summary: TraceSummary
    kernel_files: dict[str, str] = field(default_factory=dict)

    @cached_property
    def kernels(self) -> pd.DataFrame:
        """The kernel table (`kernels.KERNEL_COLUMNS`)."""
        return kernel_frame(self.kernel_rows)

    @cached_property
    def cpu_ops(self) -> pd.DataFrame:
        """The CPU op table (`kernels.CPU_OP_COLUMNS`)."""
        return cpu_op_frame(self.cpu_op_rows)


class _Windows:
    """The iterations as time windows, in order; finds the one that holds a point or an event."""

    def __init__(self, events: list[Event], source: IterationSource) -> None:
        self.events, self.source = events, source
        self.starts = [w.ts for w in events]
        self.ends = [w.end for w in events]

    def __len__(self) -> int:
        return len(self.events)

    def at(self, ts: float) -> int | None:
        i = bisect.bisect_right(self.starts, ts) - 1
        return i if i >= 0 and ts <= self.ends[i] else None


def parse_trace(data: Any, iterations: IterationChoice = "steps") -> ParsedTrace:
    """Parse a Chrome trace: JSON bytes (gzipped or not), a TraceDocument, or the JSON values already loaded.
    `iterations="calls"` takes each top-level call of a compiled region as an iteration, for a trace without
    ProfilerSteps. Raises TraceError when `data` is not a profiler trace (ValueError when bytes are not JSON),
    and ConfigError when `iterations="calls"` does not apply to it."""
    limits = Limits.from_env()
    if isinstance(data, bytes | bytearray | memoryview):
        data = read_trace(bytes(data) if isinstance(data, memoryview) else data, "the trace", limits)
    elif not isinstance(data, TraceDocument):
        data = from_values(data)
    events, other, negative = complete_events(data, limits)
    del data  # the events of categories not read go now
    host, device, steps = _split(events)
    windows = _windows(steps, host, device, iterations)
    if len(windows) > limits.steps:
        raise limits.refusal("steps", f"this trace holds {len(windows):,} profiled iterations")

    index = _HostIndex.of(host)
    compute, regions, graph_of = _walk_compute(index.threads, windows)
    cpu_rows = [_cpu_row(it, e, "op", windows) for it, e in compute]
    cpu_rows += [_cpu_row(it, e, "region", windows) for it, e in regions]
    launch_rows = [_cpu_row(it, e, "launch", windows) for e in index.launches
                   if (it := windows.at(e.ts)) is not None]
    cpu_rows += launch_rows
    cpu_rows += [_cpu_row(it, e, "collective", windows) for e in index.collectives
                 if (it := windows.at(e.ts)) is not None]

    excluded: Counter[str] = Counter()
    placed_by_time = False
    as_given: Counter[str] = Counter()  # display fields in an odd form, by field
    if device:
        kernel_rows, excluded, placed_by_time = _device_kernels(device, index, windows, graph_of, as_given)
    else:
        kernel_rows = [_cpu_kernel(it, e, windows, graph_of.get(id(e), ""), as_given) for it, e in compute]

    for rows in (kernel_rows, cpu_rows):  # by iteration, then start: stable sorts, as before
        rows.sort(key=_START)
        rows.sort(key=_ITERATION)
    durations = [w.dur for w in windows.events]
    summary = summarise(kernel_rows, durations, launches_counted=bool(device), launches=launch_rows)
    summary = msgspec.structs.replace(
        summary, iterations_from=windows.source,
        region_calls=_repeated_calls(host) if windows.source == "trace" else 0,
        excluded_kernels=excluded["kernel"], excluded_memory_ops=excluded[MEMORY_CLASS],
        placed_by_time=placed_by_time, device_note="" if device else _device_note(other),
        step_durations_us=durations, negative_durations=negative, display_as_given=dict(as_given))
    return ParsedTrace("cuda" if device else "cpu", kernel_rows, cpu_rows, summary, index.kernel_files)


@lru_cache(maxsize=1 << 14)
def _is_step(name: str) -> bool:
    return STEP.match(name) is not None


@lru_cache(maxsize=1 << 12)
def _is_launch(name: str) -> bool:
    return LAUNCH_CALLS.match(name) is not None


def _split(events: list[Event]) -> tuple[list[Event], list[Event], list[Event]]:
    """The host events, the device events and the ProfilerStep markers, in one pass (in trace order; a step
    marker is neither host nor device work)."""
    host: list[Event] = []
    device: list[Event] = []
    steps: list[Event] = []
    for e in events:
        if e.cat in DEVICE_CATEGORIES:
            device.append(e)
        elif e.name.startswith("ProfilerStep#") and _is_step(e.name):
            if e.cat in _STEP_CATEGORIES:
                steps.append(e)
        else:
            host.append(e)
    return host, device, steps


class _HostIndex(msgspec.Struct):
    """The host events sorted out in one pass, for the passes after it: the nested ones by thread (pid, tid), the
    launch calls, the host collectives, Inductor's kernel files by kernel name, and the launch call of each
    correlation id and the first op of each External id (what a device event links to)."""

    threads: dict[Any, list[Event]]
    launches: list[Event]
    collectives: list[Event]
    kernel_files: dict[str, str]
    launch_by_corr: dict[Any, Event]
    op_by_ext: dict[Any, Event]

    @classmethod
    def of(cls, host: list[Event]) -> _HostIndex:
        index = cls({}, [], [], {}, {}, {})
        threads, launch_by_corr, op_by_ext = index.threads, index.launch_by_corr, index.op_by_ext
        for e in host:
            name, a = e.name, e.args
            if e.cat in _HOST_NESTED:
                key = (e.pid, e.tid)
                thread = threads.get(key)
                if thread is None:
                    thread = threads[key] = []
                thread.append(e)
                if e.cat in _OP_CATEGORIES and (ext := e.ext) is not None and ext not in op_by_ext:
                    op_by_ext[ext] = e
            else:  # a runtime or driver call
                if a is not None and a.correlation is not None:
                    launch_by_corr[a.correlation] = e
                if _is_launch(name):
                    index.launches.append(e)
            if name.startswith(HOST_COLLECTIVES):
                index.collectives.append(e)
            if a is not None and a.kernel_file and name.startswith("triton_"):
                index.kernel_files[name] = a.kernel_file
        return index


def _windows(steps: list[Event], host: list[Event], device: list[Event],
             iterations: IterationChoice) -> _Windows:
    """The iterations: the ProfilerSteps; without them the whole trace, or each compiled-region call."""
    steps = sorted(steps, key=_TS)
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
    if not everything:
        raise TraceError("this trace holds ProfilerStep markers and nothing else: no op, launch or kernel events")
    start = min(e.ts for e in everything)
    whole = Event(cat="user_annotation", name="whole trace", ts=start,
                  dur=max(e.end for e in everything) - start)
    return _Windows([whole], "trace")


def _region_calls(host: list[Event]) -> list[Event]:
    """Top-level calls of compiled regions: regions not inside another one (a graph break's resumed frame
    runs inside the frame that broke)."""
    calls: list[Event] = []
    for e in sorted((e for e in host if e.name.startswith(COMPILED_REGION)), key=lambda e: (e.ts, -e.dur)):
        if not calls or e.ts >= calls[-1].end:
            calls.append(e)
    return calls


def _repeated_calls(host: list[Event]) -> int:
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


def _device_note(other: Counter[str]) -> str:
    """What a trace without kernel events holds on its device side, when it holds something there (`other`:
    the categories of the complete events not read, counted)."""
    unread = Counter({cat: n for cat, n in other.items() if cat not in QUIET_CATEGORIES})
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


def _walk_compute(threads: dict[Any, list[Event]], windows: _Windows) -> tuple[
        list[tuple[int, Event]], list[tuple[int, Event]], dict[int, str]]:
    """Top-level compute ops and compiled regions per iteration, and the compiled graph each op ran in (the ops
    inside a compute op of compiled code too: a kernel's launching op may be one of those).

    The events of each thread (`_HostIndex.threads`, sorted here in place) are nested by time containment and
    walked in one sweep, in order of start (the longer first): an event inside a compute op is not looked at, and
    an event that no single iteration holds (a Python frame around the whole loop) is looked inside, as are
    wrappers, regions and view ops (`aten::to` may call a copy)."""
    compute: list[tuple[int, Event]] = []
    regions: list[tuple[int, Event]] = []
    graph_of: dict[int, str] = {}
    starts, ends = windows.starts, windows.ends
    for events in threads.values():
        events.sort(key=_DUR, reverse=True)  # then by start, stably: by start, the longer first
        events.sort(key=_TS)
        stack: list[tuple[float, bool, str]] = []  # each open ancestor's end, whether it is a compute op, graph
        for e in events:
            ts = e.ts
            end = ts + e.dur
            while stack and ts >= stack[-1][0]:
                stack.pop()
            if stack:
                _, inside, graph = stack[-1]
            else:
                inside, graph = False, ""
            if not inside:
                i = bisect.bisect_right(starts, ts) - 1
                if i >= 0 and end <= ends[i]:  # the iteration holds it
                    name = e.name
                    if name.startswith(REGION_PREFIXES):
                        regions.append((i, e))
                        if name.startswith("## Call CompiledFxGraph"):
                            graph = name.removeprefix("## Call CompiledFxGraph").strip(" #")
                    if _is_compute(name, e.cat):
                        compute.append((i, e))
                        graph_of[id(e)] = graph
                        inside = True
            elif graph:  # an op a compute op calls launches kernels of that graph too (attention's forward)
                graph_of[id(e)] = graph
            stack.append((end, inside, graph))
    return compute, regions, graph_of


# The CPU's compute calls: ATen's, and oneDNN's that Inductor calls in their place under freezing
# (`mkldnn::_convolution_pointwise`: a frozen convolution with its ReLU folded in).
CPU_LIBRARY_PREFIXES = ("aten::", "mkldnn::")


@lru_cache(maxsize=1 << 14)
def _is_compute(name: str, cat: str) -> bool:
    name = normalise_name(name)
    if name.startswith(("cpp_fused", "cpp__", "triton_")):  # `cpp__0`: descriptive kernel names off
        return True
    return cat == "cpu_op" and name.startswith(CPU_LIBRARY_PREFIXES) and name not in CPU_VIEW_OPS


def _cpu_row(iteration: int, e: Event, category: str, windows: _Windows) -> CpuOpRow:
    return CpuOpRow(iteration=iteration, name=normalise_name(e.name), category=category,
                    start_us=e.ts - windows.events[iteration].ts, dur_us=e.dur)


def _shapes(e: Event, as_given: Counter[str]) -> str:
    """An op's input shapes as text (the list without its empty entries), or as given when it is no list."""
    if e.args is None:
        return ""
    value, odd = shapes(e.args.dims)
    if odd:
        as_given["Input Dims"] += 1
        return str(value)
    return str([d for d in value if d != []]) if value else ""


def _op_shapes(op: Event, known: dict[int, str], as_given: Counter[str]) -> str:
    """`_shapes`, once per distinct text (ops of one shape share their `Input Dims`, `trace_events._read`)."""
    key = id(op.args.dims) if op.args is not None else 0
    text = known.get(key)
    if text is None:
        text = known[key] = _shapes(op, as_given)
    return text


def _cpu_kernel(iteration: int, e: Event, windows: _Windows, graph: str, as_given: Counter[str]) -> KernelRow:
    name = normalise_name(e.name)
    fused = (list(fused_ops_from_name(name)) if name.startswith("cpp_")
             else [name.split("::", 1)[-1].lstrip("_")])
    return KernelRow(
        iteration=iteration, name=name, short_name=short_name(name), kernel_class=classify(name, name, e.cat),
        start_us=e.ts - windows.events[iteration].ts, dur_us=e.dur, stream=-1, grid="", block="", launch_op=name,
        op_id=_op_id(e.ext), input_shapes=_shapes(e, as_given), fused_ops=fused, source_file="", graph=graph,
        launch_us=None, source_lines=_source_lines(e))


def _device_kernels(device: list[Event], index: _HostIndex, windows: _Windows, graph_of: dict[int, str],
                    as_given: Counter[str]) -> tuple[list[KernelRow], Counter[str], bool]:
    """Rows of the device events that an iteration launched; the count of those it did not, by "kernel" and
    "memory"; and whether events were placed by their own timestamps (a trace with no correlation data)."""
    launch_by_corr, op_by_ext = index.launch_by_corr, index.op_by_ext
    linked = [(k, launch_by_corr.get(k.corr), op_by_ext.get(k.ext)) for k in device]
    placed_by_time = not any(launch or op for _, launch, op in linked)
    rows, excluded = [], Counter[str]()
    known: dict[int, str] = {}  # input shapes, decoded once for all the kernels of ops of that shape
    for k, launch, op in linked:
        anchor = launch.ts if launch else op.ts if op else k.ts if placed_by_time else None
        iteration = windows.at(anchor) if anchor is not None else None
        if iteration is None:
            excluded["kernel" if k.cat == "kernel" else MEMORY_CLASS] += 1
            continue
        rows.append(_device_row(iteration, k, launch, op, windows, graph_of, known, as_given))
    return rows, excluded, placed_by_time


def _device_row(iteration: int, k: Event, launch: Event | None, op: Event | None, windows: _Windows,
                graph_of: dict[int, str], known: dict[int, str], as_given: Counter[str]) -> KernelRow:
    launch_op = op.name if op else (launch.name if launch else "")
    if k.cat != "kernel":
        fused: list[str] = []  # a memory operation covers no op
    elif k.name.startswith("triton_"):
        fused = list(fused_ops_from_name(k.name))
    elif op is not None and op.name.startswith("aten::"):
        fused = [op.name.removeprefix("aten::")]
    else:
        fused = []
    t0 = windows.events[iteration].ts
    a = k.args
    source = op.args.kernel_file if op is not None and op.args is not None else None
    return KernelRow(
        iteration=iteration, name=k.name, short_name=short_name(k.name),
        kernel_class=classify(k.name, launch_op, k.cat), start_us=k.ts - t0, dur_us=k.dur,
        stream=_stream(None if a is None else a.stream, k.tid, as_given),
        grid=_dims(None if a is None else a.grid, "grid", as_given),
        block=_dims(None if a is None else a.block, "block", as_given),
        launch_op=launch_op, op_id=_op_id(op.ext) if op else -1,
        input_shapes=_op_shapes(op, known, as_given) if op else "", fused_ops=fused, source_file=source or "",
        graph=graph_of.get(id(op), "") if op else "", launch_us=launch.ts - t0 if launch else None,
        source_lines=_source_lines(k, op, launch))


def _source_lines(*events: Event | None) -> list[str]:
    """The user's lines of the first event that names any (a kernel, then its launching op, then its launch
    call): `stack` as torch._inductor.profiler's handler writes it, else `stack_trace` as FX's metadata does."""
    for e in events:
        a = e.args if e is not None else None
        if a is not None and (a.stack is not None or a.stack_trace is not None):
            lines = stack_lines(a.stack) or stack_lines(a.stack_trace)
            if lines:
                return lines
    return []


def _stream(value: Any, tid: Any, as_given: Counter[str]) -> int:
    """The device event's stream: `args.stream` (0 is a stream; ROCm's hex text "0x0" read as its integer),
    else torch 1.x's thread name `stream 7`; -1 where neither says (an odd form counted)."""
    if type(value) is int and -INT64 <= value < INT64:
        return value
    if value is None:
        match = _STREAM_THREAD.fullmatch(str(tid).strip())
        return int(match.group(1)) if match else -1
    as_given["stream"] += 1
    if type(value) is str:
        with contextlib.suppress(ValueError):
            number = int(value, 16) if value.strip().lower().startswith("0x") else int(value)
            if -INT64 <= number < INT64:
                return number
    return -1


def _op_id(ext: Any) -> int:
    return int(ext) if isinstance(ext, int) else -1


def _dims(value: Any, field: str, as_given: Counter[str]) -> str:
    """A launch grid or block as 'x,y,z'; in another form (Triton's "grid(100,)") shown as given, and counted."""
    if value is None:
        return ""
    if type(value) is list:
        try:
            text = _joined(tuple(value))
        except TypeError:  # a list inside: unhashable, and no launch dimension
            text = None
        if text is not None:
            return text
    as_given[field] += 1
    return clip(value if type(value) is str else shown(value), 120)


@lru_cache(maxsize=1 << 12)
def _joined(values: tuple[Any, ...]) -> str | None:
    """A launch grid or block as 'x,y,z' (a few hundred distinct ones in a trace); None unless integers."""
    return ",".join(map(str, values)) if all(type(v) is int for v in values) else None


def summarise(rows: list[KernelRow], step_durations: list[float], *, launches_counted: bool, launches: Any
              ) -> TraceSummary:
    """Counts per iteration of kernels (memory operations are counted apart) and launch calls (only where they
    apply: a GPU), and the iteration of median span, drawn on timelines: the span of an iteration runs from its
    step's start to the later of the step's end and its last kernel's end. Busy and idle time are analysis'
    (`analysis.trace_stats.busy_time`). `launches` is anything with a length (the launch calls)."""
    n = len(step_durations)
    last_end = [0.0] * n
    kernel_count = memory_count = 0
    for row in rows:
        if row.kernel_class == MEMORY_CLASS:
            memory_count += 1
            continue
        kernel_count += 1
        if 0 <= row.iteration < n:
            last_end[row.iteration] = max(last_end[row.iteration], row.start_us + row.dur_us)
    return TraceSummary(
        iterations=n,
        kernels_per_iteration=kernel_count / n if n else 0.0,
        launches_per_iteration=(len(launches) / n if n else 0.0) if launches_counted else None,
        representative_iteration=_median_index([max(step, end) for step, end in zip(step_durations, last_end,
                                                                                    strict=True)]),
        memory_ops_per_iteration=memory_count / n if n else 0.0,
        step_durations_us=list(step_durations),
    )


def _median_index(values: list[float]) -> int:
    if not values:
        return 0
    order = sorted(range(len(values)), key=lambda i: values[i])
    return order[len(order) // 2]
