"""Per-mode figures of a session: latency, speedup against eager with its spread, kernels, compile time and
break-even calls, computed from the raw records each time a session is opened."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionviz.records.session import ModeRun, Session

SUMMARY_COLUMNS: dict[str, str] = {
    "mode": "compile mode (eager is the baseline)",
    "status": "ok, error or not_applicable",
    "median_ms": "median latency per call, ms",
    "p10_ms": "10th percentile of the per-repeat means, ms",
    "p90_ms": "90th percentile of the per-repeat means, ms",
    "speedup": "eager median / this median (>1 is faster)",
    "speedup_low": "eager p10 / this p90: the pessimistic end",
    "speedup_high": "eager p90 / this p10: the optimistic end",
    "kernels_per_iteration": "device kernels (GPU) or top-level compute calls (CPU) per iteration",
    "launches_per_iteration": "CUDA launch calls per iteration (GPU only)",
    "busy_pct": "kernel time / iteration span, percent",
    "compile_s": "first compiled call, s",
    "cache": "Inductor FX-graph cache: warm, cold, mixed",
    "break_even_calls": "calls until compile time is paid back; NaN with a compiled mode: never",
    "graphs": "compiled graphs (torch._dynamo.explain)",
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles during the run",
}


@dataclass(frozen=True)
class Comparison:
    """One mode against eager. `break_even_calls` is None for a compiled mode that is not faster (never)."""

    speedup: float
    low: float
    high: float
    break_even_calls: float | None


def comparisons(session: Session) -> dict[str, Comparison]:
    """Each mode that ran with a latency, compared with eager (eager itself included, at 1x)."""
    eager = session.run("eager")
    base = eager.latency if eager and eager.ok else None
    found: dict[str, Comparison] = {}
    if base is None:
        return found
    for run in session.runs:
        if not run.ok or run.latency is None:
            continue
        lat = run.latency
        saved_ms = base.median_ms - lat.median_ms
        break_even = None
        if run.mode != "eager" and run.compile is not None and saved_ms > 0:
            break_even = run.compile.first_call_s * 1e3 / saved_ms
        found[run.mode] = Comparison(speedup=base.median_ms / lat.median_ms, low=base.p10_ms / lat.p90_ms,
                                     high=base.p90_ms / lat.p10_ms, break_even_calls=break_even)
    return found


def summary_table(session: Session) -> pd.DataFrame:
    """One row per mode; columns in SUMMARY_COLUMNS."""
    compared = comparisons(session)
    rows = []
    for run in session.runs:
        lat, summ, comp, vs = run.latency, run.summary, run.compile, compared.get(run.mode)
        rows.append({
            "mode": run.mode, "status": run.status,
            "median_ms": lat.median_ms if lat else None, "p10_ms": lat.p10_ms if lat else None,
            "p90_ms": lat.p90_ms if lat else None,
            "speedup": vs.speedup if vs else None, "speedup_low": vs.low if vs else None,
            "speedup_high": vs.high if vs else None,
            "kernels_per_iteration": summ.kernels_per_iteration if summ else None,
            "launches_per_iteration": summ.launches_per_iteration if summ else None,
            "busy_pct": 100 * summ.busy_fraction if summ and summ.busy_fraction is not None else None,
            "compile_s": comp.first_call_s if comp else None, "cache": comp.cache if comp else None,
            "break_even_calls": vs.break_even_calls if vs else None,
            "graphs": run.graph_count, "graph_breaks": len(run.graph_breaks) if run.mode != "eager" else None,
            "recompiles": run.recompiles,
        })
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def drawable_runs(session: Session) -> list[ModeRun]:
    """The runs that have kernels to draw, in session order (eager first)."""
    return [r for r in session.runs if r.ok and r.summary is not None]
