"""A crossover grid read as a table and a sentence: where compiling wins, loses, or makes no clear
difference, with how busy eager keeps the device in each cell (the corner where the device idles between eager's
kernels is where it loses)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import msgspec
import pandas as pd

from fusionviz.analysis.summary import busy_fraction, comparisons
from fusionviz.analysis.timing import latency_estimates, speedup_estimates
from fusionviz.analysis.trace_stats import busy_time
from fusionviz.errors import SessionFileError
from fusionviz.records.session import Session

GRID_COLUMNS: dict[str, str] = {
    "dim": "hidden dim",
    "batch": "batch",
    "device": "the device the cell ran on",
    "speedup": "median of eager's ms / the mode's ms in the same timing round",
    "speedup_low": "its p10",
    "speedup_high": "its p90",
    "verdict": "faster, slower, no clear difference; 'error' when the cell did not run",
    "eager_busy": "eager's kernel time per iteration / its median latency (0–1): low means the device idles between "
                  "kernels, waiting for the host",
    "eager_kernels": "eager's kernels per iteration",
    "kernels": "the mode's kernels per iteration",
}


@dataclass(frozen=True)
class GridReport:
    """A crossover grid: its compiled mode, one row per cell (GRID_COLUMNS), and where the mode wins."""

    mode: str
    table: pd.DataFrame
    sentence: str


def grid_report(session: Session) -> GridReport:
    """The grid session's table (`grid_table`) and its crossover sentence."""
    mode = compiled_mode(session)
    table = grid_table(session)
    return GridReport(mode, table, crossover_sentence(table, mode))


def compiled_mode(session: Session) -> str:
    """The grid's compiled mode: the one mode besides eager."""
    return next((m for m in session.config.modes if m != "eager"), "eager")


def cell_session(session: Session, dim: int, batch: int) -> Session:
    """One cell as a session of its own, so every lab view (timeline, collapse, latency) can show it."""
    if session.grid is None:
        raise SessionFileError("this session holds no grid")
    cell = next((c for c in session.grid.cells if (c.dim, c.batch) == (dim, batch)), None)
    if cell is None:
        raise SessionFileError(f"the grid has no cell at dim {dim}, batch {batch}")
    return msgspec.structs.replace(session, config=dataclasses.replace(session.config, dim=dim, batch=batch,
                                                                   device=cell.device),
                               runs=cell.runs, timing=cell.timing, grid=None, label=f"dim {dim} × batch {batch}")


def grid_table(session: Session) -> pd.DataFrame:
    """One row per cell (GRID_COLUMNS), batches then dims in the grid's order. Each cell is analysed as a
    session of its own (`cell_session`), by the processors a Report runs, outside the reports' cache (a grid's
    cells would push out the sessions on screen)."""
    mode = compiled_mode(session)
    rows = []
    for cell in session.grid.cells if session.grid else []:
        row: dict[str, object] = {"dim": cell.dim, "batch": cell.batch, "device": cell.device, "verdict": "error"}
        if cell.error is None:
            one = cell_session(session, cell.dim, cell.batch)
            latencies = latency_estimates(one)
            compared = comparisons(one.runs, latencies, speedup_estimates(one))
            eager, run = one.run("eager"), one.run(mode)
            if mode in compared and eager and run and eager.summary and run.summary:
                vs = compared[mode]
                row |= {"speedup": vs.speedup.median, "speedup_low": vs.speedup.low, "speedup_high": vs.speedup.high,
                        "verdict": vs.verdict, "eager_busy": busy_fraction(busy_time(eager), latencies.get("eager")),
                        "eager_kernels": eager.summary.kernels_per_iteration,
                        "kernels": run.summary.kernels_per_iteration}
        rows.append(row)
    return pd.DataFrame(rows, columns=list(GRID_COLUMNS))


def crossover_sentence(table: pd.DataFrame, mode: str) -> str:
    """Where the mode wins and loses over the grid (`grid_table`), in one sentence."""
    if table.empty:
        return "The grid is empty."

    def cells(verdict: str) -> list[str]:
        rows = table[table.verdict == verdict]
        return [f"{d}×{b}" for d, b in zip(rows.dim, rows["batch"], strict=True)]

    faster, slower, unclear = cells("faster"), cells("slower"), cells("no clear difference")
    parts = [f"{mode} is clearly faster than eager at {len(faster)} of {len(table)} sizes (dim×batch)"
             + (f": {', '.join(faster)}" if faster else ""),
             f"clearly slower at {len(slower)}" + (f" ({', '.join(slower)})" if slower else ""),
             f"no clear difference at {len(unclear)}"]
    busy = table.dropna(subset=["eager_busy"])
    if len(busy) and len(faster) and len(slower):
        won = busy[busy.verdict == "faster"].eager_busy.median()
        lost = busy[busy.verdict == "slower"].eager_busy.median()
        parts.append(f"eager keeps the device busy {won:.0%} of the time where {mode} wins and {lost:.0%} where "
                     "it loses")
    return "; ".join(parts) + "."
