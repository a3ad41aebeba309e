"""Why a mode got faster or slower: the attribution ladder from eager to each compiled mode, and whether each
mode is bound by the host or by the device.

The main ladder climbs eager → eager as one CUDA graph (launches removed, the kernels unchanged) →
reduce-overhead (fusion and generated kernels, under graphs) → max-autotune (autotuned GEMM templates); beside
it, eager → default (fusion, launched from Python) → max-autotune-no-cudagraphs. A rung that did not run is
stepped over (the next step names both mechanisms). Each step's change in µs per call is taken round by round
(the two modes' blocks of one round, so the machine's drift cancels) and pooled over every timing process; the
profiled iterations split it, on a GPU, into the GPU's own work (kernel time) and the rest, on the host (Python,
guards, launches, the CUDA-graph tree's bookkeeping).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionviz.analysis.kernel_costs import gpu_time_us
from fusionviz.analysis.timing import QUANTILES, Estimate, latency_estimates, round_table
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.session import ModeRun, Session

MAIN_LADDER = ("eager", GRAPHED_EAGER, "reduce-overhead", "max-autotune")
SIDE_LADDER = ("eager", "default", "max-autotune-no-cudagraphs")
# what a step to each mode changes, besides the one before it
MECHANISMS: dict[str, str] = {
    GRAPHED_EAGER: "launch overhead removed (eager's kernels replayed as one CUDA graph)",
    "reduce-overhead": "fusion and generated kernels, under CUDA graphs",
    "max-autotune": "autotuned GEMM templates",
    "default": "fusion, launched from Python",
    "max-autotune-no-cudagraphs": "autotuned GEMM templates, launched from Python",
}


@dataclass(frozen=True)
class Bound:
    """One mode's host time per call against its GPU time (µs). `host_us` is the median over the timing rounds of
    the host's own time per call (the loop that enqueued the calls, `harness.timed_block`: `host_from` "timing");
    in sessions recorded before it was kept, when the host finished launching a profiled iteration's work
    (profiler overhead included, which overstates it: "profile"). `gpu_us` is the kernels' summed durations in
    the profiled iterations. Host-bound when the host's time is at or above the GPU's. On the CPU there is no
    device apart from the host: `host_bound` is None."""

    mode: str
    host_us: float
    gpu_us: float
    host_bound: bool | None
    host_from: str = "timing"


@dataclass(frozen=True)
class Delta:
    """A step's change of µs per call: the median and p10–p90 over paired rounds (widened to the spread between
    timing processes where a mode of the step is host-bound), and `widened` when it was. `share` is the same
    change as a fraction of eager's call in the same round (median, p10, p90; widened alike): where a step is
    host-bound its µs move with the host's speed, which differs between processes and machines, while its share of
    eager's call, itself host-bound, does not (sessions/README.md, "Host-bound steps across runs")."""

    median: float
    low: float
    high: float
    widened: bool
    share: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Step:
    """One rung of a ladder: `source` → `target`, its change, the GPU's share of it, and a sentence on what
    dominated. `not_applicable` (a reason) for a rung that could not run; its figures are None then."""

    step: str
    source: str
    target: str
    delta_us: Delta | None
    gpu_delta_us: float | None
    mechanism: str
    not_applicable: str | None = None


def host_time_us(run: ModeRun) -> float:
    """When the host was done with an iteration, on average: the end of its last op, launch or compiled-region
    call, from the iteration's start."""
    ends: dict[int, float] = {}
    for r in run.cpu_ops:
        if r.category in ("op", "launch", "region"):
            ends[r.iteration] = max(ends.get(r.iteration, 0.0), float(r.start_us + r.dur_us))
    return sum(ends.values()) / len(ends) if ends else 0.0


def bounds(session: Session) -> dict[str, Bound]:
    """Host-bound or device-bound, for every profiled mode."""
    on_gpu = session.environment.device_kind == "cuda"
    timed = _host_timing(session)
    found = {}
    for run in session.runs:
        if run.ok and run.summary is not None:
            host, gpu = timed.get(run.mode, host_time_us(run)), gpu_time_us(run)
            found[run.mode] = Bound(run.mode, host, gpu, host >= gpu if on_gpu else None,
                                    "timing" if run.mode in timed else "profile")
    return found


