"""What a mode costs in memory, measured in a fresh process where it runs first. Runs in the worker (imports torch).

In one process a later mode's figures lie: the caching allocator still holds the earlier mode's freed blocks (a
peak read against them came out negative on the H200), and a graph tree's pool stays. So each mode is measured
in a process of its own, before any other mode runs there: a timing process measures one mode first
(`timing.time_modes`), and a mode no timing process took gets a process of its own (`measure`).

Figures are counted from the moment the model is on the device and its inputs are not yet made (`harness.prepare`'s
`before_inputs`), so the parameters are never counted. On a GPU they come from the caching allocator's statistics;
on the CPU, which keeps none, from the profiler's memory events (`profile_memory=True`), whose running total over
windows that follow each other from that moment is the allocated level: the inputs, then the first call and the
warm-up, then the steady calls. `records.session.ModeMemory` defines each figure.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from fusionviz.measure.harness import (
    grad_mode,
    mode_step,
    prepare,
    reset_dynamo,
    sync,
    variant_settings,
    warm_until_steady,
)
from fusionviz.measure.protocol import Progress
from fusionviz.measure.provenance import tracking
from fusionviz.records.config import GRAPHED_EAGER, RunConfig
from fusionviz.records.memory_events import memory_events
from fusionviz.records.session import MemoryEvent, ModeMemory, SavedForBackward

STEADY_CALLS = 5  # calls whose peak is taken: every call of a steady mode allocates alike
ITERATION = "fusionviz.memory.iteration"  # the range around the profiled iteration of the timeline
SNAPSHOT_ENTRIES = 20_000  # the allocator history kept for one iteration, at most
SNAPSHOT_FRAMES = 8  # Python frames kept per history entry: the user's line and the generated wrapper's


class MemoryProbe:
    """Reads one mode's memory as the process goes: `before_inputs` (given to `harness.prepare`), then `first_calls`
    (which compiles and warms the mode), then `finish`. Holds a profiler session open between them on the CPU."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self._profiler: torch.profiler.profile | None = None
        self._base_allocated = 0
        self._base_reserved = 0
        self._inputs_net = 0
        self._pool = 0
        self.inputs_bytes = 0

    def before_inputs(self) -> None:
        """The baseline: the model is on the device, no input is made yet."""
        if self.cuda:
            sync(self.device)
            self._base_allocated = torch.cuda.memory_allocated(self.device)
            self._base_reserved = torch.cuda.memory_reserved(self.device)
        else:
            self._profiler = _memory_profiler()
            self._profiler.start()

    def first_calls(self, config: RunConfig, mode: str, model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]
                    ) -> Callable[[], None]:
        """Make the mode's step, call it once (compiling; under `provenance.tracking`, as the capture compiled it,
        so that Inductor's cache hits) and warm it up until steady; returns the step."""
        self.inputs_bytes = _storage_bytes(inputs)
        if self.cuda:
            sync(self.device)
            before_first = torch.cuda.memory_allocated(self.device)
        else:
            self._inputs_net = self._window_net()
            self._profiler = _memory_profiler()
            self._profiler.start()
        step = mode_step(config, mode, model, inputs, self.device)
        with variant_settings(mode):  # a variant's settings while it compiles
            with tracking(model):
                step()
                sync(self.device)
            warm_until_steady(step, self.device, config.warmup_calls)
        sync(self.device)
        if self.cuda:
            self._pool = torch.cuda.memory_allocated(self.device) - before_first
        else:
            self._pool = self._window_net()
        return step

    def finish(self, config: RunConfig, mode: str, step: Callable[[], None], model: torch.nn.Module,
               inputs: tuple[torch.Tensor, ...], process: int) -> ModeMemory:
        """The steady calls' figures, one iteration's timeline, the GPU's allocator history and, for a train pass,
        what one forward saved for its backward."""
        if self.cuda:
            figures = self._steady_cuda(step)
        else:
            figures = self._steady_cpu(step)
        timeline, dropped = _timeline(step, self.device)
        saved = None
        if config.pass_ == "train" and mode != GRAPHED_EAGER:  # a graph replayed whole runs no autograd to hook
            with contextlib.suppress(RuntimeError):  # a mode that refuses the hooks keeps its other figures
                saved = saved_for_backward(step, model, inputs)
        return ModeMemory(
            **figures, inputs_bytes=self.inputs_bytes, timeline=timeline, timeline_dropped=dropped,
            timeline_start_bytes=figures["held_bytes"], process=process, saved=saved,
            snapshot_gz_b64=_snapshot(step, self.device) if self.cuda else None)

    def _steady_cuda(self, step: Callable[[], None]) -> dict[str, Any]:
        index = torch.cuda.current_device() if self.device.index is None else self.device.index
        graph_pool = sum(int(s.get("total_size", 0)) for s in torch.cuda.memory._snapshot(self.device)["segments"]
                         if _private(s) and s.get("device", index) == index)
        torch.cuda.reset_peak_memory_stats(self.device)
        before = torch.cuda.memory_allocated(self.device)
        for _ in range(STEADY_CALLS):
            step()
        sync(self.device)
        return {"method": "cuda_allocator",
                "peak_allocated_bytes": torch.cuda.max_memory_allocated(self.device) - before,
                "peak_reserved_bytes": torch.cuda.max_memory_reserved(self.device) - self._base_reserved,
                "held_bytes": torch.cuda.memory_allocated(self.device) - self._base_allocated,
                "pool_bytes": self._pool, "graph_pool_bytes": graph_pool}

    def _steady_cpu(self, step: Callable[[], None]) -> dict[str, Any]:
        self._profiler = _memory_profiler()
        self._profiler.start()
        for _ in range(STEADY_CALLS):
            step()
        sizes = self._window_sizes()
        peak = running = 0
        for size in sizes:
            running += size
            peak = max(peak, running)
        return {"method": "profiler_memory_events", "peak_allocated_bytes": peak, "peak_reserved_bytes": None,
                "held_bytes": self._inputs_net + self._pool + running, "pool_bytes": self._pool,
                "graph_pool_bytes": None}

    def _window_net(self) -> int:
        return sum(self._window_sizes())

    def _window_sizes(self) -> list[int]:
        """Stop the open profiler session and give its memory events' sizes in order."""
        assert self._profiler is not None
        self._profiler.stop()
        trace = _exported(self._profiler)
        self._profiler = None
        events, _ = memory_events(trace, _name(self.device), None)
        return [e.bytes for e in events]


