"""The events of a torch.profiler Chrome trace, decoded and checked: the one place a trace's JSON is read and
its field types and ranges decided, before `trace` interprets the events (steps, launches, kernels).

msgspec decodes the whole document straight into `Event` Structs, reading only the fields used and checking
their types and bounds in C: no Python loop per event. Strict on what the analysis computes with (times,
durations, the ids that link events, names), lenient on what is only shown (`stream`, `grid`, `block`, `Input
Dims`: ROCm writes `"stream": "0x0"`, Triton `"grid": "grid(100,)"`), which `trace` reads or shows as given and
counts. A document the types refuse is read again one event at a time, so that an odd value in an event the
reader does not use is ignored, and one in an event it uses becomes a TraceError naming the event.
"""

# No `from __future__ import annotations`: msgspec reads these annotations at run time.

import operator
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Union

import msgspec

from fusionviz.errors import TraceError
from fusionviz.records.decode import DecodeError, Finite, Int64, clip, decode, shown
from fusionviz.records.limits import Limits, inflate, inflated
from fusionviz.records.session_file import read_json_bytes

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
RUNTIME_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver"})  # HIP calls of a ROCm trace appear here too
HOST_CATEGORIES = frozenset({"cpu_op", "user_annotation", "python_function"}) | RUNTIME_CATEGORIES
READ_CATEGORIES = HOST_CATEGORIES | DEVICE_CATEGORIES
# torch 1.x traces (2020–2022) named the categories differently.
LEGACY_CATEGORIES: dict[str, str] = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel",
                                     "Memcpy": "gpu_memcpy", "Memset": "gpu_memset", "Python": "python_function"}


class Args(msgspec.Struct, gc=False):
    """The arguments read. The ids that link events are checked; the display fields are taken in any form."""

    ext: Int64 | None = msgspec.field(default=None, name="External id")
    ext_legacy: Int64 | None = msgspec.field(default=None, name="external id")  # torch 1.x's spelling
    correlation: Int64 | None = None
    stream: Any = None  # an integer; ROCm writes hex text ("0x0")
    grid: Any = None  # [x, y, z]; Triton writes text ("grid(100,)")
    block: Any = None
    # left encoded (a view of its bytes): only the shapes of ops that launched kernels are ever decoded
    dims: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw, name="Input Dims")  # empty when absent
    kernel_file: str | None = None
    # The user's stack traces, where torch wrote them (display only, taken in any form: `stacks.stack_lines`):
    # torch._inductor.profiler's trace handler gives a kernel `stack`, a list of texts; FX's profiler metadata
    # (torch.profiler._utils.map_recorded_events_to_aten_ops_with_stack_trace) gives an op `stack_trace`, one text.
    stack: Any = None
    stack_trace: Any = None


class Event(msgspec.Struct, tag_field="ph", tag="X", kw_only=True, gc=False):
    """One complete event (`ph` "X") with the fields the reader uses, in today's spelling once read (torch 1.x
    categories mapped, no negative durations)."""

    cat: str = ""
    name: str = ""
    ts: Finite  # every profiler writes one; an event without is read on its own (`_one`)
    dur: Finite = 0.0
    pid: Int64 | str | None = None
    tid: Int64 | str | None = None
    args: Args | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur

    @property
    def ext(self) -> int | None:
        a = self.args
        return None if a is None else a.ext if a.ext is not None else a.ext_legacy

    @property
    def corr(self) -> int | None:
        return None if self.args is None else self.args.correlation


# Every other phase of the Chrome trace format, as an empty Struct: decoded without a field (flow arrows, metadata
# and instants are a third of a trace's events). An event of a phase not listed is read on its own (`_one`).
_OTHER_PHASES = tuple(msgspec.defstruct(f"Phase{ord(ph)}", [], tag_field="ph", tag=ph, gc=False)
                      for ph in "BEiIsftCbneNODPMVvRc()")
AnyEvent = Event | Union[_OTHER_PHASES]  # type: ignore[valid-type]  # noqa: UP007  # msgspec reads the union
_ANY_EVENTS = msgspec.json.Decoder(list[AnyEvent])
_RAW_EVENTS = msgspec.json.Decoder(list[msgspec.Raw])
_EVENT = msgspec.json.Decoder(Event)
_SHAPES = msgspec.json.Decoder(Any)


