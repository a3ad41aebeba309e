"""Whether the host or the device sets a mode's time per call: one rule (`classify`), one word for each answer
(`BoundKind`, defined in DEFINITIONS), and the one sentence every view, the verdict and `inspect` say it with.

The host's time per call is the timing loop's (`harness.timed_block`: how long the host took to enqueue a call),
a p10–p90 over every round of every process; the GPU's is the kernels' summed durations in the profiled
iterations. A host that is slower in some processes than in others (up to 1.6x on the H200: whole processes run
in a slow state) can be slower than the GPU in one process and faster in the next: the rule says "balanced" then,
as the verdict says "no clear difference" for a speedup interval that straddles 1. "Launch-bound" is not a class
of its own: a mode's host time cannot be split into launches and the rest (Python, guards, the CUDA-graph tree's
bookkeeping) from the timing, so a launch-bound mode is host-bound here; the ladder's eager → eager as one CUDA
graph step measures what the launches cost."""

from __future__ import annotations

from typing import Literal

import msgspec

from fusionviz.analysis.headline import HEADLINE_CHARS, Headline, micros
from fusionviz.analysis.kernel_costs import gpu_time_us
from fusionviz.analysis.trace_stats import percentile
from fusionviz.records.session import ModeRun, Session

BoundKind = Literal["host-bound", "device-bound", "balanced"]

# The plain-English definition of each class (docs/methodology.md's Definitions say the same).
DEFINITIONS: dict[BoundKind, str] = {
    "host-bound": "the host's work per call (Python, guards, launches) takes longer than the GPU's kernels in "
                  "nearly every round, so the GPU waits for the host: less host work per call (a CUDA graph) "
                  "speeds it up, shorter kernels do not",
    "device-bound": "the GPU's kernels take longer than the host's work per call in nearly every round, so the "
                    "host waits for the GPU: only shorter kernels (fusion, a better GEMM) speed it up",
    "balanced": "the host's work per call is longer than the GPU's kernels in some rounds and shorter in others, "
                "so neither side alone sets the time per call",
}
# Each in a few words, for a caption's line of mechanism.
SHORT: dict[BoundKind, str] = {
    "host-bound": "the GPU waits for the host's work per call",
    "device-bound": "the host waits for the GPU's kernels",
    "balanced": "neither the host nor the GPU alone sets the time per call",
}
KINDS: tuple[BoundKind, ...] = tuple(DEFINITIONS)
QUANTILES = (10, 50, 90)  # as the timing's intervals


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    """p10, median and p90 of `values` (numpy's interpolation, without importing numpy: a plain trace's `inspect`
    classifies its run without it)."""
    ordered = sorted(values)
    low, median, high = (percentile(ordered, q) for q in QUANTILES)
    return low, median, high


class Bound(msgspec.Struct, frozen=True):
    """One mode's host time per call against its GPU time (µs), and which of them sets the call (`kind`; None on
    the CPU, where the host runs the kernels itself). `host_us` is the median, `host_low`–`host_high` the
    p10–p90 of the host's time per call over every timing round (`host_from` "timing"); in sessions recorded
    before it was kept and in plain traces, of when the host finished launching each profiled iteration's work
    (`host_from` "profile": the profiler's overhead included, which overstates it), cut to the timed call's
    median where the session timed one (`host_from` "capped": the host cannot take longer to enqueue a call
    than the call takes). `gpu_us` is the kernels' summed durations per profiled iteration."""

    mode: str
    host_us: float
    gpu_us: float
    kind: BoundKind | None
    host_from: Literal["timing", "profile", "capped"] = "timing"
    host_low: float = 0.0
    host_high: float = 0.0


def classify(host_low: float, host_high: float, gpu_us: float, on_device: bool) -> BoundKind | None:
    """The one rule: host-bound when even the host's fast rounds (p10) take at least the GPU's time,
    device-bound when even its slow rounds (p90) take less, balanced in between; None with no device apart
    from the host (the CPU)."""
    if not on_device:
        return None
    if host_low >= gpu_us:
        return "host-bound"
    if host_high < gpu_us:
        return "device-bound"
    return "balanced"


def host_ends_us(run: ModeRun) -> list[float]:
    """When the host was done with each profiled iteration: the end of its last op, launch or compiled-region
    call, from the iteration's start."""
    ends: dict[int, float] = {}
    for r in run.cpu_ops:  # tens of thousands of rows in a real model's trace: a plain loop, no call per row
        if r.category in ("op", "launch", "region"):
            end = r.start_us + r.dur_us
            if end > ends.setdefault(r.iteration, 0.0):
                ends[r.iteration] = end
    return [float(end) for end in ends.values()]


def bounds(session: Session) -> dict[str, Bound]:
    """Each profiled mode's host and GPU time per call, and its class (`classify`)."""
    on_gpu = session.environment.device_kind == "cuda"
    timed, calls = _host_timing(session), _call_us(session)
    found = {}
    for run in session.runs:
        if run.ok and run.summary is not None:
            gpu = gpu_time_us(run)
            source: Literal["timing", "profile", "capped"] = "timing"
            if run.mode in timed:
                low, host, high = timed[run.mode]
            else:
                ends = host_ends_us(run) or [0.0]  # when the host was done with each iteration: one walk
                low, _, high = _quantiles(ends)
                host, source = sum(ends) / len(ends), "profile"
                call = calls.get(run.mode)
                if call is not None and high > call:
                    low, host, high, source = min(low, call), min(host, call), call, "capped"
            found[run.mode] = Bound(run.mode, host, gpu, classify(low, high, gpu, on_gpu), source, low, high)
    return found


