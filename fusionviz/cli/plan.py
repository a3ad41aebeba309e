"""`inspect A B` and `inspect A --modes X,Y`: the plan diff of two runs (`analysis.plan_diff`), as text or JSON.
Two session files compare the same mode of each (`--modes M`, else the first compiled mode both ran) or
`--modes X,Y`: X of the first, Y of the second; one session compares its modes X and Y."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusionviz.cli.reporter import Column, table
from fusionviz.errors import ConfigError
from fusionviz.records.decode import clip

if TYPE_CHECKING:
    from fusionviz.analysis.plan_diff import PlanDiff
    from fusionviz.analysis.report import Report

GROUPS = [Column("group", "d", width=5), Column("change", align="<", gap=2), Column("kernels", align=">"),
          Column("launches", align=">"), Column("µs A", ".1f", width=8), Column("µs B", ".1f", width=8),
          Column("µs B-A", "+.1f", width=8), Column("bytes A", align=">", width=9),
          Column("bytes B", align=">", width=9),
          Column("computes", align="<", gap=2)]
RUNS = [Column("", align="<"), Column("A", align=">", width=10), Column("B", align=">", width=10)]


def modes_asked(text: str | None) -> list[str]:
    """`--modes X,Y` (or `--modes M`) as a list of one or two modes."""
    if text is None:
        return []
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not 1 <= len(modes) <= 2:
        raise ConfigError("--modes takes one mode (the same on both sides of two sessions) or two: A,B")
    return modes


def _pick(report: Report, mode: str, where: str) -> str:
    ran = [r.mode for r in report.drawable]
    if mode not in ran:
        raise ConfigError(f"{mode} has no kernels to compare in {where}: choose from {', '.join(ran) or 'none'}")
    return mode


def plan_asked(paths: list[Path], modes_text: str | None) -> PlanDiff | None:
    """The plan diff `inspect`'s arguments ask for: `--modes` given, or two files that are both sessions; None
    for anything else (one file as before; traces, several or a folder: the ranks of one job)."""
    modes = modes_asked(modes_text)
    if not modes and (len(paths) != 2 or not all(p.is_file() for p in paths)):
        return None
    if len(paths) > 2 or any(p.is_dir() for p in paths):
        raise ConfigError("--modes compares the runs of one session file or of two")
    if not modes:
        from fusionviz.records.files import open_path

        if any(open_path(p).source == "trace" for p in paths):
            return None  # two traces: two ranks of one job
    return session_plan_diff(paths, modes)


def session_plan_diff(paths: list[Path], modes: list[str]) -> PlanDiff:
    """The plan diff the arguments ask for: one session's two modes, or a mode of each of two sessions."""
    from fusionviz.analysis.plan_diff import plan_diff
    from fusionviz.analysis.report import analyse
    from fusionviz.records.files import open_path

    reports = [analyse(open_path(p)) for p in paths]
    if len(reports) == 1:
        if len(modes) != 2:
            raise ConfigError("one session compares two of its modes: --modes A,B")
        a, b = (_pick(reports[0], m, str(paths[0])) for m in modes)
        return reports[0].plan_diff(a, b)
    first, second = reports
    if not modes:
        both = [r.mode for r in first.drawable if r.mode != "eager" and second.session.run(r.mode) is not None]
        modes = [both[0] if both else "eager"]
    a = _pick(first, modes[0], str(paths[0]))
    b = _pick(second, modes[-1], str(paths[1]))
    ra, rb = first.session.run(a), second.session.run(b)
    assert ra is not None and rb is not None
    costs_a, costs_b = first.costs.get(a), second.costs.get(b)
    return plan_diff(ra, rb, costs_a.costs if costs_a else None, costs_b.costs if costs_b else None,
                     _label(first, paths[0], a), _label(second, paths[1], b))


def _label(report: Report, path: Path, mode: str) -> str:
    """A run of one of two sessions, in one word: the file's stem (its torch and device apart) and the mode."""
    stem = path.name.removesuffix(".gz").removesuffix(".json")
    return f"{stem}:{mode}"


def plan_json(diff: PlanDiff) -> dict[str, Any]:
    """The diff as `inspect --json` writes it: its tables as lists of rows (NaN written as null)."""
    return {"a": diff.a, "b": diff.b, "links": diff.links, "by_name": diff.by_name,
            "headline": diff.headline.text, "mechanism": diff.headline.mechanism,
            "details": list(diff.headline.details), "groups": diff.groups.to_dict("records"),
            "kernels": diff.kernels.to_dict("records"), "runs": diff.runs.to_dict("records"),
            "graph_breaks": diff.breaks.to_dict("records")}


def _size(x: float) -> str:
    if not math.isfinite(x):
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.0f} B"


def _figure(quantity: str, x: float) -> str:
    if not math.isfinite(x):
        return "-"
    if quantity.startswith("bytes"):
        return _size(x)
    return f"{x:.1f}" if quantity.startswith("kernel µs") else f"{x:g}"


def plan_lines(diff: PlanDiff) -> list[str]:
    """The diff as text: the headline, the runs side by side, each group with its kernels either side, and the
    graph breaks."""
    matched = ("matched by Inductor's provenance records" + (f" ({diff.by_name} kernels by name)" if diff.by_name
                                                              else "")
               if diff.links == "provenance" else
               "matched by kernel NAMES: a run kept no provenance records, so a renamed kernel reads as vanished "
               "and appeared")
    lines = [f"plan diff: B = {diff.b} against A = {diff.a}", diff.headline.line, f"  kernels {matched}", "",
             "the runs side by side (per iteration: the representative profiled one):",
             *table(RUNS, [(q, _figure(q, a), _figure(q, b)) for q, a, b in diff.runs.itertuples(index=False)],
                    indent="  "), "", "fusion groups (kernels and launches A→B; µs and bytes per iteration):"]
    rows = table(GROUPS, [(g.group, g.change, f"{g.kernels_a}→{g.kernels_b}", f"{g.launches_a}→{g.launches_b}",
                           g.us_a, g.us_b, g.us_diff, _size(g.bytes_a), _size(g.bytes_b), clip(str(g.computes), 100))
                          for g in diff.groups.itertuples()], indent="  ")
    lines.append(rows[0])
    for row, g in zip(rows[1:], diff.groups.itertuples(), strict=True):
        lines += [row, f"        A: {clip(str(g.names_a), 140) or '-'}",
                  f"        B: {clip(str(g.names_b), 140) or '-'}"]
    if not diff.breaks.empty:
        lines += ["", "graph breaks:", *(f"  {b.side}: {b.reason} at {b.user_frame}"
                                        for b in diff.breaks.itertuples())]
    return lines
