"""The user's forward line by line: the eager kernels each line launched (count, µs) and the compiled kernels
it ended in, the three-way map tlparse draws at compile time, here with measured time on it; and, between
lines whose ops ended in different kernels, what separated them (`separations`), with Inductor's own reason where
its scheduler gave one (`no_fusion`). No torch, no plotly."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.no_fusion import explained, refusals
from fusionviz.analysis.provenance import compiled_graphs, iteration_lines, iteration_sources
from fusionviz.analysis.separations import Separation, separations
from fusionviz.records.session import ModeRun

SOURCE_COLUMNS: dict[str, str] = {
    "source": "the line, as 'file:line'",
    "line": "its number",
    "code": "its text ('' where the session does not hold it)",
    "eager_kernels": "eager kernels its ops launched in the representative iteration",
    "eager_us": "their time, µs (a kernel a trace's stacks give several lines counts on each of them)",
    "eager_names": "their names, in launch order",
    "compiled": "rows of the compiled iteration's kernel table its ops ended in",
    "compiled_names": "those kernels' names",
    "compiled_us": "those kernels' time, µs (a kernel that several lines ended in counts on each of them)",
}


@dataclass(frozen=True)
class SourceView:
    """A run pair's source lines (`lines`: SOURCE_COLUMNS, in file and line order), the lines of each compiled
    kernel of the iteration (`kernel_lines`, by kernel table row: what a click on a kernel shows), and where
    neighbouring ops were kept apart."""

    lines: pd.DataFrame
    kernel_lines: dict[int, list[str]]
    separations: list[Separation]


def has_sources(eager: ModeRun, compiled: ModeRun | None = None) -> bool:
    """Whether the runs say which line each kernel came from (sessions recorded before schema 3 do not, nor
    plain traces without stack traces)."""
    return any(bool(run.op_sources or compiled_graphs(run) or any(row.source_lines for row in run.kernels))
               for run in (eager, compiled) if run is not None)


def source_view(eager: ModeRun, compiled: ModeRun | None) -> SourceView:
    """The lines of the user's code that the eager run's ops (from their marked pass) and the compiled run's
    kernels (from Inductor's records: the lines of the pre-grad nodes each computes, a backward kernel's own
    lines) came from; in a plain trace, the lines its stack traces give (`KernelRow.source_lines`), so that a
    trace alone (`compiled` None) shows each line with the kernels it launched."""
    code: dict[str, str] = {}
    eager_rows: dict[str, list[tuple[str, float]]] = {}
    ek = iteration_kernels(eager)
    for name, dur, op, traced in zip(ek.name, ek.dur_us, iteration_sources(eager), iteration_lines(eager),
                                     strict=True):
        if op is not None and op.source:
            code.setdefault(op.source, op.code)
        for source in [op.source] if op is not None and op.source else traced:
            eager_rows.setdefault(source, []).append((str(name), float(dur)))
    kernel_lines: dict[int, list[str]] = {}
    found: list[Separation] = []
    if compiled is not None:
        for n in compiled.graph_nodes:
            if n.source and n.code:
                code.setdefault(n.source, n.code)
        kernel_lines = {ci: lines for ci, lines in enumerate(iteration_lines(compiled)) if lines}
        kernels = [k for g in compiled_graphs(compiled) for k in g.kernels.values()]
        found = explained(separations(compiled.graph_nodes, kernels, compiled.graph_breaks),
                          refusals(compiled, kernels))
    ck = iteration_kernels(compiled) if compiled is not None else None
    sources = sorted(set(eager_rows) | {s for ls in kernel_lines.values() for s in ls}, key=_order)
    rows = []
    for source in sources:
        mine = eager_rows.get(source, [])
        ended = [ci for ci, ls in kernel_lines.items() if source in ls]
        rows.append({
            "source": source, "line": _order(source)[1], "code": code.get(source, ""),
            "eager_kernels": len(mine), "eager_us": sum(d for _, d in mine), "eager_names": [n for n, _ in mine],
            "compiled": ended,
            "compiled_names": [str(ck.name.iloc[ci]) for ci in ended] if ck is not None else [],
            "compiled_us": float(sum(ck.dur_us.iloc[ci] for ci in ended)) if ck is not None else 0.0})
    return SourceView(pd.DataFrame(rows, columns=list(SOURCE_COLUMNS)), kernel_lines, found)


def _order(source: str) -> tuple[str, int]:
    file, _, line = source.rpartition(":")
    return (file, int(line)) if line.isdigit() else (source, 0)
