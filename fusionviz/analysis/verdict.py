"""The verdict: a few plain sentences, computed from a session's numbers, on whether compiling paid off
and why."""

from __future__ import annotations

from fusionviz.analysis.summary import comparisons
from fusionviz.records.session import Session


def _ratio_words(speedup: float) -> str:
    if speedup >= 1.05:
        return f"{speedup:.1f}x faster than eager"
    if speedup <= 0.95:
        return f"{1 / speedup:.1f}x slower than eager"
    return "about as fast as eager"


def _kernel_words(k_eager: float, k_compiled: float) -> str:
    if k_compiled > k_eager:
        return f"it runs more kernels than eager ({k_eager:g} → {k_compiled:g})"
    if k_compiled < k_eager:
        return f"fusion cut the kernels from {k_eager:g} to {k_compiled:g}"
    return f"the kernel count is unchanged ({k_eager:g})"


def verdict(session: Session) -> str:
    """What happened to the main compiled mode and why, the other modes in brief, whether any compile pays
    back, and which modes did not run."""
    eager = session.run("eager")
    if eager is None or not eager.ok or eager.summary is None:
        return "Eager did not run, so there is nothing to compare against."
    compared = comparisons(session)
    on_gpu = session.environment.device_kind == "cuda"
    busy = eager.summary.busy_fraction
    bound = busy is not None and busy < 0.5
    k_eager = eager.summary.kernels_per_iteration
    measured = [r for r in session.runs if r.mode != "eager" and r.mode in compared and r.summary]
    sentences = []
    if measured:
        main, *others = measured
        main_speedup = compared[main.mode].speedup
        k_main = main.summary.kernels_per_iteration if main.summary else k_eager
        causes = [_kernel_words(k_eager, k_main)]
        if main_speedup < 1.05 and bound:
            where = "the GPU is" if on_gpu else "the CPU's kernels are"
            causes.append(f"the model is launch-bound: {where} busy {busy:.0%} of each eager call")
        if main.graph_count and main.graph_count > 1:
            causes.append(f"the model breaks into {main.graph_count} graphs")
        sentences.append(f"{main.mode} is {_ratio_words(main_speedup)} here: {'; '.join(causes)}.")
        if others:
            brief = [f"{r.mode} {_ratio_words(compared[r.mode].speedup).removesuffix(' than eager')} "
                     f"({k_eager:g} → {r.summary.kernels_per_iteration if r.summary else 0:g} kernels)"
                     for r in others]
            sentences.append("Also: " + ", ".join(brief) + ".")
        best = max(measured, key=lambda r: compared[r.mode].speedup)
        best_even = compared[best.mode].break_even_calls
        if best_even is not None and best.compile is not None:
            sentences.append(f"Fastest: {best.mode}; its {best.compile.first_call_s:.1f} s compile pays back after "
                             f"{best_even:,.0f} calls.")
        else:
            sentences.append("No compiled mode beats eager, so no compile time is ever paid back.")
        graphs_help = [r.mode for r in measured if r.mode in ("reduce-overhead", "max-autotune")
                       and compared[r.mode].speedup >= 1.05]
        if bound and on_gpu and graphs_help:
            sentences.append(f"{' and '.join(graphs_help)} replay CUDA graphs, which remove the launch gaps.")
    for run in session.runs:
        if run.status == "not_applicable":
            sentences.append(f"{run.mode} is not applicable here: {(run.error or '').split(';')[0]}.")
        elif run.status == "error":
            sentences.append(f"{run.mode} did not run: {(run.error or '').splitlines()[0]}.")
    return " ".join(sentences)