class _Document(msgspec.Struct, gc=False):
    """A JSON document with only what the reader needs: a session's `kind` marker, the events left encoded, and
    `distributedInfo`."""

    kind: Any = None
    events: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw, name="traceEvents")  # empty when absent
    distributed: Any = msgspec.field(default=None, name="distributedInfo")


# What msgspec raises for text that is no JSON: a string whose bytes are not UTF-8 raises UnicodeDecodeError.
_NOT_JSON = (msgspec.DecodeError, UnicodeDecodeError)
_DOCUMENT = msgspec.json.Decoder(_Document | list[msgspec.Raw])  # type: ignore[arg-type]


@dataclass
class TraceDocument:
    """A JSON document as the reader takes it: `kind` (a fusionviz session's marker); `events`, its complete events
    of the categories read (None when there is no `traceEvents` list), of `count` events in all; `other`, the
    other complete events' categories, counted (for the note on device work not read, and the error on a file
    that is no profiler trace); and `distributed`, the trace's `distributedInfo` as written (which rank of a job
    wrote it), unchecked."""

    kind: Any = None
    events: list[Event] | None = None
    count: int = 0
    other: Counter[str] = field(default_factory=Counter)
    distributed: Any = None
    shared: dict[Any, Any] = field(default_factory=dict, repr=False)  # while reading: one object per value
    shapes: dict[bytes, msgspec.Raw] = field(default_factory=dict, repr=False)


def read_trace(raw: bytes | bytearray, name: str, limits: Limits) -> TraceDocument:
    """A file's bytes, gzipped or not, as a TraceDocument; a gzipped trace is decoded part by part as it
    inflates, so that its text is never held whole (`_streamed`). Raises TraceError as `read_document`, and
    SessionFileError naming the file when it is not JSON or passes a cap."""
    if raw[:2] == b"\x1f\x8b":
        document = _streamed(inflated(raw, name, limits))
        if document is not None:
            return document
    text = inflate(raw, name, limits)
    try:
        return read_document(text)
    except _NOT_JSON:  # NaN or 1e400, which the standard library reads, or no JSON: it says what
        return from_values(read_json_bytes(text, name))


def read_document(text: bytes | bytearray) -> TraceDocument:
    """JSON text (not gzipped) as a TraceDocument: an object's `kind`, `traceEvents` and `distributedInfo`, or a
    bare list of events. Raises ValueError (msgspec.DecodeError) when it is not JSON, and TraceError when it is
    neither an object nor a list, nests deeper than a parser's stack allows, or holds an event the reader uses
    with a value it cannot take."""
    try:
        top = _DOCUMENT.decode(text)
    except msgspec.ValidationError:
        raise TraceError("this is not a Chrome trace: the JSON is neither an object nor a list") from None
    except RecursionError:
        raise TraceError("this JSON nests deeper than any trace or session does (thousands of levels)") from None
    if isinstance(top, list):
        document, encoded = TraceDocument(), b"[" + b",".join(top) + b"]"
    else:
        document = TraceDocument(kind=top.kind, distributed=top.distributed)
        if not len(top.events) or bytes(top.events) == b"null":
            return document
        encoded = top.events
    document.events = []
    _read(encoded, document)
    return document


def from_values(data: Any) -> TraceDocument:
    """JSON values already loaded (an object or a list), as read_document reads their text."""
    try:
        return read_document(msgspec.json.encode(data))
    except msgspec.EncodeError as exc:
        raise TraceError(f"this is not a Chrome trace: {exc}") from None


