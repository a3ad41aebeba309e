"""The verdict: whether compiling paid off and why, as a headline a speaker reads aloud (`headline.Headline`:
the main compiled mode's result rounded for reading, its kernels and bytes, one line on what bounds it) over
details that give each figure exactly, with its spread; "no clear difference" when that is the truth, and
"tied" when the fastest modes' intervals overlap. Every figure is said once per block, at one precision."""

from __future__ import annotations

from collections.abc import Callable

from fusionviz.analysis.bound import Bound, bound_mechanism, bound_sentence, bounds
from fusionviz.analysis.headline import WORDS, Headline, count_words, exact_times, rate_words, read_size, word_count
from fusionviz.analysis.ladder import why_words
from fusionviz.analysis.memory import memory_figures, trade_sentence
from fusionviz.analysis.summary import Comparison
from fusionviz.analysis.timing import NEGLIGIBLE, TOO_WIDE, Estimate, paired_speedup, verdict_of
from fusionviz.records.config import GRAPHED_EAGER
from fusionviz.records.session import ModeRun, Session
from fusionviz.records.variants import uses_cuda_graphs

NO_EAGER = "Eager did not run, so there is nothing to compare against."


def ratio_words(speedup: float) -> str:
    """1.9 → "1.9x faster"; 0.5 → "2x slower"; 1.03 → "1.03x faster" (`headline.rate_words`)."""
    return rate_words(speedup)


def spread_words(speedup: Estimate) -> str:
    """The interval and where it came from: "0.55–0.59x over 30 rounds in 3 processes"."""
    where = (f"over {speedup.samples} rounds in {speedup.processes} process{'es' if speedup.processes > 1 else ''}"
             if speedup.samples else "p10–p90, modes timed apart")
    text = f"{speedup.low:.2f}–{speedup.high:.2f}x {where}"
    return text + ("; one process, so the spread between processes is not in it" if speedup.processes == 1
                   and speedup.samples else "")


def result_words(vs: Comparison) -> str:
    """A mode's result against eager for reading: "10x faster", "1.8x slower", "no clear difference"."""
    return "no clear difference" if vs.verdict == "no clear difference" else rate_words(vs.speedup.median)


def exact_words(vs: Comparison) -> str:
    """A mode's speedup as the details give it: "10.00x (8.67–12.19x)"."""
    s = vs.speedup
    return f"{exact_times(s.median)} ({s.low:.2f}–{s.high:.2f}x)"


def mode_words(mode: str, vs: Comparison, k_eager: float, k_mode: float) -> str:
    """A mode's result in the details' few words: "reduce-overhead faster, 6.12x (5.46–7.70x), 18 → 2 kernels"."""
    return f"{mode} {vs.verdict}, {exact_words(vs)}, {k_eager:g} → {count_words(k_mode, 'kernel')}"


def leaders(compared: dict[str, Comparison], paired: Callable[[str, str], Estimate | None]) -> list[str]:
    """The fastest compiled modes of `compared` (eager and eager as one CUDA graph are not compiled): the clearly
    faster mode of highest median, and every clearly faster mode tied with it, fastest first; empty when none is
    clearly faster. Two modes are tied when their speedup from paired rounds (`paired(a, b)`:
    `timing.paired_speedup` of the session) shows no clear difference, as the verdict judges one against eager;
    where the rounds are not paired (sessions of schema 1), when their intervals against eager overlap."""
    faster = {m: c.speedup for m, c in compared.items()
              if m not in ("eager", GRAPHED_EAGER) and c.verdict == "faster"}
    if not faster:
        return []
    best = max(faster, key=lambda m: faster[m].median)
    top = faster[best]

    def tied(mode: str) -> bool:
        between = paired(best, mode)
        if between is not None:
            return verdict_of(between) == "no clear difference"
        return faster[mode].low <= top.high and top.low <= faster[mode].high

    return [best, *sorted((m for m in faster if m != best and tied(m)), key=lambda m: -faster[m].median)]


def graphed_ahead(compared: dict[str, Comparison], top: list[str]) -> Comparison | None:
    """Eager replayed as one CUDA graph, where it is clearly faster than eager and ahead of the fastest compiled
    mode (`top`: `leaders`) by median: then that mode is the fastest *compiled* one, not the fastest on the chart."""
    graphed = compared.get(GRAPHED_EAGER)
    if graphed is None or graphed.verdict != "faster":
        return None
    return graphed if not top or graphed.speedup.median > compared[top[0]].speedup.median else None