def _host_timing(session: Session) -> dict[str, float]:
    """Each mode's median host µs per call over every timing round of every process that kept them."""
    values: dict[str, list[float]] = {}
    for p in session.timing.processes if session.timing else []:
        if p.error is None:
            for round_ in p.host_rounds:
                for mode, ms in round_.items():
                    values.setdefault(mode, []).append(ms * 1e3)
    return {mode: float(np.median(v)) for mode, v in values.items()}


def ladder(session: Session) -> list[Step]:
    """The steps of both ladders whose ends were timed, then a not-applicable step for each rung that could not
    run (CUDA graphs on the CPU, a capture that failed), saying why."""
    timed = set(latency_estimates(session))
    modes = {r.mode: r for r in session.runs}
    found = bounds(session)
    steps = []
    for chain in (MAIN_LADDER, SIDE_LADDER):
        present = [m for m in chain if m in timed]
        for source, target in itertools.pairwise(present):
            skipped = chain[chain.index(source) + 1:chain.index(target) + 1]
            steps.append(_step(session, source, target, [MECHANISMS[m] for m in skipped], found))
    for chain in (MAIN_LADDER, SIDE_LADDER):
        for source, target in itertools.pairwise(chain):
            run = modes.get(target)
            if run is not None and run.status != "ok" and not any(s.target == target for s in steps):
                steps.append(Step(f"{source} → {target}", source, target, None, None, MECHANISMS[target],
                                  not_applicable=run.error or run.status))
    return steps


def _step(session: Session, source: str, target: str, mechanisms: list[str], found: dict[str, Bound]) -> Step:
    rounds = round_table(session)
    wide = rounds.pivot_table(index=["process", "round"], columns="mode", values="ms")
    deltas = ((wide[target] - wide[source]) * 1e3).dropna()
    host_bound = any(found[m].host_bound for m in (source, target) if m in found)
    low, median, high, widened = _interval(deltas, host_bound)
    share = None
    if "eager" in wide:
        shares = (deltas / (wide["eager"] * 1e3)).dropna()
        s_low, s_median, s_high, _ = _interval(shares, host_bound)
        share = (s_median, s_low, s_high)
    # on the CPU the profiler slows the kernels it times (the host runs them): no split of the change there
    on_gpu = session.environment.device_kind == "cuda"
    gpu_delta = (found[target].gpu_us - found[source].gpu_us) if on_gpu and {source, target} <= found.keys() else None
    delta = Delta(median, low, high, widened, share)
    return Step(f"{source} → {target}", source, target, delta, gpu_delta,
                _mechanism(" and ".join(mechanisms), delta, gpu_delta))


def _interval(values: pd.Series, host_bound: bool) -> tuple[float, float, float, bool]:
    """p10, median, p90 over paired rounds; for a host-bound step, widened to the spread between the timing
    processes' medians (which belongs in its interval), and whether it was."""
    low, median, high = (float(v) for v in np.percentile(values.to_numpy(dtype=float), QUANTILES))
    if not host_bound:
        return low, median, high, False
    per_process = values.groupby(level="process").median()
    widened = float(per_process.min()) < low or float(per_process.max()) > high
    return min(low, float(per_process.min())), median, max(high, float(per_process.max())), widened


def _mechanism(nominal: str, delta: Delta, gpu_delta: float | None) -> str:
    """What the step changes, by how much, and which side dominated: the device's own work, or the host's."""
    change = "faster" if delta.median < 0 else "slower"
    text = f"{nominal}: {abs(delta.median):.1f} µs per call {change} ({delta.low:+.1f} to {delta.high:+.1f} µs"
    if delta.share is not None:
        text += f"; {delta.share[0]:+.0%} of eager's call, {delta.share[1]:+.0%} to {delta.share[2]:+.0%}"
    text += ")"
    if gpu_delta is None:
        return text
    rest = delta.median - gpu_delta
    if abs(gpu_delta) >= abs(rest):
        side = f"the kernels dominated ({gpu_delta:+.1f} µs of GPU time; {rest:+.1f} µs on the host side)"
    else:
        side = (f"the host side dominated ({rest:+.1f} µs: Python, guards, launches; the GPU time moved "
                f"{gpu_delta:+.1f} µs)")
    return f"{text}; {side}"