_EVENTS_AT = re.compile(rb'"traceEvents"\s*:\s*\[')
_HEAD_BYTES = 4 << 20  # Kineto writes its events after a few KB of device properties
_SPACES_THEN_BRACE = re.compile(rb"[ \t\r\n]*\{")
_CANDIDATES = 64  # `},` places looked at per part for the last boundary between two events
# Bytes before a new part searched again for a boundary that spans both; a longer run of spaces between two
# events only delays the cut.
_STRADDLE = 4096
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _streamed(parts: Iterator[bytes | bytearray]) -> TraceDocument | None:
    """A trace object decoded as its text comes in: the events in batches cut between two events, each batch
    let go once read, and the rest of the document (`kind`, `distributedInfo`) read around an empty event list at
    the end. None when the text is not shaped so (a session, a bare list of events, or a batch that is no JSON
    because a cut fell where it should not): the caller reads it whole."""
    window = bytearray()
    head: bytes | None = None
    document = TraceDocument(events=[])
    for part in parts:
        searched = max(0, len(window) - _STRADDLE)  # the window before it held no boundary
        window += part
        if head is None:
            found = _EVENTS_AT.search(window, max(0, len(window) - len(part) - 64))
            if found is None:
                if len(window) > _HEAD_BYTES:
                    return None  # no trace's events this far in: a session, or a trace of another shape
                continue
            head = bytes(window[:found.end() - 1])
            del window[:found.end()]
            searched = 0
        cut = _between(window, searched)
        if cut is not None:
            try:
                _read(b"[" + window[:cut[0] + 1] + b"]", document)
            except _NOT_JSON:
                return None
            del window[:cut[1]]
    if head is None:
        return None
    rest = b"[" + window
    try:
        _RAW_EVENTS.decode(rest)
        return None  # the array ends the text: no object around it
    except msgspec.DecodeError as exc:
        trailing = _TRAILING.search(str(exc))
        if trailing is None:
            return None
        end = int(trailing.group(1)) - 1  # msgspec counts from 1
    except UnicodeDecodeError:
        return None
    try:
        _read(rest[:end], document)
        top = _DOCUMENT.decode(head + b"[]" + rest[end:])
    except _NOT_JSON:
        return None
    if isinstance(top, list):
        return None
    document.kind, document.distributed = top.kind, top.distributed
    return document


def _between(window: bytearray, start: int) -> tuple[int, int] | None:
    """The last place in `window[start:]` between two events (`},` then a `{`): the index of the `}` and of the
    `{`, or None. Searched from the end with `rfind` (a C scan), at most _CANDIDATES places: in a trace the last
    boundary is among the last few; in a bomb's text (one giant event) a part costs one scan, not one step per
    byte. A boundary missed (`} ,`, or beyond the candidates) only delays the cut: the rest is read whole."""
    end = len(window)
    for _ in range(_CANDIDATES):
        close = window.rfind(b"},", start, end)
        if close < 0:
            return None
        brace = _SPACES_THEN_BRACE.match(window, close + 2)
        if brace is not None:
            return close, brace.end() - 1
        end = close + 1
    return None


def _read(array: Any, document: TraceDocument) -> None:
    """A JSON array of events into `document`: typed all at once, or, where the types refuse one, one at a
    time. Only the complete events of the categories read are kept, in today's spelling, their `Input Dims`
    copied off the text so that the text can go. Raises msgspec.DecodeError when `array` is no JSON."""
    offset = document.count
    try:
        batch: list[Any] = _ANY_EVENTS.decode(array)
    except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):  # the event at fault says which
        try:
            encoded = _RAW_EVENTS.decode(array)
        except msgspec.ValidationError:
            raise TraceError("this is not a Chrome trace: its \"traceEvents\" is not a list") from None
        batch = [_one(e, offset + i) for i, e in enumerate(encoded)]
    document.count += len(batch)
    # One pass: the complete events of the categories read, each sharing one object per distinct name, category,
    # thread and shapes (tens of thousands of events share a few hundred); torch 1.x's categories renamed and
    # kept after the rest (`trace` orders events by time where order matters).
    read: list[Event] = []
    legacy: list[Event] = []
    share, shapes, other = document.shared.setdefault, document.shapes, document.other
    for e in batch:
        if e.__class__ is not Event:
            continue
        cat = e.cat
        if cat not in READ_CATEGORIES:
            cat = LEGACY_CATEGORIES.get(cat, cat)
            if cat not in READ_CATEGORIES:
                other[cat] += 1
                continue
            legacy.append(e)
        else:
            read.append(e)
        e.name, e.cat, e.tid = share(e.name, e.name), share(cat, cat), share(e.tid, e.tid)
        a = e.args
        if a is not None and len(a.dims):
            text = bytes(a.dims)
            a.dims = shapes.get(text) or shapes.setdefault(text, msgspec.Raw(text))
    read += legacy
    assert document.events is not None
    document.events += read