def and_words(names: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def fastest_sentence(compared: dict[str, Comparison], runs: dict[str, ModeRun], top: list[str]) -> str:
    """Which compiled mode is fastest, or which are tied (`top`: `leaders`), and when its compile pays back; that
    none is clearly faster, where none is."""
    if not top:
        return "No compiled mode is clearly faster than eager, so no compile time is paid back."
    paying = [(compared[m].break_even_calls, m) for m in top
              if compared[m].break_even_calls is not None and runs[m].compile is not None]
    fastest = "Fastest compiled mode" if graphed_ahead(compared, top) else "Fastest"
    if len(top) == 1:
        head = f"{fastest}: {top[0]}"
    else:
        head = f"{fastest}, tied: {and_words(top)} (no clear difference between them, round by round)"
    if not paying:
        return head + "."
    calls, mode = min(paying, key=lambda p: p[0] or 0.0)
    compile_s = runs[mode].compile.first_call_s if runs[mode].compile else 0.0  # type: ignore[union-attr]
    owner = "its" if len(top) == 1 else f"{mode}'s"
    when = f"after {calls:,.0f} calls" if len(paying) == 1 else f"soonest, after {calls:,.0f} calls"
    return f"{head}; {owner} {compile_s:.1f} s compile pays back {when}."


def _kernel_sentence(k_eager: float, k_compiled: float) -> str:
    if k_compiled > k_eager:
        return f"It runs more kernels than eager ({k_eager:g} → {k_compiled:g})."
    if k_compiled < k_eager:
        return f"Fusion cut the kernels from {k_eager:g} to {k_compiled:g}."
    return f"The kernel count is unchanged ({count_words(k_eager, 'kernel')})."


def unclear_words(s: Estimate) -> str:
    """Why a speedup interval is no clear difference (`timing.verdict_of`): it straddles 1, it is too wide to
    call, or the difference it shows is too small to act on."""
    if s.high / s.low > TOO_WIDE:
        return "the spread is too wide to call"
    if s.low <= 1 <= s.high:
        return "the interval straddles 1"
    return f"a difference under {NEGLIGIBLE:.0%} is none to act on"


def _result_sentence(mode: str, vs: Comparison) -> str:
    """The mode's speedup with its interval: "default is faster than eager here: 10.00x (8.67–12.19x over 30
    rounds in 3 processes)."""
    s = vs.speedup
    exact = f"{exact_times(s.median)} ({spread_words(s)})"
    if vs.verdict == "no clear difference":
        return f"{mode} shows no clear difference from eager here: {exact}, so {unclear_words(s)}."
    return f"{mode} is {vs.verdict} than eager here: {exact}."


def _measured(session: Session, compared: dict[str, Comparison]) -> list[ModeRun]:
    """The modes timed against eager with kernels, a compiled mode first (eager as a CUDA graph is a rung)."""
    measured = [r for r in session.runs if r.mode != "eager" and r.mode in compared and r.summary]
    return sorted(measured, key=lambda r: r.mode == GRAPHED_EAGER)


def verdict_sentences(session: Session, compared: dict[str, Comparison], busy: dict[str, float | None],
                      found: dict[str, Bound], top: list[str] | None = None) -> list[str]:
    """The verdict's details, one mechanism a sentence: the main compiled mode's speedup with its spread, its
    kernels, why (`ladder.why_words`: kernel time, then its class and eager's), the other modes in brief, the
    fastest (or tied) and when it pays back, the trade in memory where it was measured
    (`memory.trade_sentence`), and the modes that did not run; from the session's runs, the
    comparisons with eager (`summary.comparisons`), busy fractions, host/GPU times (`bound.bounds`) and the fastest
    modes (`leaders`, taken here when not given)."""
    eager = session.run("eager")
    if eager is None or not eager.ok or eager.summary is None or "eager" not in compared:
        return [NO_EAGER]
    on_gpu = session.environment.device_kind == "cuda"
    k_eager = eager.summary.kernels_per_iteration
    measured = _measured(session, compared)
    said = []
    if measured:
        main, *others = measured
        vs = compared[main.mode]
        said.append(_result_sentence(main.mode, vs))
        said.append(_kernel_sentence(k_eager, main.summary.kernels_per_iteration if main.summary else k_eager))
        if main.graph_count and main.graph_count > 1:
            said.append(f"The model breaks into {main.graph_count} graphs, with eager code between them.")
        said += why_words(found, busy, main.mode)
        if others:
            said.append("Also: " + "; ".join(
                mode_words(r.mode, compared[r.mode], k_eager, r.summary.kernels_per_iteration if r.summary else 0)
                for r in others) + ".")
        if top is None:
            top = leaders(compared, lambda a, b: paired_speedup(session, a, b))
        said.append(fastest_sentence(compared, {r.mode: r for r in measured}, top))
        trade = trade_sentence(memory_figures(session), main.mode, vs)
        if trade is not None:
            said.append(trade)
        host_bound = on_gpu and "eager" in found and found["eager"].kind == "host-bound"
        graphs_help = [r.mode for r in measured if uses_cuda_graphs(r.mode) and compared[r.mode].verdict == "faster"]
        if host_bound and graphs_help:
            said.append(f"{and_words(graphs_help)} {'replays' if len(graphs_help) == 1 else 'replay'} CUDA graphs, "
                        "which take eager's launches off the host.")
    for run in session.runs:
        if run.status == "not_applicable":
            said.append(f"{run.mode} is not applicable here: {(run.error or '').split(';')[0].rstrip('.')}.")
        elif run.status == "error":
            said.append(f"{run.mode} did not run: {(run.error or '').splitlines()[0].rstrip('.')}.")
    return said


def verdict(session: Session, latencies: dict[str, Estimate], speedups: dict[str, Estimate],
            compared: dict[str, Comparison], busy: dict[str, float | None],
            found: dict[str, Bound] | None = None) -> str:
    """The verdict's details as one paragraph (`verdict_sentences`); `found` is `bound.bounds(session)`, taken
    here when not given. `latencies` and `speedups` are those `compared` was made from."""
    return " ".join(verdict_sentences(session, compared, busy, bounds(session) if found is None else found))


def mode_headline(mode: str, vs: Comparison, k_eager: float, k_mode: float, moved: tuple[int, int] | None,
                  found: Bound | None, graphs: int | None = None) -> Headline:
    """One mode against eager for reading aloud: "default: 10x faster. 18 kernels became 1, 2.9 GB → 130 MB
    moved", as much of it as fits WORDS words; its mechanism the mode's class (`bound.bound_mechanism`; on the
    CPU, its graph breaks, if any); its details the exact speedup with its interval and the class's sentence.
    `moved`: eager's bytes per iteration and the mode's, where both are known."""
    kernels = (f"{k_eager:g} kernels became {k_mode:g}" if k_mode != k_eager
               else f"still {count_words(k_mode, 'kernel')}")
    text = f"{mode}: {result_words(vs)}. {kernels[0].upper()}{kernels[1:]}"
    if moved is not None and moved[0] > 0 and abs(moved[1] / moved[0] - 1) >= 0.05:
        longer = f"{text}, {read_size(moved[0])} → {read_size(moved[1])} moved"
        text = longer if word_count(longer) <= WORDS else text
    mechanism = bound_mechanism(found) if found is not None else ""
    if not mechanism and graphs and graphs > 1:
        mechanism = f"It compiles into {graphs} graphs, with eager code between them."
    details = [_result_sentence(mode, vs)]
    if found is not None and found.kind is not None:
        details.append(bound_sentence(found))
    return Headline(text, mechanism, tuple(details))


def session_headline(session: Session, compared: dict[str, Comparison], busy: dict[str, float | None],
                     found: dict[str, Bound], moved: dict[str, tuple[int, int]], top: list[str]) -> Headline:
    """The session's headline: the main compiled mode (`mode_headline`) over the verdict's sentences
    (`verdict_sentences`, with the fastest modes `top`); `moved` gives each mode's bytes against eager's where
    both are known."""
    details = tuple(verdict_sentences(session, compared, busy, found, top))
    eager = session.run("eager")
    measured = _measured(session, compared)
    if details == (NO_EAGER,) or eager is None or eager.summary is None:
        return Headline("Eager did not run: nothing to compare against", "", details)
    if not measured:
        return Headline("Only eager was timed: nothing to compare it with", "", details)
    main = measured[0]
    k_mode = main.summary.kernels_per_iteration if main.summary else 0.0
    one = mode_headline(main.mode, compared[main.mode], eager.summary.kernels_per_iteration, k_mode,
                        moved.get(main.mode), found.get(main.mode), main.graph_count)
    return Headline(one.text, one.mechanism, details)
