"""What a session means: speedups with their spread, break-even, fusion links, and the verdict sentence.

DataFrames and plain values in and out; no drawing (that is `charts`), no torch.
"""

from __future__ import annotations

import pandas as pd

from fusionviz.kernels import op_family
from fusionviz.session import ModeRun, Session

SUMMARY_COLUMNS: dict[str, str] = {
    "mode": "compile mode (eager is the baseline)",
    "status": "ok, error or not_applicable",
    "median_ms": "median latency per call, ms",
    "p10_ms": "10th percentile of the per-repeat means, ms",
    "p90_ms": "90th percentile of the per-repeat means, ms",
    "speedup": "eager median / this median (>1 is faster)",
    "speedup_low": "eager p10 / this p90: the pessimistic end",
    "speedup_high": "eager p90 / this p10: the optimistic end",
    "kernels_per_iteration": "device kernels (GPU) or top-level compute calls (CPU) per iteration",
    "launches_per_iteration": "CUDA launch calls per iteration (GPU only)",
    "busy_pct": "kernel time / iteration span, percent",
    "compile_s": "first compiled call, s",
    "cache": "Inductor FX-graph cache: warm, cold, mixed",
    "break_even_calls": "calls until compile time is paid back; NaN with a compiled mode: never",
    "graphs": "compiled graphs (torch._dynamo.explain)",
    "graph_breaks": "graph breaks",
    "recompiles": "recompiles during the run",
}


def finalise(session: Session) -> Session:
    """Fill in each compiled mode's speedup (with spread) and break-even calls against eager."""
    eager = session.run("eager")
    base = eager.latency if eager and eager.ok else None
    for run in session.runs:
        if not run.ok or run.latency is None or base is None:
            continue
        lat = run.latency
        run.speedup = base.median_ms / lat.median_ms
        run.speedup_low = base.p10_ms / lat.p90_ms
        run.speedup_high = base.p90_ms / lat.p10_ms
        saved_ms = base.median_ms - lat.median_ms
        if run.mode != "eager" and run.compile is not None:
            run.break_even_calls = run.compile.first_call_s * 1e3 / saved_ms if saved_ms > 0 else None
    return session


def summary_table(session: Session) -> pd.DataFrame:
    """One row per mode; columns in SUMMARY_COLUMNS."""
    rows = []
    for run in session.runs:
        lat, summ, comp = run.latency, run.summary, run.compile
        rows.append({
            "mode": run.mode, "status": run.status,
            "median_ms": lat.median_ms if lat else None, "p10_ms": lat.p10_ms if lat else None,
            "p90_ms": lat.p90_ms if lat else None,
            "speedup": run.speedup, "speedup_low": run.speedup_low, "speedup_high": run.speedup_high,
            "kernels_per_iteration": summ.kernels_per_iteration if summ else None,
            "launches_per_iteration": summ.launches_per_iteration if summ else None,
            "busy_pct": 100 * summ.busy_fraction if summ and summ.busy_fraction is not None else None,
            "compile_s": comp.first_call_s if comp else None, "cache": comp.cache if comp else None,
            "break_even_calls": run.break_even_calls,
            "graphs": run.graph_count, "graph_breaks": len(run.graph_breaks) if run.mode != "eager" else None,
            "recompiles": run.recompiles,
        })
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def iteration_kernels(run: ModeRun, iteration: int | None = None) -> pd.DataFrame:
    """The kernels of one profiled iteration (the representative one by default), in launch order."""
    frame = run.kernel_frame()
    if iteration is None:
        iteration = run.summary.representative_iteration if run.summary else 0
    return frame[frame.iteration == iteration].sort_values("start_us", kind="stable").reset_index(drop=True)


LINK_COLUMNS: dict[str, str] = {
    "eager_index": "row of the eager iteration's kernel table",
    "compiled_index": "row of the compiled iteration's kernel table",
    "family": "the op family they share (matmul, layer_norm, gelu...)",
}


