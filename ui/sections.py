"""Sections every page shares: where the data came from, problems of single modes, the kernel timeline, the
kernel table with generated code, per-kernel statistics and downloads."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from fusionviz.analysis.headline import Headline
from fusionviz.analysis.methodology import Methodology
from fusionviz.analysis.report import Report
from fusionviz.analysis.sentences import per_iteration
from fusionviz.analysis.sources import find_source
from fusionviz.charts.export import camera_options, source_stamp, stamped
from fusionviz.charts.methodology import methodology_figure
from fusionviz.charts.stats import class_stats_figure
from fusionviz.charts.style import ChartSettings, restyled_layout
from fusionviz.records.session import ModeRun, Session
from ui import state, tables, timeline_view, web
from ui.memo import figure_json, memo
from ui.text import plain


def stamp_of(report: Report, opened_as: str | None = None) -> str:
    """The stamp of a chart drawn from `report`: the session by its file's name (`opened_as`, else the name it was
    opened as, its label), the device, torch and the capture's minute (`charts.export.source_stamp`), so that two
    recordings of one configuration are told apart on screen."""
    return source_stamp(report.source, opened_as)


def show_headline(headline: Headline, details: str = "Every figure, exactly") -> None:
    """What a screen leads with: the headline as its heading, its mechanism on one line under it, and its details
    (the exact figures with their intervals) folded away."""
    st.markdown(f"### {plain(headline.text)}")
    if headline.mechanism:
        st.markdown(plain(headline.mechanism))
    if headline.details:
        with st.expander(details):
            st.markdown("\n".join(f"- {plain(line)}" for line in headline.details))


def show_source(report: Report, opened_as: str | None = None) -> None:
    """Where the data on screen came from (`opened_as`: how the user opened it, see `Source.line`)."""
    st.caption(f"Source of data: **{plain(report.source.line(opened_as))}**")


def show_trace_notes(report: Report) -> None:
    """How each run's trace was read (whole trace, kernels left out, device work not read), in info boxes."""
    runs = report.runs.values()
    for shown in runs:
        for note in shown.notes:
            st.info(f"**{plain(shown.run.mode)}**: {plain(note)}" if len(runs) > 1 else plain(note))


def show_run_problems(session: Session, *, not_applicable: bool = True) -> None:
    """Modes that errored (and, unless the verdict already said so, modes that do not apply), each as a
    message rather than a traceback."""
    for run in session.runs:
        first = (run.error or "").strip().splitlines()[0] if run.error else ""
        if run.status == "not_applicable" and not_applicable:
            st.info(f"**{plain(run.mode)}** is not applicable here: {plain(first)}")
        elif run.status == "error":
            st.error(f"**{plain(run.mode)}** failed: {plain(first)}")
            if run.error and "\n" in run.error.strip():
                with st.expander(f"{plain(run.mode)}: details"):
                    st.code(run.error, language="text")


def chart(fig: Any, key: str, *, selectable: bool | Callable[[], None] = False, stamp: str | None = None,
          settings: ChartSettings | None = None, name: str | None = None, picker: web.Picker | None = None) -> Any:
    """A Plotly chart, stamped with where its data came from when given; the toolbar's camera saves it as a
    1920 × 1080 PNG. Drawn on a plot kept mounted (`web.plot`): a new figure under the same key is redrawn in
    place, and a page whose charts all are never loads Streamlit's own Plotly chart and its second copy of
    plotly.js (benchmarks/RESULTS.md, "A first visit with the plain charts on kept plots, and the lab's toggle in
    the browser"). Clicking a bar reruns the page with the selection when `selectable` (first calling it, when it
    is a callback: it reads the selection with `state.selected_points(key)`): that one is Streamlit's chart.
    `settings`, those the figure was drawn with, default to the page's mode; `name`, the camera's file name, to
    `fusionviz-<key>`. A kept plot follows `picker` in the browser."""
    if settings is None:
        settings = ChartSettings.presentation() if state.presentation() else ChartSettings()
    config = camera_options(settings, name or f"fusionviz-{key}")
    if selectable:
        return st.plotly_chart(stamped_figure(fig, stamp, settings), key=key,
                               on_select=selectable if callable(selectable) else "rerun", selection_mode="points",
                               config=config)
    return web.plot(drawn_json(fig, stamp, settings), key, config, picker=picker)


def methodology_chart(against: Methodology, settings: ChartSettings) -> Any:
    """The naive loop against the proper measurement, made once per `against` (a report's own is kept with it),
    not on every rerun of a session recorded with the naive loop."""
    return memo(against, ("methodology", settings), lambda: methodology_figure(against.table, settings))


def drawn_json(fig: Any, stamp: str | None, settings: ChartSettings) -> str:
    """What `chart` sends a kept plot for `fig`: its JSON, stamped when `stamp` is given, made once per figure
    (so made ahead, for a served view or a story's next scene, it is not made again)."""
    return figure_json(stamped_figure(fig, stamp, settings))


def stamped_figure(fig: Any, stamp: str | None, settings: ChartSettings) -> Any:
    """`fig` with its source stamp (`fig` itself without one), made once per figure object (the figures the lab
    keeps are drawn again on every rerun)."""
    if not stamp:
        return fig
    return memo(fig, ("stamped", stamp, settings), lambda: stamped(fig, stamp, settings))


def restyled_chart(fig: go.Figure, key: str, present_height: int, *, stamp: str | None = None) -> None:
    """A chart drawn at the desk's settings, stamped with the session it drew when given, that carries its
    presentation layout (`present_height` high): on a page that restyles in the browser, the presentation toggle
    redraws it there (`web.plot`)."""
    desk, presented = ChartSettings(), ChartSettings.presentation()
    name = f"fusionviz-{key}"
    fig = stamped_figure(fig, stamp, desk)
    present = web.Presented.of(restyled_layout(fig, presented, present_height), camera_options(presented, name))
    web.plot(fig.to_json(), key, camera_options(desk, name), present=present)


