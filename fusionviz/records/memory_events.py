"""The profiler's memory events of one profiled window, in order, each with the op or kernel that made its block
(a free with the op that made the block it frees, so that a block's bytes stay with one op from its allocation to
its free).

torch.profiler with `profile_memory=True` writes every allocation and free of the caching allocator (a GPU's) or
of the CPU's allocator as an instant event named `[memory]` (`args`: `Bytes`, negative for a free, `Device
Type` 0 for the CPU and 1 for CUDA, `Device Id`, `Addr`), on the thread that called the allocator. The op that
made it is the innermost op around it on that thread; an allocation op (`aten::empty_strided`) is passed over for
the op that called it, and an allocation made by Inductor's generated code between its kernels (inside a
compiled graph's call, outside any op) is named after the next kernel the graph starts: the one that writes the
buffer. Plain data in, plain records out: the worker reads its own profile with it, and it runs without torch.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import msgspec

from fusionviz.records.session import MemoryEvent

MAX_EVENTS = 20_000  # one iteration of a large model allocates thousands of blocks; beyond this they are counted
MEMORY = "[memory]"
BEFORE = "before the window"  # a block freed in the window but made before it
DEVICE_TYPES = {"cpu": 0, "cuda": 1}
# Ops that only allocate: the op that called them made the block.
ALLOCATING = frozenset(f"aten::{name}" for name in (
    "empty", "empty_strided", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "new_empty", "new_empty_strided", "new_zeros", "resize_", "to", "_to_copy", "contiguous", "clone",
    "empty_permuted", "detach", "view", "reshape", "as_strided", "lift_fresh"))
# What a compiled graph's call and the profiler's own ranges are called: an allocation directly inside one was
# made by generated code, for the kernel that comes next.
_REGION = re.compile(r"^(?:## Call CompiledFxGraph|Torch-Compiled Region|TorchDynamo Cache Lookup|CompiledFunction"
                     r"|ProfilerStep|PyTorch Profiler|Pregraph bytecode|AOTDispatcher|fusionviz\.|"
                     r"## Call |autograd::engine)")
_GRAPH_PREFIX = re.compile(r"^graph_\d+_")


class _Op(msgspec.Struct, frozen=True):
    start: float
    end: float
    name: str
    depth: int


def memory_events(trace: dict[str, Any], device: str, window: str | None = None
                  ) -> tuple[list[MemoryEvent], int]:
    """The memory events of `device` ("cpu", "cuda:N") in the trace, in time order, from the start of the range
    named `window` (a `record_function` around the iteration; the whole trace where None or absent), each with its
    op; and how many were left out beyond MAX_EVENTS."""
    kind, _, index = device.partition(":")
    device_type = DEVICE_TYPES.get(kind, 0)
    device_id = int(index) if index.isdigit() else (0 if kind == "cuda" else -1)
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
    start, end = _window(events, window)
    ops: dict[tuple[Any, Any], list[_Op]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "python_function") \
                and isinstance(e.get("ts"), int | float):
            ops.setdefault((e.get("pid"), e.get("tid")), []).append(
                _Op(float(e["ts"]), float(e["ts"]) + float(e.get("dur") or 0), str(e.get("name", "")), 0))
    nested = {thread: _nest(spans) for thread, spans in ops.items()}
    found: list[tuple[float, int, int, Any, Any, Any]] = []
    for order, e in enumerate(events):
        args = e.get("args") if e.get("name") == MEMORY else None
        if not isinstance(args, dict) or not isinstance(e.get("ts"), int | float):
            continue
        if args.get("Device Type") != device_type or (device_type and args.get("Device Id") != device_id):
            continue
        size = args.get("Bytes")
        ts = float(e["ts"])
        if type(size) is not int or size == 0 or not start <= ts <= end:
            continue
        found.append((ts, order, size, args.get("Addr"), e.get("pid"), e.get("tid")))
    found.sort(key=lambda f: f[:2])
    made: dict[Any, str] = {}  # the op that made each live block, by address
    said = []
    for ts, _, size, addr, pid, tid in found[:MAX_EVENTS]:
        if size > 0:
            made[addr] = op = _maker(nested.get((pid, tid), []), ts)
        else:
            op = made.pop(addr, BEFORE)
        said.append(MemoryEvent(t_us=ts - start, bytes=size, op=op))
    return said, len(found) - len(said)


def _window(events: list[dict[str, Any]], name: str | None) -> tuple[float, float]:
    """The span of the range called `name`, else of everything."""
    for e in events:
        if name is not None and e.get("name") == name and e.get("ph") == "X" and isinstance(e.get("ts"), int | float):
            return float(e["ts"]), float(e["ts"]) + float(e.get("dur") or 0)
    times = [float(e["ts"]) for e in events if isinstance(e.get("ts"), int | float)]
    return (min(times), max(times)) if times else (0.0, 0.0)


def _nest(spans: list[_Op]) -> list[_Op]:
    """A thread's ops by start, each with its depth (ops of one thread nest)."""
    ordered = sorted(spans, key=lambda s: (s.start, -s.end))
    stack: list[_Op] = []
    out = []
    for span in ordered:
        while stack and stack[-1].end < span.start:
            stack.pop()
        out.append(_Op(span.start, span.end, span.name, len(stack)))
        stack.append(span)
    return out


def _maker(spans: list[_Op], ts: float) -> str:
    """The op that made a block at `ts`: the innermost op around it that does not only allocate; inside a region
    (a compiled graph's call) and no op, the first op or kernel that starts after it in that region."""
    starts = [s.start for s in spans]
    around = [s for s in spans[:bisect.bisect_right(starts, ts)] if s.end >= ts]
    around.sort(key=lambda s: s.depth)
    named = [s for s in around if s.name not in ALLOCATING]
    if named and not _REGION.match(named[-1].name):
        return _short(named[-1].name)
    region = named[-1] if named else None
    if region is not None:
        after = [s for s in spans[bisect.bisect_left(starts, ts):]
                 if s.start <= region.end and s.depth > region.depth and not _REGION.match(s.name)
                 and s.name not in ALLOCATING]
        if after:
            return _short(after[0].name)
    return ""


def _short(name: str) -> str:
    """An op's or kernel's name without the compiled graph's number Inductor's C++ kernels carry."""
    return _GRAPH_PREFIX.sub("", name)
