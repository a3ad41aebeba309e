"""One-line captions computed from a session, for talks and slides: the fields a talk's caption template may
use (worded by the verdict, so a caption never claims more than the measurement), each view's own caption,
the verdict of a pair of plain traces (which carry no timing), and the source stamp every slide carries."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from fusionviz.analysis.grid import compiled_mode, grid_table
from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.methodology import methodology_table
from fusionviz.analysis.summary import Comparison, busy_fraction, comparisons, drawable_runs
from fusionviz.analysis.sweep import sweep_calls, sweep_leader, sweep_summary
from fusionviz.analysis.verdict import ratio_words
from fusionviz.records.session import ModeRun, Session

NOT_TIMED = "not timed"
NO_SWEEP = "No strategy of this sweep ran."

def is_timed(session: Session) -> bool:
    """Whether the session has latencies to compare modes by (a pair of plain traces has none)."""
    return "eager" in comparisons(session)


def focus_run(session: Session, mode: str | None = None) -> ModeRun | None:
    """The compiled run a scene is about: `mode` when it ran, else the first compiled mode that ran."""
    compiled = [r for r in drawable_runs(session) if r.mode != "eager"]
    chosen = next((r for r in compiled if r.mode == mode), None) if mode else None
    return chosen or (compiled[0] if compiled and mode is None else None)


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


def _kernels(run: ModeRun | None) -> str:
    return f"{len(iteration_kernels(run)):g}" if run is not None and run.summary is not None else "–"


def eager_busy(session: Session) -> str:
    """How busy eager keeps the device per call ("48%"), over the unprofiled latency where timed."""
    eager = session.run("eager")
    if eager is None or eager.summary is None:
        return "–"
    vs = comparisons(session).get("eager")
    busy = busy_fraction(eager, vs.latency if vs else None)
    return f"{busy:.0%}" if busy is not None else "–"


def caption_values(session: Session, mode: str | None = None) -> dict[str, str]:
    """Every field a talk's caption may use (`charts.registry.CAPTION_FIELDS`) for this session and the scene's
    mode, as text."""
    run = focus_run(session, mode)
    vs = comparisons(session).get(run.mode) if run else None
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
        "eager_kernels": _kernels(session.run("eager")),
        "kernels": _kernels(run),
        "busy": eager_busy(session),
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


def kernels_caption(session: Session, mode: str | None = None) -> str:
    """What became of eager's kernels under the mode (the collapse and the animation)."""
    return _change(caption_values(session, mode))


def source_caption(session: Session, mode: str | None = None) -> str:
    """Which lines ended in fewer kernels than they launched in eager, and what kept the rest apart."""
    from fusionviz.analysis.source_view import source_view

    eager, run = session.run("eager"), focus_run(session, mode)
    if eager is None or run is None:
        return ""
    view = source_view(eager, run)
    reasons = Counter(s.reason for s in view.separations)
    apart = "; kept apart by " + ", ".join(f"{r} ({n})" for r, n in reasons.most_common()) if reasons else ""
    lines = len(view.lines)
    return (f"{int(view.lines.eager_kernels.sum())} eager kernels from {lines} line{'' if lines == 1 else 's'} of "
            f"the model ended in {len(view.kernel_lines)} {run.mode} kernels{apart}")


def _busy(session: Session, values: dict[str, str]) -> str:
    device = "GPU" if session.environment.device_kind == "cuda" else "CPU"
    return f"eager keeps the {device} busy {values['busy']} of each call"


def timeline_caption(session: Session, mode: str | None = None) -> str:
    v, run = caption_values(session, mode), focus_run(session, mode)
    graphs = (f"; {run.mode} runs as {run.graph_count} graphs, eager code between them"
              if run and (run.graph_count or 0) > 1 else "")
    return f"One steady iteration: {_change(v)}; {_busy(session, v)}{graphs}"


def verdict_caption(session: Session, mode: str | None = None) -> str:
    v = caption_values(session, mode)
    if v["verdict"] == NOT_TIMED:
        return f"{_change(v)}; these traces carry no timing, so no speedup is claimed"
    return f"{v['mode']} is {v['speedup']}: {v['eager_kernels']} → {v['kernels']} kernels; {_busy(session, v)}"


