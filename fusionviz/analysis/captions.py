"""One-line captions computed from a session's Report, for talks and slides: the fields a talk's caption
template may use (worded by the verdict, so a caption never claims more than the measurement), each view's
own caption, and the verdict of a pair of plain traces (which carry no timing)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from fusionviz.analysis.verdict import ratio_words

if TYPE_CHECKING:
    import pandas as pd

    from fusionviz.analysis.report import Report
    from fusionviz.analysis.summary import Comparison

NOT_TIMED = "not timed"
NO_SWEEP = "No strategy of this sweep ran."


def speedup_words(vs: Comparison | None) -> str:
    """"11x faster than eager (9.4–13x)", "2.1x slower than eager (0.44–0.58x)", "no clear difference from
    eager (0.95–1.04x)": the words follow the verdict, never the median alone."""
    if vs is None:
        return NOT_TIMED
    s = vs.speedup
    interval = f"({s.low:.2f}–{s.high:.2f}x)"
    if vs.verdict == "no clear difference":
        return f"no clear difference from eager {interval}"
    return f"{ratio_words(s.median)} than eager {interval}"


def _kernels(report: Report, mode: str | None) -> str:
    run = report.session.run(mode) if mode else None
    return f"{len(report.runs[run.mode].kernels):g}" if run is not None and run.summary is not None else "–"


def _eager_busy(report: Report) -> str:
    """How busy eager keeps the device per call ("48%"), over the unprofiled latency where timed."""
    busy = report.busy.get("eager")
    return f"{busy:.0%}" if busy is not None else "–"


def caption_values(report: Report, mode: str | None = None) -> dict[str, str]:
    """Every field a talk's caption may use (`charts.registry.CAPTION_FIELDS`) for this session and the scene's
    mode, as text."""
    session = report.session
    run = report.focus(mode)
    vs = report.comparisons.get(run.mode) if run else None
    compiled = run.compile if run else None
    if vs is None:
        break_even = NOT_TIMED
    elif vs.break_even_calls is not None:
        break_even = f"pays back after {vs.break_even_calls:,.0f} calls"
    else:
        break_even = "never pays back: not clearly faster"
    return {
        "mode": run.mode if run else (mode or "–"),
        "model": session.config.model,
        "device": "the CPU" if session.environment.device_kind == "cpu" else session.environment.device_name,
        "dtype": session.config.dtype,
        "speedup": speedup_words(vs),
        "verdict": vs.verdict if vs else NOT_TIMED,
        "eager_kernels": _kernels(report, "eager"),
        "kernels": _kernels(report, run.mode if run else None),
        "busy": _eager_busy(report),
        "compile_s": f"{compiled.first_call_s:.1f} s" if compiled else "–",
        "break_even": break_even,
        "graphs": f"{run.graph_count or 1} graph{'s' if (run.graph_count or 1) > 1 else ''}" if run else "–",
    }


def kernel_change(eager_kernels: str, kernels: str, mode: str) -> str:
    """"18 eager kernels collapse into 1 under default", or that nothing, or more, came of compiling."""
    try:
        before, after = float(eager_kernels), float(kernels)
    except ValueError:
        return f"{mode}: {eager_kernels} → {kernels} kernels"
    if after < before:
        return f"{eager_kernels} eager kernels become {kernels} under {mode}"
    if after > before:
        return f"{mode} runs more kernels than eager: {eager_kernels} → {kernels}"
    return f"{mode} runs as many kernels as eager ({kernels}): nothing fused away"


def _change(values: dict[str, str]) -> str:
    return kernel_change(values["eager_kernels"], values["kernels"], values["mode"])


def kernels_caption(report: Report, mode: str | None = None) -> str:
    """What became of eager's kernels under the mode (the collapse and the animation)."""
    return _change(report.caption_fields(mode))


def source_caption(report: Report, mode: str | None = None) -> str:
    """Which lines ended in fewer kernels than they launched in eager, and what kept the rest apart."""
    run = report.focus(mode)
    view = report.source_views.get(run.mode) if run else None
    if run is None or view is None:
        return ""
    reasons = Counter(s.reason for s in view.separations)
    apart = "; kept apart by " + ", ".join(f"{r} ({n})" for r, n in reasons.most_common()) if reasons else ""
    lines = len(view.lines)
    return (f"{int(view.lines.eager_kernels.sum())} eager kernels from {lines} line{'' if lines == 1 else 's'} of "
            f"the model ended in {len(view.kernel_lines)} {run.mode} kernels{apart}")


def _busy(report: Report, values: dict[str, str]) -> str:
    device = "GPU" if report.session.environment.device_kind == "cuda" else "CPU"
    return f"eager keeps the {device} busy {values['busy']} of each call"


def timeline_caption(report: Report, mode: str | None = None) -> str:
    v, run = report.caption_fields(mode), report.focus(mode)
    graphs = (f"; {run.mode} runs as {run.graph_count} graphs, eager code between them"
              if run and (run.graph_count or 0) > 1 else "")
    # one line on a slide: the strip over each lane says the timed call; the lab's caption says the stretch
    return f"One steady iteration: {_change(v)}; {_busy(report, v)}{graphs}"