def _call_us(session: Session) -> dict[str, float]:
    """Each timed mode's median µs per call: over every timing round of every process, else (schema 1) its own
    latency."""
    found = {mode: median for mode, (_, median, _) in _rounds_us(session, "rounds").items()}
    return found or {r.mode: r.latency.median_ms * 1e3 for r in session.runs if r.latency is not None}


def _host_timing(session: Session) -> dict[str, tuple[float, float, float]]:
    """Each mode's p10, median and p90 host µs per call over every timing round of every process that kept
    them."""
    return _rounds_us(session, "host_rounds")


def _rounds_us(session: Session, kept: Literal["rounds", "host_rounds"]) -> dict[str, tuple[float, float, float]]:
    """Each mode's p10, median and p90 µs per call over every round of every timing process that ran: of the
    call (`kept` "rounds") or of the host's part of it ("host_rounds")."""
    values: dict[str, list[float]] = {}
    for p in session.timing.processes if session.timing else []:
        if p.error is None:
            for round_ in getattr(p, kept):
                for mode, ms in round_.items():
                    values.setdefault(mode, []).append(ms * 1e3)
    return {mode: _quantiles(v) for mode, v in values.items()}


def bound_fields(b: Bound | None) -> dict[str, object] | None:
    """A mode's class as `inspect --json` gives it: {"kind", "host_us", "host_low_us", "host_high_us", "gpu_us",
    "host_from"} (`kind` null on the CPU); None for a run that was not profiled."""
    if b is None:
        return None
    return {"kind": b.kind, "host_us": b.host_us, "host_low_us": b.host_low, "host_high_us": b.host_high,
            "gpu_us": b.gpu_us, "host_from": b.host_from}


def bound_sentence(b: Bound, busy: float | None = None) -> str:
    """The one sentence that says a mode's class, with the two times it comes from (and how busy that keeps
    the GPU, `busy`, where given): "default is host-bound: 78.1 µs of host work per call against 39.9 µs of GPU
    time, so the GPU is busy 52% of the call." The CPU's modes have no class: that is said instead."""
    if b.kind is None:
        return f"{b.mode} runs on the CPU, which runs its kernels itself: no device waits for the host."
    per = {"timing": "per call", "profile": "per profiled iteration (the profiler's overhead included)",
           "capped": "per call (profiled, and cut to the timed call's length)"}[b.host_from]
    spread = (f" ({micros(b.host_low).removesuffix(' µs')}–{micros(b.host_high)}, p10–p90)"
              if b.kind == "balanced" and micros(b.host_low)[-2:] == micros(b.host_high)[-2:] else "")
    busy_words = f", so the GPU is busy {min(busy, 1.0):.0%} of the call" if busy is not None else ""
    if b.kind == "device-bound":
        return (f"{b.mode} is device-bound: {micros(b.gpu_us)} of GPU time {per} against {micros(b.host_us)} "
                f"of host work{busy_words}.")
    return (f"{b.mode} is {b.kind}: {micros(b.host_us)} of host work {per}{spread} against "
            f"{micros(b.gpu_us)} of GPU time{busy_words}.")


def bound_mechanism(b: Bound) -> str:
    """The class in one short sentence, for a headline's line of mechanism: "Host-bound: 78 µs of host work per
    call, 40 µs of GPU time." ("" on the CPU)."""
    if b.kind is None:
        return ""
    host, gpu = micros(b.host_us, read=True), micros(b.gpu_us, read=True)
    per = "per call" if b.host_from == "timing" else "per profiled call"
    if b.kind == "device-bound":
        return f"Device-bound: {gpu} of GPU time {per}, {host} of host work."
    return f"{b.kind.capitalize()}: {host} of host work {per}, {gpu} of GPU time."


def bound_headline(found: dict[str, Bound]) -> Headline:
    """The bound view's caption (`found`: `bounds`): the modes of the first class (host-bound, device-bound,
    balanced) that has any, in one line (the chart labels every mode's class), and what that class means; a
    sentence a mode in the details."""
    if not found:
        return Headline("No mode was profiled")
    if all(b.kind is None for b in found.values()):
        return Headline("On the CPU the host runs the kernels itself",
                        "There is no device to wait for: each mode's time is the CPU's own.")
    groups = {kind: [m for m, b in found.items() if b.kind == kind] for kind in KINDS}
    named = [kind for kind in KINDS if groups[kind]]
    meaning = f"{named[0].capitalize()} means {SHORT[named[0]]}."
    details = tuple(bound_sentence(b) for b in found.values())
    if len(named) == 1:
        return Headline(f"All modes are {named[0]}", meaning, details)
    # the first class that has modes leads, in one line on a slide; the chart labels every mode's class
    first = groups[named[0]]
    shown = next(n for n in range(len(first), 0, -1)
                 if len(_listed(named[0], first, n)) <= HEADLINE_CHARS or n == 1)
    return Headline(_listed(named[0], first, shown), meaning, details)


def _listed(kind: str, modes: list[str], shown: int) -> str:
    """"Host-bound: eager, default and 3 more": the first `shown` of `modes`, the rest counted."""
    more = f" and {len(modes) - shown} more" if shown < len(modes) else ""
    return f"{kind.capitalize()}: {', '.join(modes[:shown])}{more}"
