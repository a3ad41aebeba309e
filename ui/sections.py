"""Sections every page shares: where the data came from, problems of single modes, the kernel timeline, the
kernel table with generated code, per-kernel statistics and downloads."""

from __future__ import annotations

from typing import Any

import streamlit as st

from fusionviz.analysis.kernel_tables import kernel_stats, kernel_table
from fusionviz.analysis.report import per_iteration, trace_notes
from fusionviz.analysis.sentences import source_line
from fusionviz.analysis.sources import find_source
from fusionviz.analysis.summary import drawable_runs
from fusionviz.charts.stats import class_stats_figure
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.timeline import selected_kernel, timeline_bars, timeline_figure
from fusionviz.records.session import ModeRun, Session


def show_source(session: Session) -> None:
    st.caption(f"Source of data: **{source_line(session)}**")


def show_trace_notes(session: Session) -> None:
    """How each run's trace was read (whole trace, kernels left out, device work not read), in info boxes."""
    notes = [(run.mode, note) for run in session.runs if run.summary for note in trace_notes(run.summary)]
    for mode, note in notes:
        st.info(f"**{mode}**: {note}" if len(session.runs) > 1 else note)


def show_run_problems(session: Session, *, not_applicable: bool = True) -> None:
    """Modes that errored (and, unless the verdict already said so, modes that do not apply), each as a
    message rather than a traceback."""
    for run in session.runs:
        first = (run.error or "").strip().splitlines()[0] if run.error else ""
        if run.status == "not_applicable" and not_applicable:
            st.info(f"**{run.mode}** is not applicable here: {first}")
        elif run.status == "error":
            st.error(f"**{run.mode}** failed: {first}")
            if run.error and "\n" in run.error.strip():
                with st.expander(f"{run.mode}: details"):
                    st.code(run.error, language="text")


def chart(fig: Any, key: str, *, selectable: bool = False) -> Any:
    """A Plotly chart; clicking a bar reruns the page with the selection when `selectable`."""
    if selectable:
        return st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points",
                                config={"displaylogo": False})
    return st.plotly_chart(fig, key=key, config={"displaylogo": False})


def show_timeline(session: Session, settings: ChartSettings, key: str) -> None:
    """The kernel timeline; a clicked kernel bar shows its generated source underneath."""
    every = st.checkbox("All profiled iterations", key=f"{key}_all",
                        help="Default: one steady iteration per mode (the one of median length)")
    bars = timeline_bars(session, all_iterations=every)
    if bars.empty:
        st.info("No mode has kernels to draw.")
        return
    whole = all(r.summary is not None and r.summary.iterations_from == "trace" for r in drawable_runs(session))
    title = ("Kernel timeline: the whole trace" if whole else
             "Kernel timeline: all profiled iterations" if every else None)
    event = chart(timeline_figure(session, bars, settings, title), key, selectable=True)
    st.caption("Each block is one mode: kernels coloured by class, the thin grey lane is the CPU (gaps there "
               "are Python between ops); shaded = compiled region, red ✕ = graph break. Click a kernel for its code.")
    picked = selected_kernel(event["selection"]["points"]) if event else None
    if picked:
        mode, row = picked
        run = session.run(mode)
        if run is not None:
            show_kernel_code(run, str(run.kernel_frame().name[row]))


def show_kernel_code(run: ModeRun, name: str) -> None:
    source = find_source(run.kernel_sources, name)
    if source:
        st.markdown(f"**Generated source of `{name}`** ({run.mode})")
        st.code(source, language="python" if name.startswith("triton_") else "cpp", line_numbers=True, height=420)
    elif run.mode == "eager" or not name.startswith(("triton_", "cpp_")):
        st.info(f"`{name}` ({run.mode}) is a library kernel PyTorch ships; Inductor generated no source for it.")
    else:
        st.info(f"The generated source of `{name}` was not captured in this session.")


def mode_picker(session: Session, label: str, key: str, *, compiled_only: bool = False) -> ModeRun | None:
    runs = [r for r in drawable_runs(session) if not compiled_only or r.mode != "eager"]
    if not runs:
        return None
    names = [r.mode for r in runs]
    chosen = st.selectbox(label, names, key=key) if len(names) > 1 else names[0]
    return session.run(chosen)


def show_kernel_table(session: Session, key: str) -> None:
    """The sortable kernel table of one mode; choosing a row shows that kernel's source."""
    run = mode_picker(session, "Mode", f"{key}_mode")
    if run is None:
        return
    every = st.checkbox("All profiled iterations", key=f"{key}_all")
    table = kernel_table(run, all_iterations=every)
    event = st.dataframe(table, key=f"{key}_table_{run.mode}_{every}", on_select="rerun",
                         selection_mode="single-row", hide_index=True,
                         column_config={"start_us": st.column_config.NumberColumn(format="%.1f"),
                                        "dur_us": st.column_config.NumberColumn(format="%.1f")})
    st.download_button("Kernel table (CSV)", table.to_csv(index=False).encode(), file_name=f"kernels-{run.mode}.csv",
                       mime="text/csv", key=f"{key}_csv_{run.mode}")
    rows = event["selection"]["rows"] if event else []
    if rows:
        show_kernel_code(run, str(table.name.iloc[rows[0]]))
    if run.output_code:
        with st.expander(f"Whole generated module(s) of {run.mode} ({len(run.output_code)})"):
            st.code("\n\n".join(run.output_code), language="python", line_numbers=True, height=600)


def show_stats(session: Session, settings: ChartSettings, key: str) -> None:
    """Per-kernel and per-class statistics of every drawable run."""
    runs = drawable_runs(session)
    if not runs:
        return
    chart(class_stats_figure(runs, settings), f"{key}_classes")
    for run in runs:
        st.markdown(_counts(run))
        st.dataframe(kernel_stats(run), hide_index=True, key=f"{key}_stats_{run.mode}",
                     column_config={c: st.column_config.NumberColumn(format="%.1f")
                                    for c in ("total_us", "mean_us", "share_pct", "per_iteration")})


def _counts(run: ModeRun) -> str:
    """"**mode**: 54 kernels per iteration (and 1 memory operation)", worded for the run's window."""
    summary = run.summary
    if summary is None:
        return f"**{run.mode}**"
    memory = summary.memory_ops_per_iteration
    return (f"**{run.mode}**: {summary.kernels_per_iteration:g} kernels {per_iteration(summary)}"
            + (f" (and {memory:g} memory operation{'' if memory == 1 else 's'}, not kernels)" if memory else ""))


def show_downloads(session: Session, key: str) -> None:
    """Session JSON, and each mode's raw Chrome trace (opens in Perfetto or chrome://tracing)."""
    name = f"fusionviz-{session.config.model}-{session.config.dim}x{session.config.batch}"
    cols = st.columns(1 + len(session.runs))
    cols[0].download_button("Session (JSON)", session.to_json_bytes(), file_name=f"{name}.json",
                            mime="application/json", key=f"{key}_session")
    for col, run in zip(cols[1:], session.runs, strict=True):
        trace = run.chrome_trace() if run.ok else None
        if trace:
            col.download_button(f"{run.mode} trace (Perfetto)", trace, file_name=f"{name}-{run.mode}.trace.json",
                                mime="application/json", key=f"{key}_trace_{run.mode}")
