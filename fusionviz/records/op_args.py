"""What the profiler recorded of each op call's arguments, by External id: input shapes, dtypes and concrete
values (`record_shapes`), and the figures Inductor attaches to its Triton kernels' launching events when
`benchmark_kernel` is on (`kernel_num_gb`, `kernel_flop`). Read from a run's kept trace when bytes and FLOPs
are asked for, not when a trace opens: the timeline needs none of it."""

# No `from __future__ import annotations`: msgspec reads these annotations at run time.

from typing import TYPE_CHECKING, Any

import msgspec

from fusionviz.records.derived import derived

if TYPE_CHECKING:
    from fusionviz.records.session import ModeRun


class _Args(msgspec.Struct, gc=False):
    ext: Any = msgspec.field(default=None, name="External id")
    dims: Any = msgspec.field(default=None, name="Input Dims")
    types: Any = msgspec.field(default=None, name="Input type")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")
    kernel_num_gb: Any = None
    kernel_flop: Any = None


class _Event(msgspec.Struct, gc=False):
    cat: str = ""
    name: str = ""
    args: _Args | None = None


class _Trace(msgspec.Struct, gc=False):
    traceEvents: list[_Event] = msgspec.field(default_factory=list)


_DECODER = msgspec.json.Decoder(_Trace)


class OpArgs(msgspec.Struct, frozen=True):
    """One op call's recorded arguments; lists are empty where the trace has none (no `record_shapes`)."""

    name: str
    dims: list[Any]
    types: list[str]
    concrete: list[Any]
    num_bytes: int | None  # Inductor's kernel_num_gb in bytes (None where absent or 0)
    flop: int | None  # Inductor's kernel_flop (None where absent or 0)


def op_args(trace: bytes) -> dict[int, OpArgs]:
    """The host ops of a Chrome trace (JSON bytes, `ModeRun.chrome_trace`) by External id (the first op of each
    id: the one that launched the kernels sharing it). Values of unexpected types are left out, never guessed."""
    try:
        decoded = _DECODER.decode(trace)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}
    found: dict[int, OpArgs] = {}
    for e in decoded.traceEvents:
        a = e.args
        if a is None or e.cat not in ("cpu_op", "user_annotation") or type(a.ext) is not int or a.ext in found:
            continue
        found[a.ext] = OpArgs(
            name=e.name, dims=a.dims if isinstance(a.dims, list) else [],
            types=[t if isinstance(t, str) else "" for t in a.types] if isinstance(a.types, list) else [],
            concrete=a.concrete if isinstance(a.concrete, list) else [],
            num_bytes=_positive(a.kernel_num_gb, 1e9), flop=_positive(a.kernel_flop, 1))
    return found


def _positive(value: Any, scale: float) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e30:
        return round(value * scale)
    return None


@derived
def run_op_args(run: "ModeRun") -> dict[int, OpArgs]:
    """`op_args` of a run's kept trace (empty where none was kept), read once per run: the costs, the bytes
    view and the CUDA-graph coverage each ask for it."""
    raw = run.chrome_trace()
    return op_args(raw) if raw else {}
