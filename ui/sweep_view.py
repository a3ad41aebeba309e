"""The Dynamic shapes page's sections: which sweep is shown, the per-call and steady-state charts, the
summary and recompile reasons, and the kernels of one shape under two strategies with their sources."""

from __future__ import annotations

import streamlit as st

from fusionviz.analysis.report import Report
from fusionviz.analysis.sources import find_source, kernel_signature, pinned_sizes, size_arguments, source_diff
from fusionviz.analysis.sweep import SWEEP_SUMMARY_COLUMNS, SweepReport, strategy_kernel_diff
from fusionviz.charts.registry import VIEWS, views_needing
from fusionviz.charts.style import ChartSettings, fit_title
from fusionviz.charts.sweep import sweep_cumulative_figure, sweep_latency_figure, sweep_steady_figure
from fusionviz.errors import SessionFileError
from fusionviz.records.session import Session, StrategyRun
from ui import backend, sections, state, story, tables
from ui.text import plain

LIVE, RECORDED, UPLOAD = "Your latest run", "Recorded sweep (sessions/)", "Upload a sweep file"
PRESENTED = views_needing("sweep")  # presentation mode shows these, then this page's summary and kernels


def show_live() -> None:
    """Switch this user's page to their latest run."""
    state.set_sweep_source(LIVE)


def choose() -> tuple[Session | None, str]:
    """The sweep to show, and what it is: the latest run, a recorded sweep, or an uploaded file."""
    live: Session | None = state.result(state.shown("sweep"))
    recorded = backend.recorded_sweeps()
    sources = ([LIVE] if live else []) + ([RECORDED] if recorded else []) + [UPLOAD]
    if state.sweep_source() not in sources:
        state.set_sweep_source(sources[0])
    source = st.radio("Sweep shown", sources, horizontal=True, key=state.SWEEP_SOURCE, label_visibility="collapsed")
    if source == LIVE:
        return live, f"your run, {state.took('sweep')}"
    if source == RECORDED:
        name = st.selectbox("Recorded sweep", list(recorded), key="s_recorded") if len(recorded) > 1 \
            else next(iter(recorded))
        return recorded[name], f"**{plain(name)}**, a sweep recorded earlier and shipped with fusionviz"
    upload = st.file_uploader("A sweep session (`python -m fusionviz sweep --out FILE`)", type=["json", "gz"],
                              key="s_file")
    if upload is None:
        return None, ""
    try:
        session = backend.open_bytes(upload.getvalue(), upload.name)
    except SessionFileError as exc:
        st.error(plain(exc))
        return None, ""
    if session.sweep is None:
        st.error(f"{plain(upload.name)} holds no shape sweep: open it in the Trace explorer instead.")
        return None, ""
    return session, f"**{plain(upload.name)}**, uploaded"


def describe(session: Session) -> str:
    """One line: model, sizes, the schedule and the device."""
    c, sweep = session.config, session.sweep
    assert sweep is not None
    fixed = f" · batch {c.batch}" if sweep.dimension == "seq" else (f" · seq {c.seq}" if c.seq else "")
    shown = ", ".join(map(str, sweep.schedule))
    return (f"**{plain(c.model)}** · dim {c.dim}{fixed} · {c.dtype} · {c.device} · **{sweep.dimension}** over "
            f"{len(sweep.schedule)} calls: {shown}" + (f" · buckets {sweep.buckets}" if sweep.buckets else ""))


def show_errors(session: Session) -> None:
    """Strategies that failed, each as a message with its details folded away, never a traceback."""
    for s in session.sweep.strategies if session.sweep else []:
        if s.status == "error":
            st.error(f"**{plain(s.strategy)}** failed: "
                     f"{plain((s.error or 'no reason given').strip().splitlines()[0])}")
            if s.error and "\n" in s.error.strip():
                with st.expander(f"{plain(s.strategy)}: details"):
                    st.code(s.error, language="text")


def show_summary(sweep: SweepReport) -> None:
    tables.show(sweep.summary, "s_summary", helps=SWEEP_SUMMARY_COLUMNS,
                column_config={
                    name: st.column_config.NumberColumn(help=SWEEP_SUMMARY_COLUMNS[name], format=fmt)
                    for name, fmt in (("compile_total_s", "%.2f"), ("median_steady_ms", "%.4f"),
                                      ("ratio_vs_static", "%.2f×"), ("total_s", "%.2f"))})
    reasons = sweep.reasons
    st.markdown("**Recompile (guard failure) reasons**: why Dynamo compiled again")
    if reasons.empty:
        st.caption("No strategy recompiled.")
    else:
        tables.show(reasons, "s_reasons", width="stretch")


def pick_strategy(runs: list[StrategyRun], label: str, default: str, key: str) -> StrategyRun:
    names = [r.strategy for r in runs]
    chosen = st.selectbox(label, names, index=names.index(default) if default in names else 0, key=key)
    return runs[names.index(chosen)]


