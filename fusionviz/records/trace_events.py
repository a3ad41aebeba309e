"""The events of a torch.profiler Chrome trace, decoded and checked: the one place a trace's JSON is read and
its field types and ranges decided, before `trace` interprets the events (steps, launches, kernels).

msgspec decodes each event with only the fields read (`trace_json`), checking most of them in C; an event its
types refuse is read as plain JSON values and checked here, field by field, so that a value of the wrong type
or range becomes a TraceError naming the event. Without msgspec, the standard library's json serves.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from fusionviz.errors import TraceError
from fusionviz.records.decode import INT64, MAX_MAGNITUDE, clip, is_finite_number, is_int64, shown
from fusionviz.records.limits import Limits

try:  # msgspec decodes only the fields read; the standard library's json serves where it is missing
    from fusionviz.records import trace_json
except ImportError:  # pragma: no cover - a machine without msgspec
    trace_json = None  # type: ignore[assignment]

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})  # HIP calls of a ROCm trace appear here too
HOST_CATEGORIES = frozenset({"cpu_op", "user_annotation", "python_function"}) | RUNTIME_CATEGORIES
READ_CATEGORIES = HOST_CATEGORIES | DEVICE_CATEGORIES
# torch 1.x traces (2020–2022) named the categories differently.
LEGACY_CATEGORIES: dict[str, str] = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel",
                                     "Memcpy": "gpu_memcpy", "Memset": "gpu_memset", "Python": "python_function"}


class Event:
    """One complete event, in today's spelling (torch 1.x categories mapped, `external id` as `External id`),
    with the few arguments the reader uses. `children` is set for host events when they are nested."""

    __slots__ = ("block", "cat", "children", "corr", "dims", "dur", "end", "ext", "grid", "kernel_file", "name",
                 "pid", "stream", "tid", "ts")

    def __init__(self, name: str, cat: str, ts: float, dur: float, pid: Any, tid: Any, ext: Any = None,
                 corr: Any = None, stream: Any = None, grid: Any = None, block: Any = None, dims: Any = None,
                 kernel_file: Any = None) -> None:
        self.name, self.cat, self.ts, self.dur, self.end, self.pid, self.tid = name, cat, ts, dur, ts + dur, pid, tid
        self.ext, self.corr, self.stream, self.grid, self.block, self.dims = ext, corr, stream, grid, block, dims
        self.kernel_file = kernel_file
        self.children: list[Event]


@dataclass
class TraceDocument:
    """A JSON document decoded with only what the reader needs: `kind` (a fusionviz session's marker), the
    trace's events, kept as the decoder made them (`events` is None when there is no `traceEvents` list), and
    `distributed`, the trace's `distributedInfo` as written (which rank of a job wrote it), unchecked."""

    kind: Any
    events: list[Any] | None
    distributed: Any = None


def read_document(raw: bytes) -> Any:
    """JSON bytes (not gzipped) as a TraceDocument where msgspec is installed, else as the standard library's
    values. Raises ValueError (json.JSONDecodeError or UnicodeDecodeError) when they are not JSON, and TraceError
    when they nest deeper than a parser's stack allows."""
    try:
        if trace_json is not None:
            try:
                kind, events, distributed = trace_json.decode(raw)
            except (trace_json.DecodeError, trace_json.ValidationError):
                pass  # not JSON, or shaped unlike a trace: the standard library reads it and says what is wrong
            else:
                return TraceDocument(kind, events, distributed)
        return json.loads(raw)
    except RecursionError:
        raise TraceError("this JSON nests deeper than any trace or session does (thousands of levels)") from None


def complete_events(data: Any, limits: Limits) -> tuple[list[Event], Counter[str], int]:
    """The complete events (`ph` "X") of the categories read, each checked (`_Checks`); a count of the other
    events' categories (for the note on device work not read, and the error on a file that is no profiler
    trace); and how many read events had a negative duration (read as 0, and reported)."""
    if isinstance(data, TraceDocument):
        raw = data.events
    elif isinstance(data, dict):
        raw = data.get("traceEvents")
    elif isinstance(data, list):
        raw = data
    else:
        raw = None
    if not isinstance(raw, list):
        raise TraceError("this is not a Chrome trace: there is no \"traceEvents\" list at the top")
    if len(raw) > limits.events:
        raise limits.refusal("events", f"this trace holds {len(raw):,} events")
    checks = _Checks(limits)
    if isinstance(data, TraceDocument):
        events, other = _events_from_raw(raw, checks)
    else:
        events, other = [], Counter[str]()
        for index, r in enumerate(raw):
            _add_dict_event(r, index, events, other, checks)
    if not events:
        found = ", ".join(sorted(other)[:8]) or "none"
        raise TraceError("this Chrome trace holds no torch.profiler events (no cpu_op, kernel or runtime events; "
                         f"its categories: {found})")
    return events, other, checks.negative


class _Checks:
    """The checks every read event passes before use: the one place a trace's field types and ranges are
    decided. Wrong values are a TraceError naming the event and the field; negative durations, which
    profilers do write for events cut off at the trace's end, are read as 0 and counted."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.negative = 0

    def fail(self, index: int, name: Any, message: str) -> TraceError:
        label = f" ({clip(name, 60)})" if isinstance(name, str) and name else ""
        return TraceError(f"event {index}{label} {message}")

    def time(self, value: Any, field: str, index: int, name: str) -> float:
        if not is_finite_number(value):
            raise self.fail(index, name, f"has {field} {shown(value)}: not a finite number of µs within ±1e18")
        return float(value)

    def duration(self, value: Any, index: int, name: str) -> float:
        dur = 0.0 if value is None else self.time(value, "dur", index, name)
        if dur < 0:
            self.negative += 1
            return 0.0
        return dur

    def name(self, value: Any, field: str, index: int) -> str:
        if type(value) is not str:
            raise self.fail(index, None, f"has a {field} of type {type(value).__name__}, not a string")
        if len(value) > self.limits.name_chars:
            raise self.limits.refusal("name_chars", f"event {index} has a {field} of {len(value):,} characters")
        return value

    def ident(self, value: Any, field: str, index: int, name: str, *, text: bool = False) -> Any:
        """An id used to link events: an integer within int64 (or, for pid and tid, a string), or absent."""
        if value is None or is_int64(value):
            return value
        if text and type(value) is str:
            return self.name(value, field, index)
        kind = "an integer or a string" if text else "an integer within int64"
        raise self.fail(index, name, f"has {field} {shown(value)}: not {kind}")

    def launch_dims(self, value: Any, field: str, index: int, name: str) -> Any:
        if value is None or (type(value) is list and all(type(v) is int for v in value)):
            return value
        raise self.fail(index, name, f"has {field} {shown(value)}: not a list of integers")

    def shapes(self, value: Any, index: int, name: str) -> Any:
        if value is None or type(value) is list:
            return value
        raise self.fail(index, name, f"has Input Dims {shown(value)}: not a list")

    def path(self, value: Any, index: int, name: str) -> Any:
        return value if value is None else self.name(value, "kernel_file", index)


def _category(r: dict[str, Any]) -> str:
    cat = r.get("cat", "")
    cat = cat if type(cat) is str else f"<{type(cat).__name__}>"
    return LEGACY_CATEGORIES.get(cat, cat)


def _add_dict_event(r: Any, index: int, events: list[Event], other: Counter[str], checks: _Checks) -> None:
    """Check one event given as JSON values and keep it when it is a complete event of a category read."""
    if not isinstance(r, dict):
        raise TraceError(f"event {index} is a {type(r).__name__}, not an object: this is no Chrome trace")
    if r.get("ph") != "X":
        return
    cat = _category(r)
    if cat not in READ_CATEGORIES:
        other[cat] += 1
        return
    name = checks.name(r.get("name", ""), "name", index)
    args = r.get("args")
    if args is None:
        args = {}
    elif not isinstance(args, dict):
        raise checks.fail(index, name, f"has args of type {type(args).__name__}, not an object")
    ext = args["External id"] if "External id" in args else args.get("external id")
    events.append(Event(
        name, cat, checks.time(r.get("ts"), "ts", index, name), checks.duration(r.get("dur"), index, name),
        checks.ident(r.get("pid"), "pid", index, name, text=True),
        checks.ident(r.get("tid"), "tid", index, name, text=True),
        checks.ident(ext, "External id", index, name),
        checks.ident(args.get("correlation"), "correlation", index, name),
        checks.ident(args.get("stream"), "stream", index, name),
        checks.launch_dims(args.get("grid"), "grid", index, name),
        checks.launch_dims(args.get("block"), "block", index, name),
        checks.shapes(args.get("Input Dims"), index, name),
        checks.path(args.get("kernel_file"), index, name)))


def _events_from_raw(raw: list[Any], checks: _Checks) -> tuple[list[Event], Counter[str]]:
    """Events decoded one at a time from their bytes (msgspec, whose declared types check most fields in C),
    each dropped once read; an event its types refuse is read as plain JSON values, so `_add_dict_event`
    decides whether it matters and says what is wrong."""
    assert trace_json is not None
    events: list[Event] = []
    other: Counter[str] = Counter()
    legacy, read, decode = LEGACY_CATEGORIES, READ_CATEGORIES, trace_json.EVENT.decode
    odd = trace_json.ValidationError
    append = events.append
    name_cap, time_cap = checks.limits.name_chars, MAX_MAGNITUDE
    # One object per distinct name, category and thread: tens of thousands of events share a few hundred.
    strings: dict[str, str] = {}
    ids: dict[Any, Any] = {}
    share, share_id = strings.setdefault, ids.setdefault
    for index, encoded in enumerate(raw):
        try:
            r = decode(encoded)
        except odd:
            _add_dict_event(_value(encoded, index), index, events, other, checks)
            continue
        except (RecursionError, UnicodeDecodeError):
            _value(encoded, index)  # raises the TraceError that says which
            raise TraceError(f"event {index} cannot be read as JSON") from None
        if r.ph != "X":
            continue
        cat = r.cat
        if cat not in read:
            cat = legacy.get(cat, cat)
            if cat not in read:
                other[cat] += 1
                continue
        name = r.name
        ts, dur = r.ts, r.dur
        if len(name) > name_cap or ts is None or not -time_cap <= ts <= time_cap or dur is None \
                or not 0 <= dur <= time_cap:
            ts = checks.time(ts, "ts", index, checks.name(name, "name", index))
            dur = checks.duration(dur, index, name)
        name = share(name, name)
        cat = share(cat, cat)
        pid, tid = share_id(r.pid, r.pid), share_id(r.tid, r.tid)
        a = r.args
        if a is None:
            append(Event(name, cat, ts, dur, pid, tid))
        else:
            ext = a.ext if a.ext is not None else a.ext_legacy
            for value, field in ((ext, "External id"), (a.correlation, "correlation"), (a.stream, "stream")):
                if value is not None and not -INT64 <= value < INT64:
                    checks.ident(value, field, index, name)
            append(Event(name, cat, ts, dur, pid, tid, ext, a.correlation, a.stream, a.grid, a.block, a.dims,
                          a.kernel_file if a.kernel_file is None else checks.path(a.kernel_file, index, name)))
    return events, other


def _value(encoded: Any, index: int) -> Any:
    """An event left encoded, as plain JSON values; a TraceError when its bytes are no JSON text."""
    assert trace_json is not None
    try:
        return trace_json.value(encoded)
    except RecursionError:
        raise TraceError(f"event {index} nests deeper than any trace event does") from None
    except (UnicodeDecodeError, trace_json.DecodeError):
        raise TraceError(f"event {index} holds bytes that are not UTF-8 JSON text") from None