def latency_caption(session: Session, mode: str | None = None) -> str:
    """The fastest mode and when its compile pays back (every mode: `mode` is not used)."""
    compared = {m: c for m, c in comparisons(session).items() if m != "eager"}
    if not compared:
        return "No compiled mode was timed against eager."
    faster = {m: c for m, c in compared.items() if c.verdict == "faster"}
    if not faster:
        closest, vs = max(compared.items(), key=lambda item: item[1].speedup.median)
        return f"No compiled mode is clearly faster than eager; the closest, {closest}: {speedup_words(vs)}"
    best, vs = max(faster.items(), key=lambda item: item[1].speedup.median)
    pays = f"; its compile pays back after {vs.break_even_calls:,.0f} calls" if vs.break_even_calls else ""
    return f"Fastest: {best}, {speedup_words(vs)}{pays}"


def _sweep_ran(session: Session) -> tuple[pd.DataFrame, str]:
    """The strategies that ran, and the dimension swept."""
    summary = sweep_summary(session)
    return summary[summary.status == "ok"], session.sweep.dimension if session.sweep else "size"


def sweep_latency_caption(session: Session, mode: str | None = None) -> str:
    ran, dimension = _sweep_ran(session)
    if ran.empty:
        return NO_SWEEP
    counts = ", ".join(f"{r.strategy} {r.compiles}" for r in ran.itertuples())
    calls = len(session.sweep.schedule) if session.sweep else 0
    return f"Compiles over {calls} calls of changing {dimension}: {counts}"


def sweep_steady_caption(session: Session, mode: str | None = None) -> str:
    ran, dimension = _sweep_ran(session)
    if ran.empty:
        return NO_SWEEP
    ratios = [f"{r.strategy} {r.ratio_vs_static:.2f}x" for r in ran.itertuples()
              if r.strategy != "static" and r.ratio_vs_static == r.ratio_vs_static]
    return ("Once compiled, each strategy's latency against static's at the same size: " + ", ".join(ratios)
            if ratios else f"Steady-state latency against {dimension}")


def sweep_cumulative_caption(session: Session, mode: str | None = None) -> str:
    ran, _ = _sweep_ran(session)
    if ran.empty:
        return NO_SWEEP
    leader = sweep_leader(sweep_calls(session))
    totals = ", ".join(f"{r.strategy} {r.total_s:.1f} s" for r in ran.itertuples())
    ahead = f"{leader[0]} is ahead from call {leader[1]}; " if leader else ""
    return f"{ahead}the whole schedule, compiles included: {totals}"


def grid_caption(session: Session, mode: str | None = None) -> str:
    table = grid_table(session)
    counts = table.verdict.value_counts()
    return (f"{compiled_mode(session)} against eager over {len(table)} sizes: clearly faster at "
            f"{counts.get('faster', 0)}, clearly slower at {counts.get('slower', 0)}, no clear difference at "
            f"{counts.get('no clear difference', 0)}")


def methodology_caption(session: Session, mode: str | None = None) -> str:
    """What the naive loop claims beside the proper measurement (without a naive snippet: the verdict's)."""
    naive = session.naive
    if naive is None:
        return verdict_caption(session, mode)
    table = methodology_table(naive, session)
    if table.empty:
        return f"{naive.mode} was not timed properly, so there is nothing to set the naive loop against"
    speed, kernels = table.iloc[0], table.iloc[3]
    vs = comparisons(session).get(naive.mode)
    return (f"The naive loop says {speed.naive:.2g}x and counts {kernels.naive:g} \"kernels\" for eager; measured "
            f"properly, {naive.mode} is {speedup_words(vs)} and eager runs {kernels.proper:g} kernels")


def untimed_verdict(session: Session) -> str:
    """What a pair of plain profiler traces can say: the kernels, and that there is no timing to compare."""
    eager, run = session.run("eager"), focus_run(session)
    if eager is None or eager.summary is None or run is None:
        return "These traces have no eager run and compiled run with kernels to compare."
    v = caption_values(session, run.mode)
    return (f"{kernel_change(v['eager_kernels'], v['kernels'], run.mode)}. Plain profiler traces carry no "
            f"timing outside the profiler, so there is no speedup to report; eager's kernels filled {v['busy']} "
            "of its profiled iteration.")


def source_stamp(session: Session) -> str:
    """Where a chart's data came from, small enough for a slide's corner: "NVIDIA H200 · torch 2.11.0 ·
    2026-11-29", "live CPU · torch 2.13.0 · 2026-11-30", or "torch.profiler traces · cuda"."""
    env = session.environment
    if session.source == "trace":
        return f"torch.profiler traces · {env.device_kind}"
    device = "CPU" if env.device_kind == "cpu" else (env.device_name or session.config.device)
    parts = [f"live {device}" if session.source == "live" else device, f"torch {env.torch_version}"]
    if env.captured_at:
        parts.append(env.captured_at[:10])
    return " · ".join(parts)
