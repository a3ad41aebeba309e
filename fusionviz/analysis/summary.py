"""Per-mode figures of a session: latency and speedup against eager with their spread, the verdict on each,
kernels, busy fraction, compile time and break-even calls, computed from the raw records each time a
session is opened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.timing import Estimate, Verdict, verdict_of
from fusionviz.analysis.trace_stats import BusyTime
from fusionviz.records.session import ModeRun, Session

SUMMARY_COLUMNS: dict[str, str] = {
    "mode": "compile mode (eager is the baseline)",
    "status": "ok, error or not_applicable",
    "median_ms": "median latency per call over every timing round of every process, ms",
    "p10_ms": "10th percentile of the rounds' ms per call",
    "p90_ms": "90th percentile of the rounds' ms per call",
    "speedup": "median over rounds of eager's ms / this mode's ms in the same round (>1 is faster)",
    "speedup_low": "10th percentile of those paired ratios",
    "speedup_high": "90th percentile of those paired ratios",
    "verdict": "faster or slower when the whole speedup interval lies on one side of 1; else no clear difference",
    "rounds": "timing rounds pooled (every process's)",
    "processes": "timing processes the rounds came from",
    "kernels_per_iteration": "device kernels (GPU) or top-level compute calls (CPU) per iteration",
    "launches_per_iteration": "CUDA launch calls per iteration (GPU only)",
    "busy_pct": "kernel time per iteration / median latency (unprofiled), percent",
    "compile_s": "first compiled call, s",
    "cache": "Inductor FX-graph cache: warm, cold, mixed",
    "break_even_calls": "calls until compile time is paid back; NaN with a compiled mode that is not clearly faster",
    "graphs": "compiled graphs (torch._dynamo.explain)",
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles during the run",
}


@dataclass(frozen=True)
class Comparison:
    """One mode against eager. `break_even_calls` is None unless the mode is clearly faster (never)."""

    latency: Estimate
    speedup: Estimate
    verdict: Verdict
    break_even_calls: float | None


def comparisons(runs: Sequence[ModeRun], latencies: dict[str, Estimate],
                speedups: dict[str, Estimate]) -> dict[str, Comparison]:
    """Each timed mode of `runs` compared with eager (eager itself included, at 1x), from the modes' latencies
    and speedups (`timing.latency_estimates`, `timing.speedup_estimates`)."""
    eager = latencies.get("eager")
    found: dict[str, Comparison] = {}
    for run in runs:
        if run.mode not in speedups or eager is None:
            continue
        lat, vs = latencies[run.mode], speedups[run.mode]
        verdict = verdict_of(vs) if run.mode != "eager" else "no clear difference"
        saved_ms = eager.median - lat.median
        break_even = None
        if verdict == "faster" and run.compile is not None and saved_ms > 0:
            break_even = run.compile.first_call_s * 1e3 / saved_ms
        found[run.mode] = Comparison(latency=lat, speedup=vs, verdict=verdict, break_even_calls=break_even)
    return found


def busy_fraction(busy: BusyTime, latency: Estimate | None) -> float | None:
    """Kernel time per iteration over the unprofiled median latency (the profiler slows the CPU side, so a
    profiled iteration's span overstates idle time); the iteration's span where there is no timing."""
    if latency is None or latency.median <= 0:
        return busy.busy_fraction
    return min(1.0, busy.kernel_time_us / (latency.median * 1e3))


def summary_table(runs: Sequence[ModeRun], latencies: dict[str, Estimate], compared: dict[str, Comparison],
                  busy: dict[str, float | None]) -> pd.DataFrame:
    """One row per run (columns in SUMMARY_COLUMNS), from the modes' latencies, their comparisons with eager
    (`comparisons`) and each run's busy fraction (`busy_fraction`, by mode)."""
    rows = []
    for run in runs:
        summ, comp, vs = run.summary, run.compile, compared.get(run.mode)
        lat, busy_share = latencies.get(run.mode), busy[run.mode]
        rows.append({
            "mode": run.mode, "status": run.status,
            "median_ms": lat.median if lat else None, "p10_ms": lat.low if lat else None,
            "p90_ms": lat.high if lat else None,
            "speedup": vs.speedup.median if vs else None, "speedup_low": vs.speedup.low if vs else None,
            "speedup_high": vs.speedup.high if vs else None,
            "verdict": vs.verdict if vs and run.mode != "eager" else None,
            "rounds": lat.samples if lat else None, "processes": lat.processes if lat else None,
            "kernels_per_iteration": summ.kernels_per_iteration if summ else None,
            "launches_per_iteration": summ.launches_per_iteration if summ else None,
            "busy_pct": 100 * busy_share if busy_share is not None else None,
            "compile_s": comp.first_call_s if comp else None, "cache": comp.cache if comp else None,
            "break_even_calls": vs.break_even_calls if vs else None,
            "graphs": run.graph_count, "graph_breaks": len(run.graph_breaks) if run.mode != "eager" else None,
            "recompiles": run.recompiles,
        })
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def drawable_runs(session: Session) -> list[ModeRun]:
    """The runs that have kernels to draw, in session order (eager first)."""
    return [r for r in session.runs if r.ok and r.summary is not None]