def show_kernels(report: Report) -> None:
    """The kernels of one shape under two strategies (static and dynamic by default), and their sources."""
    sweep = report.session.sweep
    runs = [r for r in report.sweep.strategies if r.kernels] if report.sweep else []
    if sweep is None or len(runs) < 2:
        st.info("Two strategies with kernels are needed to compare them.")
        return
    left, right = st.columns(2)
    with left:
        a = pick_strategy(runs, "A", "static", "s_kernels_a")
    with right:
        b = pick_strategy(runs, "B", "dynamic" if a.strategy != "dynamic" else "static", "s_kernels_b")
    st.markdown(f"One call at **{sweep.dimension} {sweep.kernel_size}**, profiled under **{plain(a.strategy)}** "
                f"(A) and **{plain(b.strategy)}** (B):")
    diff = strategy_kernel_diff(a, b)
    tables.show(diff, f"s_kernel_diff_{a.strategy}_{b.strategy}",
                column_config={"us_a": st.column_config.NumberColumn(f"µs {a.strategy}", format="%.2f"),
                               "us_b": st.column_config.NumberColumn(f"µs {b.strategy}", format="%.2f"),
                               "grid_a": f"grid {a.strategy}", "grid_b": f"grid {b.strategy}"})
    generated = list(dict.fromkeys(
        n for n in diff.name if find_source(a.kernel_sources, n) or find_source(b.kernel_sources, n)))
    if not generated:
        st.info("No kernel here was generated by Inductor, so there is no source to compare.")
        return
    name = st.selectbox("Generated kernel", generated, key=f"s_kernel_{a.strategy}_{b.strategy}")
    sources = {run.strategy: find_source(run.kernel_sources, name) for run in (a, b)}
    cols = st.columns(2)
    for col, run in zip(cols, (a, b), strict=True):
        source = sources[run.strategy]
        with col:
            if source is None:
                st.info(f"{plain(name)} has no captured source under {plain(run.strategy)}.")
                continue
            sizes = size_arguments(source)
            st.markdown(f"**{plain(run.strategy)}**: " + (
                "takes its size as an argument: " + ", ".join(f"`{s}`" for s in sizes) if sizes  # identifiers
                else "sizes are constants baked into the kernel"))
            pinned = pinned_sizes(source)  # the body's constants: a static signature can read as a dynamic one
            st.code("\n".join([kernel_signature(source), *(f"    {line}  # in the body" for line in pinned)]),
                    language="python" if name.startswith("triton_") else "cpp", wrap_lines=True)
            with st.expander(f"Whole source under {plain(run.strategy)}"):
                st.code(source, language="python" if name.startswith("triton_") else "cpp", line_numbers=True,
                        height=420)
    source_a, source_b = sources[a.strategy], sources[b.strategy]
    if source_a and source_b and source_a == source_b:
        st.caption(f"{plain(name)} is the same kernel, line for line, under both strategies.")
    elif (source_a and source_b and kernel_signature(source_a) == kernel_signature(source_b)
          and size_arguments(source_a) != size_arguments(source_b)):
        st.caption("The two signatures are the same (Triton lists `xnumel` either way): what differs is whether "
                   "the body sets the size to a constant, shown under each signature, and the lines below.")
    if source_a and source_b and source_a != source_b:
        st.markdown("**Lines that differ**")
        st.code(source_diff(source_a, source_b, a.strategy, b.strategy), language="diff", height=320)


def present(report: Report, settings: ChartSettings) -> None:
    """Presentation mode: one view of the sweep per screen, led by its headline and sized to the screen
    (`story.show_view`), or one section."""
    assert report.sweep is not None  # the page shows sweeps only
    labels = {VIEWS[v].label: v for v in PRESENTED}
    shown = st.radio("Show", [*labels, "Summary", "Kernels"], horizontal=True, key="s_present_view",
                     label_visibility="collapsed")
    if shown in labels:
        story.show_view(report, labels[shown], settings, f"s_{labels[shown]}", height=story.PAGE_CHART_PX)
    elif shown == "Summary":
        show_summary(report.sweep)
    else:
        show_kernels(report)


def show_report(report: Report, settings: ChartSettings) -> None:
    """Every section of one sweep, top to bottom: its headline (which strategy pays over the schedule), the
    latency of every call, then the steady state and the running total side by side (laid out half as wide)."""
    assert report.sweep is not None  # the page shows sweeps only
    session = report.session
    stamp = sections.stamp_of(report)
    sections.show_headline(report.headline)
    sections.chart(sweep_latency_figure(report, settings), "s_latency", stamp=stamp)
    st.caption("◆ marks a call that compiled (hover for the compile time and Dynamo's recompile reason); ✕ marks "
               "a call Dynamo ran in eager after the recompile limit. The y axis is logarithmic.")
    left, right = st.columns(2)
    halved = sections.half(settings)
    with left:
        sections.chart(fit_title(sweep_steady_figure(report, halved), halved), "s_steady", stamp=stamp,
                       settings=halved)
    with right:
        sections.chart(fit_title(sweep_cumulative_figure(report, halved), halved), "s_cumulative", stamp=stamp,
                       settings=halved)
    st.subheader("Summary per strategy")
    show_summary(report.sweep)
    st.subheader("Kernels of one shape, side by side")
    show_kernels(report)
    sweep = session.sweep
    assert sweep is not None
    name = f"fusionviz-sweep-{session.config.model}-{sweep.dimension}"
    st.download_button("Sweep session (JSON)", session.to_json_bytes(), file_name=f"{name}.json",
                       mime="application/json", key="s_download")
