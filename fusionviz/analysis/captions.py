"""Captions for talks and slides, each worded from the figures it is about: the fields a talk's caption template
may use (worded by the verdict, so a caption never claims more than the measurement), each view's own headline
(`headline.Headline`: a few words to read aloud, one line of mechanism, the exact figures in its details;
`charts.view_captions` hands each the parts of a session's Report it needs), and the headline of plain traces
(which carry no timing)."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from fusionviz.analysis.bound import Bound, bound_sentence
from fusionviz.analysis.grid import GridReport
from fusionviz.analysis.headline import MECHANISM_CHARS, Headline, sentences, sig, times
from fusionviz.analysis.kernel_costs import RunCosts, roofline_runs
from fusionviz.analysis.links import Collapse
from fusionviz.analysis.methodology import Methodology
from fusionviz.analysis.source_view import SourceView
from fusionviz.analysis.summary import Comparison
from fusionviz.analysis.sweep import SweepReport
from fusionviz.analysis.timing import Estimate
from fusionviz.analysis.verdict import and_words, exact_words, graphed_ahead, ratio_words, result_words
from fusionviz.records.config import GRAPHED_EAGER
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
    return f"{mode} keeps eager's {kernels} kernels: nothing fused away"


def _fitting(*candidates: str) -> str:
    """The first of `candidates` that fits a line of mechanism (MECHANISM_CHARS), else ""."""
    return next((c for c in candidates if len(c) <= MECHANISM_CHARS), "")


CLASS_WORDS = {"triton_pointwise": "pointwise kernel", "triton_reduction": "reduction", "triton_template":
               "GEMM template", "cpp_fused": "C++ kernel"}


def fusion_words(collapse: Collapse | None) -> str:
    """The compiled kernel linked to the most eager kernels, in one sentence: "One reduction fuses the work of 5 eager
    kernels (add, argmax, index, mul, relu)."; that none absorbed more than one; "" without links to read."""
    if collapse is None or collapse.links.table.empty:
        return ""
    groups = collapse.links.table.groupby("compiled_index").eager_index.nunique()
    index, most = int(groups.idxmax()), int(groups.max())
    if most < 2:
        return "No compiled kernel takes in more than one eager kernel."
    row = collapse.compiled.iloc[index]
    kind = CLASS_WORDS.get(str(row.kernel_class), "kernel")
    ops = [str(op) for op in row.fused_ops]
    head = f"One {kind} fuses the work of {most} eager kernels"
    listed = [f"{head} ({', '.join(ops[:n])}{', …' if n < len(ops) else ''})." for n in range(len(ops), 0, -1)]
    return _fitting(*listed, f"{head}.")


def kernels_headline(values: dict[str, str], collapse: Collapse | None = None) -> Headline:
    """What became of eager's kernels under the mode (the collapse and the animation), from the caption fields
    (`caption_values`), and the biggest fusion (`fusion_words`, from the mode's `collapse`)."""
    return Headline(kernel_change(values["eager_kernels"], values["kernels"], values["mode"]), fusion_words(collapse))


def source_headline(run: ModeRun | None, views: dict[str, SourceView]) -> Headline:
    """Which lines ended in fewer kernels than they launched in eager under the compiled run a view is about,
    and what kept the rest apart (`views`: each compiled mode's source view)."""
    view = views.get(run.mode) if run else None
    if run is None or view is None:
        return Headline("This session kept no source lines for its kernels")
    reasons = Counter(s.reason for s in view.separations)
    lines, kernels = len(view.lines), len(view.kernel_lines)
    text = (f"{int(view.lines.eager_kernels.sum())} eager kernels from {lines} line{'' if lines == 1 else 's'} "
            f"became {kernels} {run.mode} kernel{'' if kernels == 1 else 's'}")
    apart = [f"{r} ({n})" for r, n in reasons.most_common()]
    mechanism = _fitting(*(f"Kept apart by {', '.join(apart[:n])}{', …' if n < len(apart) else ''}."
                           for n in range(len(apart), 0, -1))) if apart else "Nothing kept them apart."
    every = f"Kept apart by {', '.join(apart)}."
    return Headline(text, mechanism, (every,) if apart and every != mechanism else ())