def ladder_fields(steps: list[Step]) -> list[dict[str, object]]:
    """The session's `ladder` as `inspect --json` gives it."""
    return [{"step": s.step, "from": s.source, "to": s.target,
             "delta_us": None if s.delta_us is None else {"median": s.delta_us.median, "low": s.delta_us.low,
                                                          "high": s.delta_us.high},
             "share_of_eager": None if s.delta_us is None or s.delta_us.share is None else dict(
                 zip(("median", "low", "high"), s.delta_us.share, strict=True)),
             "gpu_delta_us": s.gpu_delta_us, "widened": bool(s.delta_us and s.delta_us.widened),
             "mechanism": s.mechanism, "not_applicable": s.not_applicable} for s in steps]


def why_words(session: Session, latencies: dict[str, Estimate], speedups: dict[str, Estimate], mode: str
              ) -> str | None:
    """The verdict's sentence on why, from the session's runs and its modes' latencies and speedups: "default is
    0.55x: its kernels take 12% less GPU time, but the GPU is busy 14% of the call; launches and host work
    dominate; …, and a CUDA graph of eager alone is 2.20x." None where the mode or eager was not both timed and
    profiled on a GPU."""
    found = bounds(session)
    if mode not in speedups or mode not in found or "eager" not in found or found["eager"].gpu_us <= 0 or \
            session.environment.device_kind != "cuda":
        return None  # on the CPU the profiled kernel time is the profiler's as much as the kernels'
    device = "GPU"
    speedup, eager, own = speedups[mode].median, found["eager"], found[mode]
    change = own.gpu_us / eager.gpu_us - 1
    busy = own.gpu_us / (latencies[mode].median * 1e3)
    link = "but" if (speedup < 1) == (change < 0) else "and"
    text = (f"{mode} is {speedup:.2f}x: its kernels take {abs(change):.0%} {'less' if change < 0 else 'more'} "
            f"{device} time, {link} the {device} is busy {min(busy, 1.0):.0%} of the call; "
            + ("launches and host work dominate" if busy < 0.5 else "the kernels dominate"))
    if own.host_bound:
        text += (f"; it is host-bound ({own.host_us:.0f} µs of host work per call against {own.gpu_us:.0f} µs of "
                 f"GPU time): on the GPU alone it is {eager.gpu_us / max(own.gpu_us, 1e-9):.2f}x")
    if GRAPHED_EAGER in speedups and mode != GRAPHED_EAGER:
        text += f", and a CUDA graph of eager alone is {speedups[GRAPHED_EAGER].median:.2f}x"
    return text + "."


def waterfall_caption(steps: list[Step]) -> str:
    """The step of the ladder (`ladder`'s steps) that changed the call most, and what dominated it."""
    timed = [s for s in steps if s.delta_us is not None]
    if not timed:
        return "No step of the ladder was timed."
    biggest = max(timed, key=lambda s: abs(s.delta_us.median) if s.delta_us else 0.0)
    return f"The biggest step, {biggest.step}: {biggest.mechanism}."


def bound_caption(session: Session) -> str:
    """Which modes of the session are host-bound."""
    found = bounds(session)
    host = [m for m, b in found.items() if b.host_bound]
    if session.environment.device_kind != "cuda":
        return "On the CPU the host runs the kernels itself: no mode waits for a device."
    if not host:
        return "Every mode is device-bound: the host launches faster than the GPU computes."
    return (f"Host-bound: {', '.join(host)} (the host's work per call takes as long as the GPU's or longer, so the "
            "GPU idles between kernels and the host's speed decides the latency).")
