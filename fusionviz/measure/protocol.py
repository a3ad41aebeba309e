"""The worker's protocol: the jobs a caller may send and what each answers, declared once as dataclasses.

A job travels as one JSON object (`encode_job`: its fields and its `op`), an answer as the JSON of its
reply dataclass (`encode_reply`); both sides rebuild them with `records.decode.decode`, which checks every
value against the declared types and bounds, as for a session file. No torch here: the caller's side
(app, CLI) imports this module, and only the worker imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec

from fusionviz.records.ceilings import Ceilings
from fusionviz.records.config import RunConfig, SweepRequest
from fusionviz.records.decode import Int64, decode
from fusionviz.records.session import Environment, ModeMemory, ModeRun, NaiveResult, Sweep, TimingProcess

Progress = Callable[[str], None]  # told each stage of a job as it starts ("default: compiling")


@dataclass(frozen=True)
class CellCounts:
    """Where a grid's cells stand: done, running (on Ray: the pending cells the cluster has room for), queued."""

    done: int
    running: int
    queued: int

    @property
    def total(self) -> int:
        return self.done + self.running + self.queued


CellProgress = Callable[[CellCounts], None]  # told whenever a grid's cell starts or ends


@dataclass(frozen=True)
class DevicesJob:
    """Which devices the worker sees: each GPU, then the CPU."""

    op: ClassVar[str] = "devices"


@dataclass(frozen=True)
class ModeJob:
    """Measure one mode of a configuration (compile, warm-up, timing, profiling)."""

    config: RunConfig
    mode: str
    op: ClassVar[str] = "mode"


@dataclass(frozen=True)
class TimingJob:
    """Time `modes` (each already captured) in interleaved rounds; `index` numbers the timing process. With
    `memory_mode`, that mode runs first in the fresh process and its memory is measured before any other mode
    runs there (`measure.memory`)."""

    config: RunConfig
    modes: tuple[str, ...]
    index: Int64
    memory_mode: str = ""
    op: ClassVar[str] = "timing"


@dataclass(frozen=True)
class MemoryJob:
    """Measure one mode's memory: sent to a fresh worker, where no other mode has run."""

    config: RunConfig
    mode: str
    op: ClassVar[str] = "memory"


@dataclass(frozen=True)
class NaiveJob:
    """The naive snippet's measurement of one mode against eager (methodology page)."""

    config: RunConfig
    mode: str
    calls: Int64 = 200
    op: ClassVar[str] = "naive"


@dataclass(frozen=True)
class SweepJob:
    """A shape sweep: a schedule of sizes under compile strategies."""

    config: RunConfig
    request: SweepRequest
    op: ClassVar[str] = "sweep"


@dataclass(frozen=True)
class CeilingsJob:
    """The ceilings of the configuration's device (at its thread count): cached, or calibrated (`redo`: always)."""

    config: RunConfig
    redo: bool = False
    op: ClassVar[str] = "ceilings"


@dataclass(frozen=True)
class WarmJob:
    """Pay now what the first compile on `device` pays before its own work (a timing worker, while it waits);
    with `compile` False only the part that runs no C++ compiler and waits for nothing (imports, a first trace)."""

    device: str
    compile: bool = True
    op: ClassVar[str] = "warm"


Job = DevicesJob | ModeJob | TimingJob | MemoryJob | NaiveJob | SweepJob | CeilingsJob | WarmJob
JOBS: dict[str, type[Any]] = {job.op: job for job in (DevicesJob, ModeJob, TimingJob, MemoryJob, NaiveJob, SweepJob,
                                                       CeilingsJob, WarmJob)}


@dataclass
class Device:
    device: str  # "cuda:N" or "cpu"
    name: str


@dataclass
class DevicesReply:
    devices: list[Device]


@dataclass
class ModeReply:
    environment: Environment
    run: ModeRun


@dataclass
class TimingReply:
    timing: TimingProcess
    memory: ModeMemory | None = None  # the job's `memory_mode`'s


@dataclass
class MemoryReply:
    memory: ModeMemory


@dataclass
class NaiveReply:
    naive: NaiveResult


@dataclass
class SweepReply:
    environment: Environment
    sweep: Sweep


@dataclass
class CeilingsReply:
    ceilings: Ceilings


@dataclass
class WarmReply:
    seconds: float  # how long the warm-up took


Reply = DevicesReply | ModeReply | TimingReply | MemoryReply | NaiveReply | SweepReply | CeilingsReply | WarmReply


def encode_job(job: Job) -> dict[str, Any]:
    return {"op": job.op, **msgspec.to_builtins(job)}


def encode_reply(reply: Reply) -> Any:
    """A reply as JSON values (its kernel rows included)."""
    return msgspec.to_builtins(reply, enc_hook=str)  # torch.__version__ is a str subclass msgspec does not take


def decode_job(data: dict[str, Any]) -> Job:
    """Raises KeyError for an unknown `op` (a caller of another version: a bug, reported as such)."""
    job: Job = decode(JOBS[data["op"]], data)
    return job