def _busy(device_kind: str, values: dict[str, str]) -> str:
    device = "GPU" if device_kind == "cuda" else "CPU"
    return f"Eager keeps the {device} busy {values['busy']} of each call"


def timeline_headline(values: dict[str, str], run: ModeRun | None, device_kind: str) -> Headline:
    """One steady iteration of the compiled run a view is about, from the caption fields (`caption_values`):
    what became of eager's kernels, how busy eager keeps the device, and the graphs the mode broke into."""
    graphs = ((f"{run.mode} runs as {run.graph_count} graphs, with eager code between them.",)
              if run and (run.graph_count or 0) > 1 else ())
    # one line on a slide: the strip over each lane says the timed call; the lab's caption says the stretch
    return Headline(f"One iteration: {kernel_change(values['eager_kernels'], values['kernels'], values['mode'])}",
                    f"{_busy(device_kind, values)}.", graphs)


def stretch_words(stretch: dict[str, float], latencies: dict[str, Estimate], modes: list[str]) -> str:
    """"default's profiled iteration ran 2.6x as long as its timed call (0.148 ms), eager's 1.3x (0.122 ms): the
    profiler's own overhead", for those of `modes` that were timed and profiled (`stretch`: each mode's profiled
    stretch, `trace_stats.profiled_stretch`; `latencies` their timed latencies); "" for none."""
    found = [(m, stretch[m], latencies[m].median) for m in modes if m in stretch]
    if not found:
        return ""
    (mode, times_, ms), *rest = found
    more = "".join(f", {m}'s {x:.1f}x ({t:.3g} ms)" for m, x, t in rest)
    return (f"{mode}'s profiled iteration ran {times_:.1f}x as long as its timed call ({ms:.3g} ms){more}, medians: "
            "the profiler's own overhead")


def latency_headline(comparisons: dict[str, Comparison], top: list[str]) -> Headline:
    """The fastest compiled mode against eager (`summary.comparisons`), or the modes tied for it (`top`:
    `verdict.leaders`), and when its compile pays back."""
    compared = {m: c for m, c in comparisons.items() if m != "eager"}
    if not compared:
        return Headline("No compiled mode was timed against eager")
    details = tuple(f"{m}: {c.verdict}, {exact_words(c)}." for m, c in compared.items())
    if not top:
        graphed = compared.get(GRAPHED_EAGER)
        if graphed is not None and graphed.verdict == "faster":
            return Headline("No compiled mode is clearly faster than eager",
                            f"Eager replayed as one CUDA graph is {result_words(graphed)}.", details)
        closest, vs = max(((m, c) for m, c in compared.items() if m != GRAPHED_EAGER),
                          key=lambda item: item[1].speedup.median, default=(None, None))
        return Headline("No compiled mode is clearly faster than eager",
                        f"The closest, {closest}: {result_words(vs)}." if closest and vs else "", details)
    graphed = graphed_ahead(compared, top)
    fastest = "Fastest compiled mode" if graphed else "Fastest"
    ahead = f"Eager replayed as one CUDA graph, with no compiler, is {result_words(graphed)}." if graphed else ""
    if len(top) > 1:
        other = "the other" if len(top) == 2 else "another"
        return Headline(f"{fastest}, tied: {and_words(top)}",
                        ahead or f"Round by round, none of them is clearly faster than {other}.", details)
    best = comparisons[top[0]]
    pays = (f"Its compile pays back after {calls_words(best.break_even_calls)} calls." if best.break_even_calls
            else "")
    return Headline(f"{fastest}: {top[0]}, {result_words(best)} than eager", ahead or pays, details)


def calls_words(calls: float) -> str:
    """A number of calls rounded for reading: "about 860", "12" (exact below 100)."""
    return f"{calls:,.0f}" if calls < 100 else f"about {sig(calls)}"