def fusion_links(eager: pd.DataFrame, compiled: pd.DataFrame) -> pd.DataFrame:
    """Which eager kernels each compiled kernel absorbed, matched by op family in launch order.

    Kernels launched by one op call (a GEMM split in two kernels) count as one unit on either side. A
    compiled GEMM takes the next eager GEMM; a fused kernel that names a matmul without being one
    (Inductor's `addmm_relu` bias epilogue) points back at the GEMM it follows; other ops take the next
    eager unit of their family. Eager kernels left unmatched did not map to anything.
    """
    units = _op_units(eager)
    by_family: dict[str, list[list[int]]] = {}
    for unit in units:
        first = eager.iloc[unit[0]]
        for family in _families(first.fused_ops, first.kernel_class):
            by_family.setdefault(family, []).append(unit)
    taken: dict[str, int] = {}
    last: dict[str, list[int]] = {}
    links = []
    previous: tuple[int, dict[str, list[int]]] | None = None
    for ci, (ops, kernel_class, op_id) in enumerate(
            zip(compiled.fused_ops, compiled.kernel_class, compiled.op_id, strict=True)):
        if previous is not None and op_id != -1 and op_id == previous[0]:
            chosen = previous[1]  # another kernel of the same op call: same eager counterparts
        else:
            chosen = {}
            makes_gemm = kernel_class in ("gemm", "triton_template")
            for family in _families(ops, kernel_class):
                candidates = by_family.get(family)
                if not candidates:
                    continue
                if family == "matmul" and not makes_gemm and family in last:
                    chosen[family] = last[family]
                elif taken.get(family, 0) < len(candidates):
                    chosen[family] = last[family] = candidates[taken.get(family, 0)]
                    taken[family] = taken.get(family, 0) + 1
                elif family in last:
                    chosen[family] = last[family]
        previous = (op_id, chosen)
        links += [{"eager_index": ei, "compiled_index": ci, "family": family}
                  for family, unit in chosen.items() for ei in unit]
    return _link_leftovers(eager, compiled, pd.DataFrame(links, columns=list(LINK_COLUMNS)))


def _link_leftovers(eager: pd.DataFrame, compiled: pd.DataFrame, links: pd.DataFrame) -> pd.DataFrame:
    """Link the eager kernels left over because Inductor names each op once (`cpp_fused_add_mul_0` may
    absorb five muls): each goes to the compiled kernel covering its op family whose already linked eager
    kernels are nearest to it in launch order."""
    families = [set(_families(ops, kc)) for ops, kc in zip(compiled.fused_ops, compiled.kernel_class, strict=True)]
    anchor = {ci: float(group.eager_index.mean()) for ci, group in links.groupby("compiled_index")}
    linked = set(links.eager_index)
    extra = []
    for ei, (ops, kernel_class) in enumerate(zip(eager.fused_ops, eager.kernel_class, strict=True)):
        if ei in linked:
            continue
        for family in _families(ops, kernel_class):
            covering = [ci for ci, fams in enumerate(families) if family in fams]
            if covering:
                ci = min(covering, key=lambda c: abs(anchor.get(c, float(ei)) - ei))
                extra.append({"eager_index": ei, "compiled_index": ci, "family": family})
                break
    if not extra:
        return links
    return pd.concat([links, pd.DataFrame(extra, columns=links.columns)], ignore_index=True)


def _op_units(kernels: pd.DataFrame) -> list[list[int]]:
    """Consecutive kernels launched by one op call, grouped: [[0], [1, 2], [3]...]."""
    units: list[list[int]] = []
    last_id = None
    for i, op_id in enumerate(kernels.op_id):
        if units and op_id != -1 and op_id == last_id:
            units[-1].append(i)
        else:
            units.append([i])
        last_id = op_id
    return units


def _families(ops: list[str], kernel_class: str) -> list[str]:
    """Op families of a kernel; a library GEMM replayed in a CUDA graph has no launching op, but is a matmul."""
    if not ops and kernel_class == "gemm":
        return ["matmul"]
    return list(dict.fromkeys(op_family(op) for op in ops))


def _ratio_words(speedup: float) -> str:
    if speedup >= 1.05:
        return f"{speedup:.1f}x faster than eager"
    if speedup <= 0.95:
        return f"{1 / speedup:.1f}x slower than eager"
    return "about as fast as eager"


