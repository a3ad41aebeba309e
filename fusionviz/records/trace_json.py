"""msgspec's decoder for a torch.profiler Chrome trace, reading only the fields the trace reader uses: a 30 MB
trace decodes in a fraction of the standard library's time and memory, since every other argument of every
event is skipped instead of built. Imported only where msgspec is installed (`trace_events.read_document`)."""

# No `from __future__ import annotations`: msgspec reads these annotations at run time.

from typing import Any

import msgspec


class Args(msgspec.Struct, gc=False):
    """The arguments read, typed as torch.profiler writes them: a value of another type makes the event fall
    back to the checked path (`trace_events._add_dict_event`), which says what is wrong when the event matters."""

    ext: int | None = msgspec.field(default=None, name="External id")
    ext_legacy: int | None = msgspec.field(default=None, name="external id")  # torch 1.x's spelling
    correlation: int | None = None
    stream: int | None = None
    grid: list[int] | None = None
    block: list[int] | None = None
    # left encoded (a view of its bytes): only the shapes of ops that launched kernels are ever decoded
    dims: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw, name="Input Dims")  # empty when absent
    kernel_file: str | None = None


class Event(msgspec.Struct, gc=False):
    ph: Any = None
    cat: str = ""
    name: str = ""
    ts: float | None = None
    dur: float | None = 0.0
    pid: int | str | None = None
    tid: int | str | None = None
    args: Args | None = None


class Top(msgspec.Struct, gc=False):
    """Any JSON object: a session's `kind` marker, and the trace's events left undecoded (each a view of its
    bytes), so that only one event at a time is built (`events`): the events of a 30 MB trace never all exist
    as objects at once. `distributedInfo` says which rank of a distributed job wrote the trace."""

    kind: Any = None
    traceEvents: Any = None
    distributedInfo: Any = None


class RawTop(msgspec.Struct, gc=False):
    kind: Any = None
    traceEvents: list[msgspec.Raw] | None = None
    distributedInfo: Any = None


_TOP = msgspec.json.Decoder(RawTop | list[msgspec.Raw])
_LOOSE = msgspec.json.Decoder(Top)
EVENT = msgspec.json.Decoder(Event)  # one event (`Event`); ValidationError when it is shaped otherwise

DecodeError = msgspec.DecodeError  # not JSON
ValidationError = msgspec.ValidationError  # JSON, but not an object or a list


def decode(raw: bytes) -> tuple[Any, list[msgspec.Raw] | None, Any]:
    """`(kind, events, distributedInfo)` of a JSON document: an object's `kind`, its `traceEvents` events and its
    `distributedInfo`, or a bare list of events (kind and distributedInfo None); the events still encoded (`event`
    decodes one). Raises DecodeError when it is not JSON, ValidationError when it is neither an object nor a list,
    or its traceEvents is not a list."""
    try:
        top = _TOP.decode(raw)
    except ValidationError:
        loose = _LOOSE.decode(raw)
        if loose.traceEvents is not None:
            raise  # traceEvents that is not a list: the standard library reads it, and the reader says so
        return loose.kind, None, loose.distributedInfo
    if isinstance(top, list):
        return None, top, None
    return top.kind, top.traceEvents, top.distributedInfo


def value(raw: msgspec.Raw) -> Any:
    """A value left encoded (`Args.dims`), decoded; None when it was absent."""
    return msgspec.json.decode(raw) if len(raw) else None