def _sweep_ran(sweep: SweepReport | None, spec: Sweep | None) -> tuple[pd.DataFrame | None, str]:
    """The strategies that ran (None without a sweep), and the dimension swept."""
    dimension = spec.dimension if spec else "size"
    return (sweep.summary[sweep.summary.status == "ok"] if sweep else None), dimension


def sweep_latency_headline(sweep: SweepReport | None, spec: Sweep | None) -> Headline:
    """The strategies of a shape sweep (`sweep.sweep_report`; `spec`: the session's sweep) that compiled least
    and most, and every strategy's compiles in the details."""
    ran, dimension = _sweep_ran(sweep, spec)
    if ran is None or ran.empty:
        return Headline(NO_SWEEP.rstrip("."))
    counts = dict(zip(ran.strategy, ran.compiles, strict=True))
    fewest, most = min(counts.values()), max(counts.values())
    least = " and ".join(m for m, n in counts.items() if n == fewest)
    worst = " and ".join(m for m, n in counts.items() if n == most)
    calls = len(spec.schedule) if spec else 0
    return Headline(f"Fewest compiles: {least} ({fewest}); most: {worst} ({most})",
                    f"Over {calls} calls of changing {dimension}.",
                    ("Compiles: " + ", ".join(f"{m} {n}" for m, n in counts.items()) + ".",))


def sweep_steady_headline(sweep: SweepReport | None, spec: Sweep | None) -> Headline:
    """Each strategy's steady-state latency against static's: the fastest and slowest against it in the text,
    each in the details."""
    ran, dimension = _sweep_ran(sweep, spec)
    if ran is None or ran.empty:
        return Headline(NO_SWEEP.rstrip("."))
    ratios = {r.strategy: r.ratio_vs_static for r in ran.itertuples()
              if r.strategy != "static" and r.ratio_vs_static == r.ratio_vs_static}
    if not ratios:
        return Headline(f"Steady-state latency against {dimension}")
    best, worst = min(ratios, key=lambda m: ratios[m]), max(ratios, key=lambda m: ratios[m])
    text = f"Once compiled: {best} {times(ratios[best])} static's latency"
    if worst != best:
        text += f", {worst} {times(ratios[worst])}"
    return Headline(text, "Medians over sizes, at the same size as static.",
                    ("Against static's latency at the same size: "
                     + ", ".join(f"{m} {v:.2f}x" for m, v in ratios.items()) + ".",))


def sweep_cumulative_headline(sweep: SweepReport | None, spec: Sweep | None) -> Headline:
    """Which strategy is ahead over the whole schedule, compiles included."""
    ran, _ = _sweep_ran(sweep, spec)
    if ran is None or ran.empty or sweep is None:
        return Headline(NO_SWEEP.rstrip("."))
    totals = dict(zip(ran.strategy, ran.total_s, strict=True))
    slowest = max(totals, key=lambda m: totals[m])
    details = ("The whole schedule, compiles included: " + ", ".join(f"{m} {t:.1f} s" for m, t in totals.items())
               + ".",)
    mechanism = f"Slowest: {slowest}, {sig(totals[slowest])} s over the schedule, compiles included."
    if sweep.leader is None:
        return Headline("No strategy leads the whole schedule", mechanism, details)
    leader, call = sweep.leader
    return Headline(f"{leader} leads from call {call}: {sig(totals.get(leader, 0.0))} s in all", mechanism, details)


def grid_headline(grid: GridReport) -> Headline:
    """Where a crossover grid's mode is faster, slower or no different (`grid.grid_report`), and how busy eager
    keeps the device where it wins and where it loses."""
    table = grid.table
    counts = table.verdict.value_counts()
    text = (f"{grid.mode} faster at {counts.get('faster', 0)} of {len(table)} sizes, slower at "
            f"{counts.get('slower', 0)}")
    busy = table.dropna(subset=["eager_busy"])
    won = busy[busy.verdict == "faster"].eager_busy.median() if len(busy) else None
    lost = busy[busy.verdict == "slower"].eager_busy.median() if len(busy) else None
    mechanism = (f"Eager keeps the device busy {won:.0%} where it wins, {lost:.0%} where it loses."
                 if won == won and lost == lost and won is not None and lost is not None else "")
    return Headline(text, mechanism, (grid.sentence,))


