"""What compiling could save, estimated from an eager trace alone, before anyone compiles; shown beside what the
session measured, so that a user sees how good the estimate is.

Two mechanisms, each estimated on its own:
- fusion: chains of memory-bound kernels (elementwise, reductions, norms) between library GEMMs. A trace names
  no tensors, so a chain is taken as one path of data: fused, it reads what its first kernel reads and writes what
  its last one writes, and every intermediate stays on chip; the bytes saved cost the time they took at the
  chain's own achieved bandwidth;
- CUDA graphs: the time eager's call is not running kernels (its timed latency less its kernel time: the host's
  gaps, which a graph's replay closes), leaving the kernels' own time.
Estimates per mode: eager as one CUDA graph = eager's kernel time; default = eager's latency less the fusion saving
(launched from Python, the gaps stay); reduce-overhead = eager's kernel time less the fusion saving.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.analysis.headline import Headline, micros, size_words
from fusionviz.analysis.kernel_costs import own_costs
from fusionviz.analysis.op_costs import Cost, op_kind
from fusionviz.analysis.timing import latency_estimates
from fusionviz.analysis.trace_stats import busy_time
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.kernels import KernelRow
from fusionviz.records.session import ModeRun, Session

FUSABLE = frozenset({"elementwise", "reduction", "norm"})


@dataclass(frozen=True)
class Chain:
    """Consecutive memory-bound kernels of one iteration that one generated kernel could compute."""

    kernels: list[str]
    time_us: float
    bytes_moved: int
    saved_bytes: int  # what the intermediates' round trips cost: the chain's bytes less its first read and last write

    @property
    def saved_us(self) -> float:
        return self.time_us * self.saved_bytes / self.bytes_moved if self.bytes_moved else 0.0


@dataclass(frozen=True)
class WhatIf:
    """The estimate from eager's representative iteration, and per mode the estimated and measured latency (µs;
    measured None where that mode was not timed)."""

    chains: list[Chain]
    kernel_time_us: float
    idle_us: float  # eager's call less its kernel time: what a CUDA graph would close
    estimates_us: dict[str, float]
    measured_us: dict[str, float | None]

    @property
    def saved_bytes(self) -> int:
        return sum(c.saved_bytes for c in self.chains)

    @property
    def fusion_saving_us(self) -> float:
        return sum(c.saved_us for c in self.chains)


def fusable_chains(run: ModeRun) -> list[Chain]:
    """Runs of two or more fusable kernels in launch order in the representative iteration, each kernel's bytes
    known (a kernel of unknown bytes, a GEMM or a copy ends a chain)."""
    if run.summary is None:
        return []
    iteration = run.summary.representative_iteration
    rows = sorted(((r, c) for r, c in zip(run.kernels, own_costs(run), strict=True) if r.iteration == iteration
                   and r.kernel_class != "memory"), key=lambda rc: rc[0].start_us)
    chains: list[Chain] = []
    current: list[tuple[KernelRow, Cost]] = []
    for row, cost in rows:
        if cost is not None and cost.written is not None and op_kind(row.launch_op or row.name) in FUSABLE:
            current.append((row, cost))
            continue
        _close(current, chains)
        current = []
    _close(current, chains)
    return chains


def _close(current: list[tuple[KernelRow, Cost]], chains: list[Chain]) -> None:
    if len(current) >= 2:
        chains.append(Chain(kernels=[r.short_name or r.name for r, _ in current],
                            time_us=sum(float(r.dur_us) for r, _ in current),
                            bytes_moved=sum(c.total for _, c in current),
                            saved_bytes=sum(c.total for _, c in current) - (current[0][1].read or 0)
                            - (current[-1][1].written or 0)))


def what_if(session: Session) -> WhatIf | None:
    """The estimate for the session's eager run (None without one), beside the measured latencies."""
    eager = session.run("eager")
    if eager is None or not eager.ok or eager.summary is None:
        return None
    chains = fusable_chains(eager)
    latencies = latency_estimates(session)
    busy = busy_time(eager)
    kernel_time, saving = busy.kernel_time_us, sum(c.saved_us for c in chains)
    eager_us = latencies["eager"].median * 1e3 if "eager" in latencies else busy.span_us
    idle = max(eager_us - kernel_time, 0.0)
    estimates = {GRAPHED_EAGER: kernel_time, "default": max(eager_us - saving, 0.0),
                 "reduce-overhead": max(kernel_time - saving, 0.0)}
    measured = {mode: latencies[mode].median * 1e3 if mode in latencies else None for mode in estimates}
    return WhatIf(chains, kernel_time, idle, estimates, measured)


def what_if_caption(found: WhatIf | None) -> str:
    """The estimate (`what_if`) in a sentence: the chains, the bytes they would keep on chip, the gaps a graph
    would close."""
    if found is None:
        return "No eager run to estimate from."
    kernels = sum(len(c.kernels) for c in found.chains)
    fusion = (f"{len(found.chains)} chain{'s' if len(found.chains) != 1 else ''} of {kernels} memory-bound kernels "
              f"could fuse, keeping {size_words(found.saved_bytes)} of round trips on chip (about "
              f"{found.fusion_saving_us:.1f} µs)") if found.chains else "no chain of memory-bound kernels to fuse"
    return (f"From eager's trace alone: {fusion}; a CUDA graph would close {found.idle_us:.1f} µs per call "
            f"of device idle time, leaving {found.kernel_time_us:.1f} µs of kernels.")


def what_if_headline(found: WhatIf | None) -> Headline:
    """The estimate (`what_if`) for reading aloud: what fusing eager's chains could save per call, what a CUDA
    graph would close; the caption's sentence (`what_if_caption`) in the details."""
    said = (what_if_caption(found),)
    if found is None:
        return Headline("No eager run to estimate from", "", said)
    graph = f"A CUDA graph would close {micros(found.idle_us, read=True)} of idle time per call."
    if not found.chains:
        return Headline("Eager has no chain of memory-bound kernels to fuse", graph, said)
    return Headline(f"Fusing eager's chains could save about {micros(found.fusion_saving_us, read=True)} per call",
                    graph, said)
