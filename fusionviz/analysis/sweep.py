"""What a shape sweep means: per-strategy summary, every call with why it compiled, steady-state latency,
who leads in cumulative time, and the kernels of one shape under two strategies."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.kernel_tables import one_iteration
from fusionviz.analysis.sources import find_source
from fusionviz.records.session import Session, StrategyRun

SWEEP_SUMMARY_COLUMNS: dict[str, str] = {
    "strategy": "static, dynamic, automatic, mark_dynamic or buckets",
    "status": "ok or error",
    "compiles": "successful compiles over the schedule",
    "compile_total_s": "their total time, s",
    "recompile_limit_hit": "True when Dynamo gave up and ran the rest in eager",
    "fx_cache_hits": "compiles answered from Inductor's FX-graph cache (fast: an earlier run compiled the graph)",
    "cold_caches": "True when the strategy ran in a fresh process with an empty Inductor cache",
    "median_steady_ms": "median over sizes of the steady-state latency, ms",
    "ratio_vs_static": "median over sizes of (this steady latency / static's at the same size)",
    "total_s": "wall time of the whole schedule, compiles included, s",
}


@dataclass(frozen=True)
class SweepReport:
    """A shape sweep's tables: what its charts, captions and page show."""

    strategies: list[StrategyRun]  # those that ran (ok_strategies)
    summary: pd.DataFrame  # SWEEP_SUMMARY_COLUMNS
    calls: pd.DataFrame  # SWEEP_CALL_COLUMNS
    steady: pd.DataFrame  # steady_table
    reasons: pd.DataFrame  # recompile_reasons
    limit_note: str  # recompile_limit_note
    leader: tuple[str, int] | None  # sweep_leader


def sweep_report(session: Session) -> SweepReport | None:
    """The sweep's tables, where the session is a shape sweep."""
    if session.sweep is None:
        return None
    calls = sweep_calls(session)
    return SweepReport(ok_strategies(session), sweep_summary(session), calls, steady_table(session),
                       recompile_reasons(session), recompile_limit_note(session), sweep_leader(calls))


def ok_strategies(session: Session) -> list[StrategyRun]:
    """The strategies of the session's sweep that ran (an errored one has no calls to draw)."""
    return [s for s in session.sweep.strategies if s.status == "ok"] if session.sweep else []


def sweep_summary(session: Session) -> pd.DataFrame:
    """One row per strategy of the session's sweep; columns in SWEEP_SUMMARY_COLUMNS."""
    if session.sweep is None:
        return pd.DataFrame(columns=list(SWEEP_SUMMARY_COLUMNS))
    static = next((s for s in session.sweep.strategies if s.strategy == "static" and s.status == "ok"), None)
    rows = []
    for s in session.sweep.strategies:
        steady = list(s.steady_ms_by_size.values())
        ratios = [v / static.steady_ms_by_size[k] for k, v in s.steady_ms_by_size.items()
                  if static and k in static.steady_ms_by_size and static.steady_ms_by_size[k] > 0]
        rows.append({
            "strategy": s.strategy, "status": s.status, "compiles": s.compiles,
            "compile_total_s": s.compile_total_s, "recompile_limit_hit": s.recompile_limit_hit,
            "fx_cache_hits": s.fx_cache_hits, "cold_caches": s.cold_caches,
            "median_steady_ms": float(pd.Series(steady).median()) if steady else None,
            "ratio_vs_static": float(pd.Series(ratios).median()) if ratios else None,
            "total_s": sum(c.latency_ms for c in s.calls) / 1e3,
        })
    return pd.DataFrame(rows, columns=list(SWEEP_SUMMARY_COLUMNS))


SWEEP_CALL_COLUMNS: dict[str, str] = {
    "strategy": "the strategy",
    "index": "call number in the schedule, from 0",
    "size": "the swept dimension's size in this call",
    "latency_ms": "wall time of this call, compiles included, ms",
    "compiled": "this call compiled (a first compile or a recompile)",
    "compile_s": "compile time inside this call, s",
    "fell_back_to_eager": "the recompile limit was hit: Dynamo ran this call in eager",
    "cumulative_s": "wall time of the schedule up to and including this call, s",
    "reason": "why this call compiled: 'first compile' or Dynamo's recompile reason (guard failure)",
}


def sweep_calls(session: Session) -> pd.DataFrame:
    """Every call of every strategy that ran (SWEEP_CALL_COLUMNS), with the cumulative time and why each
    compiling call compiled.

    Dynamo reports each distinct recompile reason once, in order, so the n-th recompiling call of a
    strategy gets its n-th reason; the first compile has none.
    """
    rows = []
    for run in ok_strategies(session):
        guards = [r for r in run.recompile_reasons if not r.startswith("recompile limit hit")]
        total, seen = 0.0, 0
        for c in run.calls:
            total += c.latency_ms / 1e3
            reason = ""
            if c.compiled:
                reason = "first compile" if seen == 0 else (guards[seen - 1] if seen - 1 < len(guards)
                                                            else "recompile (no reason reported)")
                seen += 1
            rows.append({"strategy": run.strategy, "index": c.index, "size": c.size, "latency_ms": c.latency_ms,
                         "compiled": c.compiled, "compile_s": c.compile_s,
                         "fell_back_to_eager": c.fell_back_to_eager, "cumulative_s": total, "reason": reason})
    return pd.DataFrame(rows, columns=list(SWEEP_CALL_COLUMNS))