def stretch_words(report: Report, modes: list[str]) -> str:
    """"default's profiled iteration ran 2.6x as long as its timed call (0.148 ms), eager's 1.3x (0.122 ms): the
    profiler's own overhead", for those of `modes` that were timed and profiled (`Report.stretch`); "" for none."""
    found = [(m, report.stretch[m], report.latencies[m].median) for m in modes if m in report.stretch]
    if not found:
        return ""
    (mode, stretch, ms), *rest = found
    more = "".join(f", {m}'s {x:.1f}x ({t:.3g} ms)" for m, x, t in rest)
    return (f"{mode}'s profiled iteration ran {stretch:.1f}x as long as its timed call ({ms:.3g} ms){more}, medians: "
            "the profiler's own overhead")


def verdict_caption(report: Report, mode: str | None = None) -> str:
    v = report.caption_fields(mode)
    if v["verdict"] == NOT_TIMED:
        return f"{_change(v)}; these traces carry no timing, so no speedup is claimed"
    return f"{v['mode']} is {v['speedup']}: {v['eager_kernels']} → {v['kernels']} kernels; {_busy(report, v)}"


def latency_caption(report: Report, mode: str | None = None) -> str:
    """The fastest mode and when its compile pays back (every mode: `mode` is not used)."""
    compared = {m: c for m, c in report.comparisons.items() if m != "eager"}
    if not compared:
        return "No compiled mode was timed against eager."
    faster = {m: c for m, c in compared.items() if c.verdict == "faster"}
    if not faster:
        closest, vs = max(compared.items(), key=lambda item: item[1].speedup.median)
        return f"No compiled mode is clearly faster than eager; the closest, {closest}: {speedup_words(vs)}"
    best, vs = max(faster.items(), key=lambda item: item[1].speedup.median)
    pays = f"; its compile pays back after {vs.break_even_calls:,.0f} calls" if vs.break_even_calls else ""
    return f"Fastest: {best}, {speedup_words(vs)}{pays}"


def _sweep_ran(report: Report) -> tuple[pd.DataFrame | None, str]:
    """The strategies that ran (None without a sweep), and the dimension swept."""
    sweep, dimension = report.sweep, report.session.sweep.dimension if report.session.sweep else "size"
    return (sweep.summary[sweep.summary.status == "ok"] if sweep else None), dimension


def sweep_latency_caption(report: Report, mode: str | None = None) -> str:
    ran, dimension = _sweep_ran(report)
    if ran is None or ran.empty:
        return NO_SWEEP
    counts = ", ".join(f"{r.strategy} {r.compiles}" for r in ran.itertuples())
    calls = len(report.session.sweep.schedule) if report.session.sweep else 0
    return f"Compiles over {calls} calls of changing {dimension}: {counts}"


def sweep_steady_caption(report: Report, mode: str | None = None) -> str:
    ran, dimension = _sweep_ran(report)
    if ran is None or ran.empty:
        return NO_SWEEP
    ratios = [f"{r.strategy} {r.ratio_vs_static:.2f}x" for r in ran.itertuples()
              if r.strategy != "static" and r.ratio_vs_static == r.ratio_vs_static]
    return ("Once compiled, each strategy's latency against static's at the same size: " + ", ".join(ratios)
            if ratios else f"Steady-state latency against {dimension}")


def sweep_cumulative_caption(report: Report, mode: str | None = None) -> str:
    ran, _ = _sweep_ran(report)
    if ran is None or ran.empty or report.sweep is None:
        return NO_SWEEP
    leader = report.sweep.leader
    totals = ", ".join(f"{r.strategy} {r.total_s:.1f} s" for r in ran.itertuples())
    ahead = f"{leader[0]} is ahead from call {leader[1]}; " if leader else ""
    return f"{ahead}the whole schedule, compiles included: {totals}"


def grid_caption(report: Report, mode: str | None = None) -> str:
    assert report.grid is not None  # the registry draws a grid view of a grid session only
    table = report.grid.table
    counts = table.verdict.value_counts()
    return (f"{report.grid.mode} against eager over {len(table)} sizes: clearly faster at "
            f"{counts.get('faster', 0)}, clearly slower at {counts.get('slower', 0)}, no clear difference at "
            f"{counts.get('no clear difference', 0)}")


def methodology_caption(report: Report, mode: str | None = None) -> str:
    """What the naive loop claims beside the proper measurement (without a naive snippet: the verdict's)."""
    if report.methodology is None:
        return verdict_caption(report, mode)
    naive, table = report.methodology.naive, report.methodology.table
    if table.empty:
        return f"{naive.mode} was not timed properly, so there is nothing to set the naive loop against"
    speed, kernels = table.iloc[0], table.iloc[3]
    vs = report.comparisons.get(naive.mode)
    return (f"The naive loop says {speed.naive:.2g}x and counts {kernels.naive:g} \"kernels\" for eager; measured "
            f"properly, {naive.mode} is {speedup_words(vs)} and eager runs {kernels.proper:g} kernels")


def untimed_verdict(report: Report) -> str:
    """What a pair of plain profiler traces can say: the kernels, and that there is no timing to compare."""
    eager, run = report.session.run("eager"), report.focus()
    if eager is None or eager.summary is None or run is None:
        return "These traces have no eager run and compiled run with kernels to compare."
    v = report.caption_fields(run.mode)
    return (f"{kernel_change(v['eager_kernels'], v['kernels'], run.mode)}. Plain profiler traces carry no "
            f"timing outside the profiler, so there is no speedup to report; eager's kernels filled {v['busy']} "
            "of its profiled iteration.")

