"""A fusion contract from a session's report, and a fresh contract held against a blessed one: the figures of
`records.contract` taken from the same Report the app and `inspect` show (its summary table, its bytes and its
CUDA-graph coverage), and one `Change` per figure that moved, regressed where it moved beyond the tolerances the
blessed file states."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fusionviz.records.contract import Contract, Made, ModeFigures, Tolerances

if TYPE_CHECKING:
    from fusionviz.analysis.report import Report

SPEEDUP_DIGITS = 3  # speedups are kept and compared to this many decimals: the rest is noise


@dataclass(frozen=True)
class Change:
    """One figure that moved (or a mode that no longer runs): what it was, what it is, what the contract allows,
    and whether that is beyond the tolerance."""

    figure: str  # "default kernels per iteration"
    was: str
    now: str
    allowed: str
    regressed: bool

    @property
    def line(self) -> str:
        """`default kernels per iteration: 1 → 3 (allowed ≤ 2)`."""
        return f"{self.figure}: {self.was} → {self.now} ({self.allowed})"


@dataclass(frozen=True)
class Checked:
    """A fresh contract against a blessed one: the figures that moved, and how many were compared."""

    changes: tuple[Change, ...]
    compared: int

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.regressed)

    @property
    def regressed(self) -> bool:
        return any(c.regressed for c in self.changes)


def contract_of(report: Report, tolerances: Tolerances, floors: dict[str, float] | None = None) -> Contract:
    """The contract of `report`'s session: each mode that ran, with the figures its summary table, its bytes
    (`Report.bytes_moved`: the DRAM counters where counted, else the estimate where it knows nearly all kernel
    time) and its CUDA-graph coverage give; the modes asked for that failed in `failed`. Each compiled mode's
    speedup floor is `floors`' (a blessed file's, when checking), else `tolerances.speedup_floor`, else the
    measured p10 less `tolerances.speedup_margin` of it."""
    from fusionviz.analysis.bytes_moved import SAME_PCT

    session = report.session
    rows = {row["mode"]: row for row in report.summary.to_dict("records")}
    modes: dict[str, ModeFigures] = {}
    failed: dict[str, str] = {}
    for run in session.runs:
        if run.status == "not_applicable":
            continue
        row = rows.get(run.mode)
        if not run.ok or row is None or _number(row["kernels_per_iteration"]) is None:
            failed[run.mode] = run.error or ("not profiled" if run.ok else run.status)
            continue
        moved = report.bytes_moved.run(run.mode)
        bytes_known = moved is not None and (moved.measured is not None or
                                             (moved.estimated is not None and moved.known_pct >= 100 - SAME_PCT))
        coverage = report.coverage.get(run.mode)
        captured = skips = None
        if coverage is not None and coverage.recorded is not None:
            captured = sum(g.captured for g in coverage.graphs)
            skips = len(coverage.skips) + sum(not g.captured for g in coverage.graphs)
        speedup = interval = floor = None
        if run.mode != "eager" and _number(row["speedup"]) is not None:
            speedup = round(row["speedup"], SPEEDUP_DIGITS)
            low, high = round(row["speedup_low"], SPEEDUP_DIGITS), round(row["speedup_high"], SPEEDUP_DIGITS)
            interval = (low, high)
            floor = (floors or {}).get(run.mode)
            if floor is None:
                floor = tolerances.speedup_floor
            if floor is None:
                floor = math.floor(low * (1 - tolerances.speedup_margin) * 10**SPEEDUP_DIGITS) / 10**SPEEDUP_DIGITS
        modes[run.mode] = ModeFigures(
            kernels_per_iteration=float(row["kernels_per_iteration"]),
            graphs=_count(row["graphs"]), graph_breaks=_count(row["graph_breaks"]),
            recompiles=_count(row["recompiles"]),
            cuda_graphs_captured=captured, cuda_graph_skips=skips,
            bytes_per_iteration=(moved.measured if moved.measured is not None else moved.estimated)
            if moved is not None and bytes_known else None,
            bytes_from=("DRAM counters" if moved.measured is not None else "estimate")
            if moved is not None and bytes_known else "",
            speedup=speedup, speedup_interval=interval, speedup_floor=floor)
    env = session.environment
    made = Made(env.fusionviz_version, env.torch_version, env.device_name or env.cpu, env.captured_at)
    return Contract(session.config, tolerances, modes, made, failed)


def check(blessed: Contract, fresh: Contract) -> Checked:
    """Every figure of `blessed` against `fresh` (a run of the same configuration, its floors the blessed
    ones), under `blessed`'s tolerances: one Change per figure that moved, regressed where it moved beyond
    them. A blessed mode that did not run again is a regression."""
    tol = blessed.tolerances
    changes: list[Change] = []
    compared = 0
    for mode, was in blessed.modes.items():
        now = fresh.modes.get(mode)
        if now is None:
            why = fresh.failed.get(mode, "not run")
            changes.append(Change(f"{mode}", "ran", f"did not run ({why.splitlines()[0] if why else why})",
                                  "must run", True))
            continue
        pairs: list[tuple[str, float | None, float | None, float | None, str]] = [
            ("kernels per iteration", was.kernels_per_iteration, now.kernels_per_iteration,
             was.kernels_per_iteration + tol.kernels_may_grow_by, "allowed ≤ {}"),
            ("graphs", was.graphs, now.graphs, was.graphs, "allowed ≤ {}"),
            ("graph breaks", was.graph_breaks, now.graph_breaks, was.graph_breaks, "allowed ≤ {}"),
            ("recompiles", was.recompiles, now.recompiles, was.recompiles, "allowed ≤ {}"),
            ("CUDA-graph skips", was.cuda_graph_skips, now.cuda_graph_skips, was.cuda_graph_skips, "allowed ≤ {}"),
            ("CUDA graphs captured", was.cuda_graphs_captured, now.cuda_graphs_captured, None, "any"),
            ("bytes per iteration", was.bytes_per_iteration, now.bytes_per_iteration,
             None if was.bytes_per_iteration is None
             else math.floor(was.bytes_per_iteration * (1 + tol.bytes_may_grow_by_pct / 100)), "allowed ≤ {}"),
        ]
        for name, before, after, most, allowed in pairs:
            if before is None:
                continue
            compared += 1
            if after == before:
                continue
            beyond = after is not None and most is not None and after > most
            changes.append(Change(f"{mode} {name}", _shown(before), _shown(after) if after is not None else "unknown",
                                  allowed.format(_shown(most)) if most is not None else allowed, beyond))
        if was.speedup_floor is not None:
            compared += 1
            if now.speedup is None:
                changes.append(Change(f"{mode} speedup against eager", _speedup(was), "not timed",
                                      f"floor ≥ {_shown(was.speedup_floor)}", True))
            elif now.speedup != was.speedup or now.speedup < was.speedup_floor:  # a floor raised by hand too
                changes.append(Change(f"{mode} speedup against eager", _speedup(was), _speedup(now),
                                      f"floor ≥ {_shown(was.speedup_floor)}", now.speedup < was.speedup_floor))
    return Checked(tuple(changes), compared)


def floors_of(contract: Contract) -> dict[str, float]:
    """Each mode's blessed speedup floor, by mode: what a fresh run is held to."""
    return {mode: f.speedup_floor for mode, f in contract.modes.items() if f.speedup_floor is not None}


def _speedup(figures: ModeFigures) -> str:
    interval = figures.speedup_interval
    shown = f"{_shown(figures.speedup)}x"
    return f"{shown} (p10–p90 {_shown(interval[0])}–{_shown(interval[1])})" if interval else shown


def _shown(value: float | None) -> str:
    if value is None:
        return "unknown"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.{SPEEDUP_DIGITS}g}" if abs(value) < 1 else f"{value:,.{SPEEDUP_DIGITS}f}".rstrip("0").rstrip(".")


def _number(value: Any) -> float | None:
    """A cell of the summary table as a number; None where it is empty (None or NaN)."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


def _count(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)