def recompile_limit_note(session: Session) -> str:
    """One sentence per strategy that hit the recompile limit: from which call it ran in eager."""
    notes = []
    for run in ok_strategies(session):
        fallen = [c.index for c in run.calls if c.fell_back_to_eager]
        if run.recompile_limit_hit and fallen:
            notes.append(f"{run.strategy} hit Dynamo's recompile limit at call {fallen[0]}: it and the "
                         f"{len(fallen) - 1} calls after it ran in eager, uncompiled")
    return "; ".join(notes) + ("." if notes else "")


def steady_table(session: Session) -> pd.DataFrame:
    """Steady-state latency (compiles done) per strategy and size, sizes ascending."""
    rows = [{"strategy": run.strategy, "size": size, "steady_ms": run.steady_ms_by_size[str(size)]}
            for run in ok_strategies(session) for size in sorted(int(k) for k in run.steady_ms_by_size)]
    return pd.DataFrame(rows, columns=["strategy", "size", "steady_ms"])


def sweep_leader(calls: pd.DataFrame) -> tuple[str, int] | None:
    """The strategy with the least cumulative time at the end, and the call from which it stays ahead."""
    if calls.empty:
        return None
    wide = calls.pivot(index="index", columns="strategy", values="cumulative_s")
    leaders = wide.idxmin(axis=1)
    best = str(leaders.iloc[-1])
    behind = leaders[leaders != best]
    return best, int(behind.index.max()) + 1 if len(behind) else int(leaders.index.min())


def recompile_reasons(session: Session) -> pd.DataFrame:
    """Every recompile (guard failure) reason per strategy, in the order Dynamo reported them."""
    rows = [{"strategy": run.strategy, "n": i, "reason": reason}
            for run in ok_strategies(session) for i, reason in enumerate(run.recompile_reasons, start=1)]
    return pd.DataFrame(rows, columns=["strategy", "n", "reason"])


def strategy_kernels(run: StrategyRun) -> pd.DataFrame:
    """The kernels of one profiled call at the sweep's kernel size, in launch order."""
    frame = run.kernel_frame()
    return one_iteration(frame, int(frame.iteration.min())) if len(frame) else frame


KERNEL_DIFF_COLUMNS: dict[str, str] = {
    "name": "kernel name (the n-th launch of a name is matched with the other side's n-th)",
    "kernel_class": "kernel class",
    "us_a": "duration under strategy A, µs",
    "us_b": "duration under strategy B, µs",
    "grid_a": "launch grid under A",
    "grid_b": "launch grid under B",
    "difference": "'same', 'grid differs', 'source differs', 'only in A' or 'only in B'",
}


def strategy_kernel_diff(a: StrategyRun, b: StrategyRun) -> pd.DataFrame:
    """The kernels of one shape under two strategies, side by side, and how each pair differs."""
    def keyed(run: StrategyRun) -> pd.DataFrame:
        frame = strategy_kernels(run)
        return frame.assign(nth=frame.groupby("name").cumcount(), pos=frame.index.astype(float))[
            ["name", "nth", "pos", "kernel_class", "dur_us", "grid"]]

    merged = keyed(a).merge(keyed(b), on=["name", "nth"], how="outer", suffixes=("_a", "_b"))
    # Launch order of A, each kernel only B runs placed by its own launch position.
    merged = merged.assign(order=merged.pos_a.fillna(merged.pos_b - 0.5)).sort_values("order", kind="stable")
    rows = []
    for r in merged.itertuples():
        source_a, source_b = find_source(a.kernel_sources, r.name), find_source(b.kernel_sources, r.name)
        if pd.isna(r.dur_us_b):
            difference = "only in A"
        elif pd.isna(r.dur_us_a):
            difference = "only in B"
        elif source_a and source_b and source_a != source_b:
            difference = "source differs"
        elif r.grid_a != r.grid_b:
            difference = "grid differs"
        else:
            difference = "same"
        rows.append({"name": r.name, "kernel_class": r.kernel_class_a if pd.notna(r.kernel_class_a)
                     else r.kernel_class_b, "us_a": r.dur_us_a, "us_b": r.dur_us_b,
                     "grid_a": "" if pd.isna(r.grid_a) else r.grid_a, "grid_b": "" if pd.isna(r.grid_b) else r.grid_b,
                     "difference": difference})
    return pd.DataFrame(rows, columns=list(KERNEL_DIFF_COLUMNS))