def _one(encoded: msgspec.Raw, index: int) -> Event | None:
    """One event, read on its own: None when the reader does not use it (not a complete event, or of a category
    not read); with a duration of null read as 0; else a TraceError that says what is wrong."""
    try:
        return _EVENT.decode(encoded)
    except (msgspec.ValidationError, UnicodeDecodeError, RecursionError):
        pass
    try:
        value = msgspec.json.decode(encoded)
    except RecursionError:
        raise TraceError(f"event {index} nests deeper than any trace event does") from None
    except (msgspec.DecodeError, UnicodeDecodeError):
        raise TraceError(f"event {index} holds bytes that are not UTF-8 JSON text") from None
    if not isinstance(value, dict):
        raise TraceError(f"event {index} is a {type(value).__name__}, not an object: this is no Chrome trace")
    cat = value.get("cat", "")
    if value.get("ph") != "X" or type(cat) is not str or LEGACY_CATEGORIES.get(cat, cat) not in READ_CATEGORIES:
        return None
    name = value.get("name")
    label = f" ({clip(name, 60)})" if isinstance(name, str) and name else ""
    if not isinstance(value.get("args", {}), dict | None):
        raise TraceError(f"event {index}{label} has args of type {type(value['args']).__name__}, not an object")
    if value.get("dur", 0) is None:
        value["dur"] = 0.0
    try:
        return decode(Event, value)
    except DecodeError as exc:
        raise TraceError(f"event {index}{label} has {exc}") from None


_NAME = operator.attrgetter("name")
_PID = operator.attrgetter("pid")
_TID = operator.attrgetter("tid")
_DUR = operator.attrgetter("dur")


def complete_events(document: TraceDocument, limits: Limits) -> tuple[list[Event], Counter[str], int]:
    """The document's read events; the other complete events' categories, counted; and how many read events had
    a negative duration (profilers write one for an event cut off at the trace's end: read as 0, and reported).
    Raises TraceError (SessionFileError for a cap) on what cannot be read."""
    events = document.events
    if events is None:
        raise TraceError("this is not a Chrome trace: there is no \"traceEvents\" list at the top")
    if document.count > limits.events:
        raise limits.refusal("events", f"this trace holds {document.count:,} events")
    if not events:
        found = ", ".join(sorted(document.other)[:8]) or "none"
        raise TraceError("this Chrome trace holds no torch.profiler events (no cpu_op, kernel or runtime events; "
                         f"its categories: {found})")
    _check_names(events, limits)
    negative = 0
    if min(map(_DUR, events)) < 0:
        for e in events:
            if e.dur < 0:
                e.dur = 0.0
                negative += 1
    return events, document.other, negative


def _check_names(events: list[Event], limits: Limits) -> None:
    """Names, thread and process names and kernel files within the name cap."""
    cap = limits.name_chars
    texts = {t for t in set(map(_PID, events)) | set(map(_TID, events)) if type(t) is str}
    texts.update(e.args.kernel_file for e in events if e.args is not None and e.args.kernel_file)
    if max(map(len, map(_NAME, events))) <= cap and all(len(t) <= cap for t in texts):
        return
    for e in events:
        path = e.args.kernel_file if e.args is not None else None
        for field_name, value in (("name", e.name), ("pid", e.pid), ("tid", e.tid), ("kernel_file", path)):
            if type(value) is str and len(value) > cap:
                raise limits.refusal("name_chars", f"an event ({clip(e.name, 60)}) has a {field_name} of "
                                                   f"{len(value):,} characters")


def shapes(dims: msgspec.Raw) -> tuple[Any, bool]:
    """An op's `Input Dims`, decoded (only ops that launched kernels are asked for): the list of shapes, and
    False; or, in any other form, the value as text and True (display only: shown as given, and counted)."""
    if not len(dims):
        return None, False
    try:
        value = _SHAPES.decode(dims)
    except RecursionError:
        return "(nested too deep to show)", True
    if value is None or type(value) is list:
        return value, False
    return clip(value, 120) if type(value) is str else shown(value), True