def verdict(session: Session) -> str:
    """A few plain sentences, computed from the numbers: what happened to the main compiled mode and why,
    the other modes in brief, whether any compile pays back, and which modes did not run."""
    eager = session.run("eager")
    if eager is None or not eager.ok or eager.summary is None:
        return "Eager did not run, so there is nothing to compare against."
    on_gpu = session.environment.device_kind == "cuda"
    busy = eager.summary.busy_fraction
    bound = busy is not None and busy < 0.5
    k_eager = eager.summary.kernels_per_iteration
    measured = [r for r in session.runs if r.mode != "eager" and r.ok and r.speedup is not None and r.summary]
    sentences = []
    if measured:
        main, *others = measured
        k_main = main.summary.kernels_per_iteration if main.summary else k_eager
        causes = [_kernel_words(k_eager, k_main)]
        if main.speedup is not None and main.speedup < 1.05 and bound:
            where = "the GPU is" if on_gpu else "the CPU's kernels are"
            causes.append(f"the model is launch-bound: {where} busy {busy:.0%} of each eager call")
        if main.graph_count and main.graph_count > 1:
            causes.append(f"the model breaks into {main.graph_count} graphs")
        sentences.append(f"{main.mode} is {_ratio_words(main.speedup or 1.0)} here: {'; '.join(causes)}.")
        if others:
            brief = [f"{r.mode} {_ratio_words(r.speedup or 1.0).removesuffix(' than eager')} "
                     f"({k_eager:g} → {r.summary.kernels_per_iteration if r.summary else 0:g} kernels)"
                     for r in others]
            sentences.append("Also: " + ", ".join(brief) + ".")
        best = max(measured, key=lambda r: r.speedup or 0.0)
        if best.break_even_calls is not None and best.compile is not None:
            sentences.append(f"Fastest: {best.mode}; its {best.compile.first_call_s:.1f} s compile pays back after "
                             f"{best.break_even_calls:,.0f} calls.")
        else:
            sentences.append("No compiled mode beats eager, so no compile time is ever paid back.")
        graphs_help = [r.mode for r in measured if r.mode in ("reduce-overhead", "max-autotune")
                       and (r.speedup or 0) >= 1.05]
        if bound and on_gpu and graphs_help:
            sentences.append(f"{' and '.join(graphs_help)} replay CUDA graphs, which remove the launch gaps.")
    for run in session.runs:
        if run.status == "not_applicable":
            sentences.append(f"{run.mode} is not applicable here: {(run.error or '').split(';')[0]}.")
        elif run.status == "error":
            sentences.append(f"{run.mode} did not run: {(run.error or '').splitlines()[0]}.")
    return " ".join(sentences)


def _kernel_words(k_eager: float, k_compiled: float) -> str:
    if k_compiled > k_eager:
        return f"it runs more kernels than eager ({k_eager:g} → {k_compiled:g})"
    if k_compiled < k_eager:
        return f"fusion cut the kernels from {k_eager:g} to {k_compiled:g}"
    return f"the kernel count is unchanged ({k_eager:g})"


SWEEP_SUMMARY_COLUMNS: dict[str, str] = {
    "strategy": "static, dynamic, automatic, mark_dynamic or buckets",
    "status": "ok or error",
    "compiles": "successful compiles over the schedule",
    "compile_total_s": "their total time, s",
    "recompile_limit_hit": "True when Dynamo gave up and ran the rest in eager",
    "fx_cache_hits": "compiles answered from Inductor's FX-graph cache (fast: an earlier run compiled the graph)",
    "cold_caches": "True when the strategy ran in a fresh process with an empty Inductor cache",
    "median_steady_ms": "median over sizes of the steady-state latency, ms",
    "ratio_vs_static": "median over sizes of (this steady latency / static's at the same size)",
    "total_s": "wall time of the whole schedule, compiles included, s",
}


def sweep_summary(session: Session) -> pd.DataFrame:
    """One row per strategy of the session's sweep; columns in SWEEP_SUMMARY_COLUMNS."""
    if session.sweep is None:
        return pd.DataFrame(columns=list(SWEEP_SUMMARY_COLUMNS))
    static = next((s for s in session.sweep.strategies if s.strategy == "static" and s.status == "ok"), None)
    rows = []
    for s in session.sweep.strategies:
        steady = list(s.steady_ms_by_size.values())
        ratios = [v / static.steady_ms_by_size[k] for k, v in s.steady_ms_by_size.items()
                  if static and k in static.steady_ms_by_size and static.steady_ms_by_size[k] > 0]
        rows.append({
            "strategy": s.strategy, "status": s.status, "compiles": s.compiles,
            "compile_total_s": s.compile_total_s, "recompile_limit_hit": s.recompile_limit_hit,
            "fx_cache_hits": s.fx_cache_hits, "cold_caches": s.cold_caches,
            "median_steady_ms": float(pd.Series(steady).median()) if steady else None,
            "ratio_vs_static": float(pd.Series(ratios).median()) if ratios else None,
            "total_s": sum(c.latency_ms for c in s.calls) / 1e3,
        })
    return pd.DataFrame(rows, columns=list(SWEEP_SUMMARY_COLUMNS))


def sweep_calls(session: Session) -> pd.DataFrame:
    """Every call of every strategy, with the cumulative time: where each strategy starts to win."""
    columns = ["strategy", "index", "size", "latency_ms", "compiled", "compile_s", "fell_back_to_eager",
               "cumulative_s"]
    if session.sweep is None:
        return pd.DataFrame(columns=columns)
    rows = []
    for s in session.sweep.strategies:
        total = 0.0
        for c in s.calls:
            total += c.latency_ms / 1e3
            rows.append({"strategy": s.strategy, "index": c.index, "size": c.size, "latency_ms": c.latency_ms,
                         "compiled": c.compiled, "compile_s": c.compile_s,
                         "fell_back_to_eager": c.fell_back_to_eager, "cumulative_s": total})
    return pd.DataFrame(rows, columns=columns)
