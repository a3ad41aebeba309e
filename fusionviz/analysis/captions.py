"""One-line captions for talks and slides, each worded from the figures it is about: the fields a talk's caption
template may use (worded by the verdict, so a caption never claims more than the measurement), each view's own
caption (`charts.view_captions` hands each the parts of a session's Report it needs), and the verdict of a pair
of plain traces (which carry no timing)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from fusionviz.analysis.grid import GridReport
from fusionviz.analysis.methodology import Methodology
from fusionviz.analysis.source_view import SourceView
from fusionviz.analysis.summary import Comparison
from fusionviz.analysis.sweep import SweepReport
from fusionviz.analysis.timing import Estimate
from fusionviz.analysis.verdict import ratio_words
from fusionviz.records.session import ModeRun, Session, Sweep

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


def _count(kernels: int | None) -> str:
    return f"{kernels:g}" if kernels is not None else "–"


def caption_values(session: Session, run: ModeRun | None, mode: str | None, vs: Comparison | None,
                   eager_kernels: int | None, kernels: int | None, eager_busy: float | None) -> dict[str, str]:
    """Every field a talk's caption may use (`charts.registry.CAPTION_FIELDS`) for this session and the compiled
    run a scene is about (`run`; `mode`, the one the scene asked for), as text: `vs` is that run against eager,
    `eager_kernels` and `kernels` the kernels of one iteration of eager and of the run (None where not
    profiled), `eager_busy` how busy eager keeps the device per call (`summary.busy_fraction`)."""
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
        "eager_kernels": _count(eager_kernels),
        "kernels": _count(kernels),
        "busy": f"{eager_busy:.0%}" if eager_busy is not None else "–",
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


def kernels_caption(values: dict[str, str]) -> str:
    """What became of eager's kernels under the mode (the collapse and the animation), from the caption fields
    (`caption_values`)."""
    return kernel_change(values["eager_kernels"], values["kernels"], values["mode"])


def source_caption(run: ModeRun | None, views: dict[str, SourceView]) -> str:
    """Which lines ended in fewer kernels than they launched in eager under the compiled run a view is about,
    and what kept the rest apart (`views`: each compiled mode's source view)."""
    view = views.get(run.mode) if run else None
    if run is None or view is None:
        return ""
    reasons = Counter(s.reason for s in view.separations)
    apart = "; kept apart by " + ", ".join(f"{r} ({n})" for r, n in reasons.most_common()) if reasons else ""
    lines = len(view.lines)
    return (f"{int(view.lines.eager_kernels.sum())} eager kernels from {lines} line{'' if lines == 1 else 's'} of "
            f"the model ended in {len(view.kernel_lines)} {run.mode} kernels{apart}")


def _busy(device_kind: str, values: dict[str, str]) -> str:
    device = "GPU" if device_kind == "cuda" else "CPU"
    return f"eager keeps the {device} busy {values['busy']} of each call"


def timeline_caption(values: dict[str, str], run: ModeRun | None, device_kind: str) -> str:
    """One steady iteration of the compiled run a view is about, from the caption fields (`caption_values`)."""
    graphs = (f"; {run.mode} runs as {run.graph_count} graphs, eager code between them"
              if run and (run.graph_count or 0) > 1 else "")
    # one line on a slide: the strip over each lane says the timed call; the lab's caption says the stretch
    return f"One steady iteration: {kernels_caption(values)}; {_busy(device_kind, values)}{graphs}"


def stretch_words(stretch: dict[str, float], latencies: dict[str, Estimate], modes: list[str]) -> str:
    """"default's profiled iteration ran 2.6x as long as its timed call (0.148 ms), eager's 1.3x (0.122 ms): the
    profiler's own overhead", for those of `modes` that were timed and profiled (`stretch`: each mode's profiled
    stretch, `trace_stats.profiled_stretch`; `latencies` their timed latencies); "" for none."""
    found = [(m, stretch[m], latencies[m].median) for m in modes if m in stretch]
    if not found:
        return ""
    (mode, times, ms), *rest = found
    more = "".join(f", {m}'s {x:.1f}x ({t:.3g} ms)" for m, x, t in rest)
    return (f"{mode}'s profiled iteration ran {times:.1f}x as long as its timed call ({ms:.3g} ms){more}, medians: "
            "the profiler's own overhead")


def verdict_caption(values: dict[str, str], device_kind: str) -> str:
    """The mode against eager, from the caption fields (`caption_values`)."""
    if values["verdict"] == NOT_TIMED:
        return f"{kernels_caption(values)}; these traces carry no timing, so no speedup is claimed"
    return (f"{values['mode']} is {values['speedup']}: {values['eager_kernels']} → {values['kernels']} kernels; "
            f"{_busy(device_kind, values)}")


def latency_caption(comparisons: dict[str, Comparison]) -> str:
    """The fastest mode against eager (`summary.comparisons`) and when its compile pays back."""
    compared = {m: c for m, c in comparisons.items() if m != "eager"}
    if not compared:
        return "No compiled mode was timed against eager."
    faster = {m: c for m, c in compared.items() if c.verdict == "faster"}
    if not faster:
        closest, vs = max(compared.items(), key=lambda item: item[1].speedup.median)
        return f"No compiled mode is clearly faster than eager; the closest, {closest}: {speedup_words(vs)}"
    best, vs = max(faster.items(), key=lambda item: item[1].speedup.median)
    pays = f"; its compile pays back after {vs.break_even_calls:,.0f} calls" if vs.break_even_calls else ""
    return f"Fastest: {best}, {speedup_words(vs)}{pays}"


def _sweep_ran(sweep: SweepReport | None, spec: Sweep | None) -> tuple[pd.DataFrame | None, str]:
    """The strategies that ran (None without a sweep), and the dimension swept."""
    dimension = spec.dimension if spec else "size"
    return (sweep.summary[sweep.summary.status == "ok"] if sweep else None), dimension


def sweep_latency_caption(sweep: SweepReport | None, spec: Sweep | None) -> str:
    """The compiles of each strategy of a shape sweep (`sweep.sweep_report`; `spec`: the session's sweep)."""
    ran, dimension = _sweep_ran(sweep, spec)
    if ran is None or ran.empty:
        return NO_SWEEP
    counts = ", ".join(f"{r.strategy} {r.compiles}" for r in ran.itertuples())
    calls = len(spec.schedule) if spec else 0
    return f"Compiles over {calls} calls of changing {dimension}: {counts}"


def sweep_steady_caption(sweep: SweepReport | None, spec: Sweep | None) -> str:
    """Each strategy's steady-state latency against static's."""
    ran, dimension = _sweep_ran(sweep, spec)
    if ran is None or ran.empty:
        return NO_SWEEP
    ratios = [f"{r.strategy} {r.ratio_vs_static:.2f}x" for r in ran.itertuples()
              if r.strategy != "static" and r.ratio_vs_static == r.ratio_vs_static]
    return ("Once compiled, each strategy's latency against static's at the same size: " + ", ".join(ratios)
            if ratios else f"Steady-state latency against {dimension}")


def sweep_cumulative_caption(sweep: SweepReport | None, spec: Sweep | None) -> str:
    """Which strategy is ahead over the whole schedule, compiles included."""
    ran, _ = _sweep_ran(sweep, spec)
    if ran is None or ran.empty or sweep is None:
        return NO_SWEEP
    leader = sweep.leader
    totals = ", ".join(f"{r.strategy} {r.total_s:.1f} s" for r in ran.itertuples())
    ahead = f"{leader[0]} is ahead from call {leader[1]}; " if leader else ""
    return f"{ahead}the whole schedule, compiles included: {totals}"


def grid_caption(grid: GridReport) -> str:
    """Where a crossover grid's mode is faster, slower or no different (`grid.grid_report`)."""
    table = grid.table
    counts = table.verdict.value_counts()
    return (f"{grid.mode} against eager over {len(table)} sizes: clearly faster at "
            f"{counts.get('faster', 0)}, clearly slower at {counts.get('slower', 0)}, no clear difference at "
            f"{counts.get('no clear difference', 0)}")


def methodology_caption(found: Methodology, compared: dict[str, Comparison]) -> str:
    """What the naive loop claims beside the proper measurement (`methodology.methodology`; `compared`: the
    session's comparisons with eager)."""
    naive, table = found.naive, found.table
    if table.empty:
        return f"{naive.mode} was not timed properly, so there is nothing to set the naive loop against"
    speed, kernels = table.iloc[0], table.iloc[3]
    vs = compared.get(naive.mode)
    return (f"The naive loop says {speed.naive:.2g}x and counts {kernels.naive:g} \"kernels\" for eager; measured "
            f"properly, {naive.mode} is {speedup_words(vs)} and eager runs {kernels.proper:g} kernels")


def untimed_verdict(eager: ModeRun | None, run: ModeRun | None, values: dict[str, str]) -> str:
    """What a pair of plain profiler traces can say: the kernels of `eager` and of the compiled `run`, from the
    caption fields (`caption_values`), and that there is no timing to compare."""
    if eager is None or eager.summary is None or run is None:
        return "These traces have no eager run and compiled run with kernels to compare."
    return (f"{kernel_change(values['eager_kernels'], values['kernels'], run.mode)}. Plain profiler traces carry no "
            f"timing outside the profiler, so there is no speedup to report; eager's kernels filled {values['busy']} "
            "of its profiled iteration.")
