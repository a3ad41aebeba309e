"""Why a mode got faster or slower: the attribution ladder from eager to each compiled mode, and the verdict's
sentences on why (each mode's class, host- or device-bound, is `bound.classify`'s).

The main ladder climbs eager → eager as one CUDA graph (launches removed, the kernels unchanged) →
reduce-overhead (fusion and generated kernels, under graphs) → max-autotune (autotuned GEMM templates); beside
it, eager → default (fusion, launched from Python) → max-autotune-no-cudagraphs. A rung that did not run is
stepped over (the next step names both mechanisms). Across them, default → reduce-overhead says what CUDA graphs
do to the same compiled kernels: the launches they take off the host, and the input copies they add. Each step's
change in µs per call is taken round by round (the two modes' blocks of one round, so the machine's drift cancels)
and pooled over every timing process; the profiled iterations split it, on a GPU, into the GPU's own work (kernel
time) and the rest, on the host (Python, guards, launches, the CUDA-graph tree's bookkeeping).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fusionviz.analysis.bound import Bound, bound_sentence, bounds
from fusionviz.analysis.cuda_graphs import InputCopies, input_copies
from fusionviz.analysis.headline import MECHANISM_CHARS, Headline, micros, read_size, signed, size_words
from fusionviz.analysis.timing import QUANTILES, latency_estimates, round_table
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.session import Session

MAIN_LADDER = ("eager", GRAPHED_EAGER, "reduce-overhead", "max-autotune")
SIDE_LADDER = ("eager", "default", "max-autotune-no-cudagraphs")
# Across the two: the same compiled kernels, launched from Python, then replayed from CUDA graphs
BRIDGE = ("default", "reduce-overhead")
BRIDGE_MECHANISM = "CUDA graphs over default's compiled kernels"
# what a step to each mode changes, besides the one before it
MECHANISMS: dict[str, str] = {
    GRAPHED_EAGER: "launch overhead removed (eager's kernels replayed as one CUDA graph)",
    "reduce-overhead": "fusion and generated kernels, under CUDA graphs",
    "max-autotune": "autotuned GEMM templates",
    "default": "fusion, launched from Python",
    "max-autotune-no-cudagraphs": "autotuned GEMM templates, launched from Python",
}


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
    """One rung of a ladder: `source` → `target`, its change, the GPU's share of it, and a sentence on which side
    most of the change is on. `not_applicable` (a reason) for a rung that could not run; its figures are None then."""

    step: str
    source: str
    target: str
    delta_us: Delta | None
    gpu_delta_us: float | None
    mechanism: str
    not_applicable: str | None = None
    bridge: bool = False  # default → reduce-overhead, across the two ladders: no rung of either


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
    if set(BRIDGE) <= timed:
        steps.append(_bridge(session, found))
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
    # the host's speed sets a mode's call in some rounds or all: the spread between processes belongs in it
    host_bound = any(found[m].kind in ("host-bound", "balanced") for m in (source, target) if m in found)
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


def _bridge(session: Session, found: dict[str, Bound]) -> Step:
    """default → reduce-overhead: the same kernels replayed from CUDA graphs. What it removes is host work
    (launches, Python, guards: the change less the GPU's), what it adds is GPU time, mostly the copies of the
    inputs into the graphs' static buffers (`cuda_graphs.input_copies`)."""
    source, target = BRIDGE
    step = _step(session, source, target, [BRIDGE_MECHANISM], found)
    run = session.run(target)
    copies = input_copies(run, session) if run is not None else None
    return Step(step.step, source, target, step.delta_us, step.gpu_delta_us,
                bridge_mechanism(step.mechanism, step.delta_us, step.gpu_delta_us, copies), bridge=True)


def bridge_mechanism(measured: str, delta: Delta | None, gpu_delta: float | None, copies: InputCopies | None) -> str:
    """The bridge's mechanism: the step as `_mechanism` says it (`measured`), then what the graphs took away and
    added: "of it, launches gone: -x µs of host work, input copies: +y µs of GPU time, 67.1 MB a call (1 copy
    kernel)", and the GPU time other than the copies where it moved."""
    if delta is None or gpu_delta is None:
        return measured
    host = delta.median - gpu_delta
    parts = [f"launches gone: {host:+.1f} µs of host work" if host <= 0 else
             f"host work {host:+.1f} µs (the graph tree's own work outweighs the launches gone)"]
    if copies is not None and copies.kernels:
        moved = f", {size_words(copies.bytes)} a call" if copies.bytes is not None else ""
        parts.append(f"input copies: {copies.us:+.1f} µs of GPU time{moved} ({copies.kernels:g} copy "
                     f"kernel{'s' if copies.kernels != 1 else ''})")
        rest = gpu_delta - copies.us
        if abs(rest) >= 0.05:
            parts.append(f"the other kernels: {rest:+.1f} µs")
    return f"{measured}; of it, {', '.join(parts)}" if len(parts) > 1 or host <= 0 else measured


def bridge_headline(steps: list[Step], session: Session) -> Headline | None:
    """The default → reduce-overhead step for reading aloud: "CUDA graphs over default: 52 µs faster per call",
    its mechanism what they took away and added ("Launches gone: -59 µs of host work; input copies: +7.6 µs, 520 kB
    a call."), its detail the step's exact figures; None where the step was not timed."""
    step = next((s for s in steps if s.bridge and s.delta_us is not None), None)
    if step is None or step.delta_us is None:
        return None
    change = "faster" if step.delta_us.median < 0 else "slower"
    text = f"CUDA graphs over default: {micros(abs(step.delta_us.median), read=True)} {change} per call"
    mechanism = ""
    if step.gpu_delta_us is not None:
        run = session.run(BRIDGE[1])
        copies = input_copies(run, session) if run is not None else None
        host = step.delta_us.median - step.gpu_delta_us
        said = [f"Launches gone: {signed(host)} µs of host work" if host <= 0 else f"Host work: {signed(host)} µs"]
        if copies is not None and copies.kernels:
            moved = f", {read_size(copies.bytes)} a call" if copies.bytes is not None else " a call"
            said.append(f"input copies: {signed(copies.us)} µs{moved}")
        else:
            said.append(f"GPU time: {signed(step.gpu_delta_us)} µs")
        mechanism = "; ".join(said) + "."
    return Headline(text, mechanism if len(mechanism) <= MECHANISM_CHARS else "", (f"{step.step}: {step.mechanism}.",))


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
    """What the step changes, by how much, and which side most of the change is on: the GPU's own work (kernel
    time), or the host's (the rest: Python, guards, launches)."""
    change = "faster" if delta.median < 0 else "slower"
    text = f"{nominal}: {abs(delta.median):.1f} µs per call {change} ({delta.low:+.1f} to {delta.high:+.1f} µs"
    if delta.share is not None:
        text += f"; {delta.share[0]:+.0%} of eager's call, {delta.share[1]:+.0%} to {delta.share[2]:+.0%}"
    text += ")"
    if gpu_delta is None:
        return text
    rest = delta.median - gpu_delta
    if abs(gpu_delta) >= abs(rest):
        side = f"most of the change is GPU time ({gpu_delta:+.1f} µs of kernels, {rest:+.1f} µs on the host)"
    else:
        side = (f"most of the change is host work ({rest:+.1f} µs: Python, guards, launches; GPU time "
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


def why_words(found: dict[str, Bound], busy: dict[str, float | None], mode: str) -> list[str]:
    """The verdict's sentences on why, one mechanism each, from the modes' host and GPU time (`found`:
    `bound.bounds`) and busy fractions (`summary.busy_fraction`, by mode): how the mode's kernel time compares
    with eager's, then the mode's class and eager's (`bound.bound_sentence`). Empty where the mode or eager was
    not profiled with kernels on a GPU (on the CPU the profiled kernel time is the profiler's as much as the
    kernels')."""
    own, eager = found.get(mode), found.get("eager")
    if own is None or eager is None or eager.gpu_us <= 0 or own.kind is None:
        return []
    change = own.gpu_us / eager.gpu_us - 1
    kernels = (f"Its kernels take as much GPU time as eager's ({micros(own.gpu_us)} per call)" if round(change, 2) == 0
               else f"Its kernels take {abs(change):.0%} {'less' if change < 0 else 'more'} GPU time than eager's "
                    f"({micros(eager.gpu_us)} → {micros(own.gpu_us)} per call)")
    said = [kernels + ".", bound_sentence(own, busy.get(mode))]
    if mode != "eager":
        said.append(bound_sentence(eager, busy.get("eager")).replace("eager is", "Eager is", 1))
    return said


def biggest_step(steps: list[Step]) -> Step | None:
    """The timed step of the ladder (`ladder`'s steps) that changed the call most; None where none was timed."""
    timed = [s for s in steps if s.delta_us is not None and not s.bridge]
    return max(timed, key=lambda s: abs(s.delta_us.median) if s.delta_us else 0.0) if timed else None


def waterfall_headline(steps: list[Step], found: dict[str, Bound]) -> Headline:
    """The step of the ladder that changed the call most, by how much, and which side most of the change is on;
    its details give the step's figures with their intervals and the class of the modes at its ends (`found`:
    `bound.bounds`)."""
    biggest = biggest_step(steps)
    if biggest is None or biggest.delta_us is None:
        return Headline("No step of the ladder was timed")
    delta = biggest.delta_us
    change = "faster" if delta.median < 0 else "slower"
    moved = micros(abs(delta.median), read=True)
    text = f"Biggest step: {biggest.source} → {biggest.target}, {moved} {change} per call"
    mechanism = ""
    if biggest.gpu_delta_us is not None:
        gpu, rest = biggest.gpu_delta_us, delta.median - biggest.gpu_delta_us
        side = "Mostly GPU time" if abs(gpu) >= abs(rest) else "Mostly host work"
        mechanism = f"{side}: {signed(gpu)} µs of kernels, {signed(rest)} µs on the host per call."
    ends = [bound_sentence(found[m]) for m in (biggest.source, biggest.target) if m in found and found[m].kind]
    bridge = [f"{s.step}: {s.mechanism}." for s in steps if s.bridge and s.delta_us is not None]
    return Headline(text, mechanism, (f"{biggest.step}: {biggest.mechanism}.", *ends, *bridge))