def measure(config: RunConfig, mode: str, progress: Progress, process: int = -1) -> ModeMemory:
    """`mode`'s memory in this process, which must not have run another mode: a process of its own."""
    reset_dynamo()
    probe = MemoryProbe(torch.device(config.device))
    model, inputs, _ = prepare(config, before_inputs=probe.before_inputs)
    with grad_mode(config):
        progress(f"{mode}: memory, in a process of its own")
        step = probe.first_calls(config, mode, model, inputs)
        return probe.finish(config, mode, step, model, inputs, process)


def saved_for_backward(step: Callable[[], None], model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]
                       ) -> SavedForBackward:
    """What one step's forward saved for its backward, each storage once (a view and its base are one block);
    activations are the saved storages that are neither a parameter nor an input."""
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.nbytes():
            saved.setdefault(storage.data_ptr(), storage.nbytes())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        step()
    owned = {t.untyped_storage().data_ptr() for t in (*model.parameters(), *model.buffers(), *inputs)}
    activations = {ptr: size for ptr, size in saved.items() if ptr not in owned}
    return SavedForBackward(bytes=sum(saved.values()), tensors=len(saved),
                            activation_bytes=sum(activations.values()), activations=len(activations))


def _memory_profiler() -> torch.profiler.profile:
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)


def _exported(profiler: torch.profiler.profile) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.json"
        profiler.export_chrome_trace(str(path))
        trace: dict[str, Any] = json.loads(path.read_text())
        return trace


def _storage_bytes(tensors: tuple[torch.Tensor, ...]) -> int:
    """The bytes of the tensors' storages, each once."""
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}.values())


def _name(device: torch.device) -> str:
    """"cpu" or "cuda:N", as the memory events name a device."""
    if device.type != "cuda":
        return "cpu"
    return f"cuda:{device.index if device.index is not None else torch.cuda.current_device()}"


def _timeline(step: Callable[[], None], device: torch.device) -> tuple[list[MemoryEvent], int]:
    """One steady iteration's memory events with the ops that made them (`records.memory_events`), from the level
    between calls, and how many were left out."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities, profile_memory=True) as profiler:
        with torch.profiler.record_function(f"{ITERATION}.before"):  # the first range's start-up (ms on the CPU)
            step()  # lands in a call before the one kept
            sync(device)
        with torch.profiler.record_function(ITERATION):
            step()
            sync(device)
    return memory_events(_exported(profiler), _name(device), ITERATION)


def _private(segment: dict[str, Any]) -> bool:
    """Whether an allocator segment belongs to a private pool (a CUDA graph's), not the default one (0, 0)."""
    pool = segment.get("segment_pool_id", (0, 0))
    return tuple(pool) != (0, 0)


def _snapshot(step: Callable[[], None], device: torch.device) -> str | None:
    """The allocator's history over one steady iteration as PyTorch's memory viewer reads it (`_snapshot()`:
    segments and device traces), trimmed to this device, SNAPSHOT_ENTRIES entries and SNAPSHOT_FRAMES frames each,
    as gzipped JSON; None where this torch cannot record one."""
    memory = torch.cuda.memory
    try:
        memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=SNAPSHOT_ENTRIES)
    except (RuntimeError, TypeError, AttributeError):
        return None
    try:
        step()
        sync(device)
        snapshot = memory._snapshot(device)
    except RuntimeError:
        return None
    finally:
        memory._record_memory_history(enabled=None)
    index = device.index if device.index is not None else torch.cuda.current_device()
    traces = snapshot.get("device_traces") or []
    trimmed = {
        "segments": [_trim_segment(s) for s in snapshot.get("segments", []) if s.get("device", index) == index],
        "device_traces": [[_trim_entry(e) for e in trace[-SNAPSHOT_ENTRIES:]] if i == index else []
                          for i, trace in enumerate(traces)],
    }
    return base64.b64encode(gzip.compress(json.dumps(trimmed, default=str).encode(), mtime=0)).decode()


def _frames(frames: Any, keep: int) -> list[dict[str, Any]]:
    return [{"filename": str(f.get("filename", "")), "line": int(f.get("line", 0)), "name": str(f.get("name", ""))}
            for f in (frames or [])[:keep] if isinstance(f, dict)]


def _trim_entry(entry: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {k: entry[k] for k in ("action", "addr", "size", "stream", "time_us", "device_free")
                            if k in entry}
    return {**kept, "frames": _frames(entry.get("frames"), SNAPSHOT_FRAMES)}


def _trim_segment(segment: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {k: segment[k] for k in ("device", "address", "total_size", "allocated_size", "active_size",
                                                    "requested_size", "stream", "segment_type", "segment_pool_id",
                                                    "is_expandable") if k in segment}
    blocks = [{**{k: b[k] for k in ("address", "size", "requested_size", "state") if k in b},
               "frames": _frames(b.get("frames"), 2)} for b in segment.get("blocks", [])]
    return {**kept, "frames": _frames(segment.get("frames"), 2), "blocks": blocks}