def methodology_headline(found: Methodology, compared: dict[str, Comparison]) -> Headline:
    """What the naive loop claims beside the proper measurement (`methodology.methodology`; `compared`: the
    session's comparisons with eager)."""
    naive, table = found.naive, found.table
    if table.empty:
        return Headline(f"{naive.mode} was not timed properly", "There is nothing to set the naive loop against.")
    speed, kernels = table.iloc[0], table.iloc[3]
    vs = compared.get(naive.mode)
    measured = result_words(vs) if vs else NOT_TIMED
    return Headline(f"Naive loop: {ratio_words(speed.naive)}; measured: {measured}",
                    f"It counts {kernels.naive:g} key_averages() rows as kernels; eager runs {kernels.proper:g}.",
                    (found.note,) if found.note else ())


def untimed_headline(eager: ModeRun | None, run: ModeRun | None, values: dict[str, str],
                     found: dict[str, Bound]) -> Headline:
    """What plain profiler traces can say: the kernels of `eager` and of the compiled `run` (from the caption
    fields, `caption_values`), or of a single trace, with the class its profile gives (`found`: `bound.bounds`),
    and that there is no timing to compare."""
    untimed = "Plain traces carry no timing outside the profiler, so no speedup is claimed."
    if eager is not None and eager.summary is not None and run is not None:
        change = kernel_change(values["eager_kernels"], values["kernels"], run.mode)
        return Headline(f"{change}, untimed", untimed, (
            f"{change}.", "Plain profiler traces carry no timing outside the profiler, so there is no speedup to "
            f"report; eager's kernels filled {values['busy']} of its profiled iteration."))
    single = run or eager
    if single is None or single.summary is None:
        return Headline("These traces have no kernels to compare", "", (
            "These traces have no eager run and compiled run with kernels to compare.",))
    n = single.summary.kernels_per_iteration
    details = [f"The trace runs {n:g} kernel{'' if n == 1 else 's'} per iteration."]
    if single.mode in found and found[single.mode].kind:
        details.append(bound_sentence(found[single.mode]))
    return Headline(f"One trace: {n:g} kernel{'' if n == 1 else 's'} per iteration", untimed, tuple(details))


def roofline_headline(caption: str, eager: ModeRun | None, focus: ModeRun | None,
                      costs: dict[str, RunCosts]) -> Headline:
    """How close the kernels the roofline draws (`kernel_costs.roofline_runs`) come to their measured roofs: how
    many pass theirs and by how much, else the closest one's percentage; the kernel named in the line under it,
    the roofline's caption (`caption`, `kernel_costs.roofline_caption`) as its details."""
    judged = sorted(((got.pct_of_ceiling, row.short_name or row.name, run.mode, got.roof)
                     for run in roofline_runs(eager, focus, costs)
                     for row, got in zip(run.kernels, costs[run.mode].achieved, strict=True)
                     if run.summary and row.iteration == run.summary.representative_iteration
                     and got is not None and got.pct_of_ceiling is not None), reverse=True)
    said = tuple(s[:1].upper() + s[1:] for s in sentences(caption))
    if not judged:
        return Headline("No kernel shown has a measured ceiling", "", said)
    pct, name, mode, roof = judged[0]
    above = sum(1 for p, *_ in judged if p > 100)
    if above:
        many = "1 kernel beats its" if above == 1 else f"{above} kernels beat their"
        return Headline(f"{many} measured roof, by up to {pct - 100:.0f}%",
                        "A roof is the calibration's best rate: data left in cache can pass it.", said)
    line = f"{name} of {mode}, against the {roof}."
    if len(line) > MECHANISM_CHARS:
        keep = MECHANISM_CHARS - len(line) + len(name) - 1
        line = f"{name[:keep]}… of {mode}, against the {roof}."
    return Headline(f"The closest kernel runs at {pct:.0f}% of its measured roof", line, said)