COLUMN_GAP_PX = 16  # Streamlit's gap between two columns


def half(settings: ChartSettings) -> ChartSettings:
    """`settings` for a chart in one of two columns: its plot half as wide, so that titles wrap to that width."""
    return dataclasses.replace(settings, plot_px=(settings.plot_px - COLUMN_GAP_PX) // 2)


def show_timeline(report: Report, key: str, stamp: str | None = None) -> None:
    """The kernel timeline (a fragment: its controls rerun it alone), stamped with the session it drew (`stamp`,
    else the report's own); a clicked kernel shows its generated source underneath. See ui/timeline_view.py."""
    timeline_view.show_timeline(report, key, show_kernel_code, stamp or stamp_of(report))


def show_kernel_code(run: ModeRun, name: str, origin: str) -> None:
    """A picked kernel's line of the user's code (`origin`, the kernel table's column) and its generated
    source, or why it has none."""
    if origin:
        st.markdown(f"**{plain(name)}** ({plain(run.mode)}) came from {plain(origin)}")
    source = find_source(run.kernel_sources, name)
    if source:
        st.markdown(f"**Generated source of {plain(name)}** ({plain(run.mode)})")
        st.code(source, language="python" if name.startswith("triton_") else "cpp", line_numbers=True, height=420)
    elif run.mode == "eager" or not name.startswith(("triton_", "cpp_")):
        st.info(f"{plain(name)} ({plain(run.mode)}) is a library kernel PyTorch ships; Inductor generated no source "
                "for it.")
    else:
        st.info(f"The generated source of {plain(name)} was not captured in this session.")


def mode_picker(report: Report, label: str, key: str, *, compiled_only: bool = False) -> ModeRun | None:
    runs = [r for r in report.drawable if not compiled_only or r.mode != "eager"]
    if not runs:
        return None
    names = [r.mode for r in runs]
    chosen = st.selectbox(label, names, key=key) if len(names) > 1 else names[0]
    return report.session.run(chosen)


def show_kernel_table(report: Report, key: str) -> None:
    """The sortable kernel table of one mode; choosing a row shows that kernel's source (at the desk only)."""
    run = mode_picker(report, "Mode", f"{key}_mode")
    if run is None:
        return
    every = st.checkbox("All profiled iterations", key=f"{key}_all")
    tables_of = report.runs[run.mode]
    table = tables_of.all_kernel_table if every else tables_of.kernel_table
    event = tables.show(table, state.of_session(f"{key}_table_{run.mode}_{every}", report.key), presentable=False,
                        on_select="rerun", selection_mode="single-row")
    # The files below are written when their button is clicked, not on every rerun of the page.
    st.download_button("Kernel table (CSV)", lambda: tables.csv_bytes(table), file_name=f"kernels-{run.mode}.csv",
                       mime="text/csv", key=f"{key}_csv_{run.mode}")
    rows = event["selection"]["rows"] if event else []
    if rows:
        show_kernel_code(run, str(table.name.iloc[rows[0]]), str(table.origin.iloc[rows[0]]))
    if run.output_code:
        with st.expander(f"Whole generated module(s) of {plain(run.mode)} ({len(run.output_code)})"):
            st.code("\n\n".join(run.output_code), language="python", line_numbers=True, height=600)


def show_class_stats(report: Report, settings: ChartSettings, key: str) -> None:
    """Kernel time by class of every drawable run, and each run's kernel count."""
    runs = [report.runs[r.mode] for r in report.drawable]
    if not runs:
        return
    chart(memo(report, ("class_stats", settings), lambda: class_stats_figure(runs, settings)), f"{key}_classes",
          settings=settings, stamp=stamp_of(report))
    for shown in runs:
        st.markdown(_counts(shown.run))


def _counts(run: ModeRun) -> str:
    """"**mode**: 54 kernels per iteration (and 1 memory operation)", worded for the run's window."""
    summary = run.summary
    if summary is None:
        return f"**{plain(run.mode)}**"
    memory = summary.memory_ops_per_iteration
    return (f"**{plain(run.mode)}**: {summary.kernels_per_iteration:g} kernels {per_iteration(summary)}"
            + (f" (and {memory:g} memory operation{'' if memory == 1 else 's'}, not kernels)" if memory else ""))


def show_downloads(session: Session, key: str) -> None:
    """Session JSON, and each mode's raw Chrome trace (opens in Perfetto or chrome://tracing)."""
    name = f"fusionviz-{session.config.model}-{session.config.dim}x{session.config.batch}"
    cols = st.columns(1 + len(session.runs))
    # Written when a button is clicked: a session with its traces is megabytes, serialised on every rerun before.
    cols[0].download_button("Session (JSON)", session.to_json_bytes, file_name=f"{name}.json",
                            mime="application/json", key=f"{key}_session")
    for col, run in zip(cols[1:], session.runs, strict=True):
        if run.ok and run.trace_gz_b64:  # kept in the session: inflated when its button is clicked
            col.download_button(f"{plain(run.mode)} trace (Perfetto)", _trace_file(run),
                                file_name=f"{name}-{run.mode}.trace.json", mime="application/json",
                                key=f"{key}_trace_{run.mode}")


def _trace_file(run: ModeRun) -> Callable[[], bytes]:
    """The run's Chrome trace, inflated when asked for (a download button's deferred data)."""
    return lambda: run.chrome_trace() or b""
