"""The verdict: a few plain sentences, computed from a session's numbers, on whether compiling paid off and
why, each figure with its spread, and "no clear difference" when that is the truth."""

from __future__ import annotations

from fusionviz.analysis.ladder import why_words
from fusionviz.analysis.summary import Comparison
from fusionviz.analysis.timing import Estimate
from fusionviz.records.config import CUDA_GRAPH_MODES, GRAPHED_EAGER
from fusionviz.records.session import Session


def ratio_words(speedup: float) -> str:
    """1.9 → "1.9x faster"; 0.5 → "2x slower"; 1.03 → "1.03x faster" (two significant digits would say "1x")."""
    ratio, words = (speedup, "faster") if speedup >= 1 else (1 / speedup, "slower")
    return f"{ratio:.2f}x {words}" if ratio < 1.1 else f"{ratio:.2g}x {words}"


def spread_words(speedup: Estimate) -> str:
    """The interval and where it came from: "0.55–0.59x over 30 rounds in 3 processes"."""
    where = (f"over {speedup.samples} rounds in {speedup.processes} process{'es' if speedup.processes > 1 else ''}"
             if speedup.samples else "p10–p90, modes timed apart")
    text = f"{speedup.low:.2f}–{speedup.high:.2f}x {where}"
    return text + ("; one process, so the spread between processes is not in it" if speedup.processes == 1
                   and speedup.samples else "")


def mode_words(mode: str, vs: Comparison) -> str:
    """A mode's result in a few words: "default 1.9x slower (1.8–2.0x)" or "no clear difference"."""
    s = vs.speedup
    if vs.verdict == "no clear difference":
        return f"{mode} no clear difference ({s.low:.2f}–{s.high:.2f}x)"
    return f"{mode} {ratio_words(s.median)} ({s.low:.2f}–{s.high:.2f}x)"


def _kernel_words(k_eager: float, k_compiled: float) -> str:
    if k_compiled > k_eager:
        return f"it runs more kernels than eager ({k_eager:g} → {k_compiled:g})"
    if k_compiled < k_eager:
        return f"fusion cut the kernels from {k_eager:g} to {k_compiled:g}"
    return f"the kernel count is unchanged ({k_eager:g})"


def verdict(session: Session, latencies: dict[str, Estimate], speedups: dict[str, Estimate],
            compared: dict[str, Comparison], busy: dict[str, float | None]) -> str:
    """What happened to the main compiled mode and why, the other modes in brief, whether any compile pays
    back, and which modes did not run; from the session's runs, its modes' latencies, speedups and comparisons
    with eager (`summary.comparisons`), and each run's busy fraction (`summary.busy_fraction`, by mode)."""
    eager = session.run("eager")
    if eager is None or not eager.ok or eager.summary is None or "eager" not in compared:
        return "Eager did not run, so there is nothing to compare against."
    on_gpu = session.environment.device_kind == "cuda"
    eager_busy = busy["eager"]
    bound = eager_busy is not None and eager_busy < 0.5
    k_eager = eager.summary.kernels_per_iteration
    measured = [r for r in session.runs if r.mode != "eager" and r.mode in compared and r.summary]
    measured.sort(key=lambda r: r.mode == GRAPHED_EAGER)  # a compiled mode leads; eager as a CUDA graph is a rung
    sentences = []
    if measured:
        main, *others = measured
        vs = compared[main.mode]
        k_main = main.summary.kernels_per_iteration if main.summary else k_eager
        causes = [_kernel_words(k_eager, k_main)]
        if vs.verdict != "faster" and bound:
            where = "the GPU is" if on_gpu else "the CPU's kernels are"
            causes.append(f"the model is launch-bound: {where} busy {eager_busy:.0%} of each eager call")
        if main.graph_count and main.graph_count > 1:
            causes.append(f"the model breaks into {main.graph_count} graphs")
        if vs.verdict == "no clear difference":
            straddles = vs.speedup.low <= 1 <= vs.speedup.high
            why = "the interval straddles 1" if straddles else "the spread is too wide to call"
            sentences.append(f"{main.mode} shows no clear difference from eager here: its speedup ran "
                             f"{spread_words(vs.speedup)}, so {why}; {'; '.join(causes)}.")
        else:
            sentences.append(f"{main.mode} is {ratio_words(vs.speedup.median)} than eager here "
                             f"({spread_words(vs.speedup)}): {'; '.join(causes)}.")
        reason = why_words(session, latencies, speedups, main.mode)
        if reason:
            sentences.append(reason)
        if others:
            brief = [f"{mode_words(r.mode, compared[r.mode])}, {k_eager:g} → "
                     f"{r.summary.kernels_per_iteration if r.summary else 0:g} kernels" for r in others]
            sentences.append("Also: " + "; ".join(brief) + ".")
        faster = [r for r in measured if compared[r.mode].verdict == "faster"]
        if faster:
            best = max(faster, key=lambda r: compared[r.mode].speedup.median)
            even = compared[best.mode].break_even_calls
            if even is not None and best.compile is not None:
                sentences.append(f"Fastest: {best.mode}; its {best.compile.first_call_s:.1f} s compile pays back "
                                 f"after {even:,.0f} calls.")
        else:
            sentences.append("No compiled mode is clearly faster than eager, so no compile time is paid back.")
        graphs_help = [r.mode for r in faster if r.mode in CUDA_GRAPH_MODES]
        if bound and on_gpu and graphs_help:
            sentences.append(f"{' and '.join(graphs_help)} replay CUDA graphs, which remove the launch gaps.")
    for run in session.runs:
        if run.status == "not_applicable":
            sentences.append(f"{run.mode} is not applicable here: {(run.error or '').split(';')[0]}.")
        elif run.status == "error":
            sentences.append(f"{run.mode} did not run: {(run.error or '').splitlines()[0]}.")
    return " ".join(sentences)
