"""The kernel timeline section, as a fragment: its widgets (step, all iterations, search, a box drawn on the
chart, a clicked kernel) rerun this section only, and its bars and figures are kept per session and choice,
so a rerun redraws from memory instead of rebuilding.

Level of detail (see `charts.timeline`): a large timeline starts as time slices; a box drawn on it narrows the
window until every kernel in it is drawn; the scroll wheel zooms and drag-pans in the browser. The timeline is
drawn on a plot that stays mounted (`web.plot`): a switch redraws it in place, and the presentation toggle
redraws it at its presentation layout in the browser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from fusionviz.analysis.captions import stretch_words
from fusionviz.analysis.provenance import kernel_origins
from fusionviz.analysis.report import Report
from fusionviz.charts.export import camera_options, stamped
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.timeline import (
    CLICK_KERNELS,
    DETAIL_KERNELS,
    clickable,
    clicked_kernel,
    highlight,
    level_of_detail,
    timeline_figure,
    timeline_layout,
)
from fusionviz.charts.timeline_layout import matching_kernels, timeline_bars
from fusionviz.records.session import ModeRun
from ui import state, web
from ui.memo import figure_json, memo
from ui.text import plain


def kernel_names(run: ModeRun) -> list[str]:
    """The kernel table's names in row order, kept per run (a click maps a bar's row back to its name)."""
    return memo(run, ("names",), lambda: [r.name for r in run.kernels])  # type: ignore[no-any-return]


def origins(run: ModeRun) -> list[str]:
    """Where each kernel record came from (`provenance.kernel_origins`), kept per run: a click shows it."""
    return memo(run, ("origins",), lambda: kernel_origins(run))  # type: ignore[no-any-return]


def frames(run: ModeRun) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run's kernel and CPU op tables, built once per run (each iteration drawn is cut from them)."""
    return memo(run, ("frames",), lambda: (run.kernel_frame(), run.cpu_op_frame()))  # type: ignore[no-any-return]


def show_timeline(report: Report, key: str, show_code: Callable[[ModeRun, str, str], None], stamp: str) -> None:
    """The kernel timeline with its controls, as a fragment, stamped `stamp` (the session it drew); `show_code`
    shows a clicked kernel's source. The plot carries its presentation layout: a presentation toggle redraws it
    in the browser."""
    _timeline_fragment(report, key, show_code, stamp)


@st.fragment
def _timeline_fragment(report: Report, key: str, show_code: Callable[[ModeRun, str, str], None], stamp: str) -> None:
    session, runs = report.session, report.drawable
    iterations = max((r.summary.iterations for r in runs if r.summary), default=1)
    controls = st.columns([2, 2, 3, 1]) if iterations > 1 else st.columns([2, 3, 1])
    every = controls[0].checkbox("All profiled iterations", key=f"{key}_all",
                                 help="Default: one steady iteration per mode (the one of median length)")
    step: int | None = None
    shown = (session.label, session.environment.captured_at, tuple(r.mode for r in runs))
    state.timeline_shows(key, shown)  # another session: its own median iteration, not the last pick
    if iterations > 1:
        representative = runs[0].representative_iteration if runs else 0
        options = list(range(iterations))
        step = controls[1].selectbox(
            "Iteration", options, index=representative, key=state.timeline_step_key(key), disabled=every,
            format_func=lambda i: f"{i} (median length)" if i == representative else str(i),
            help="Which profiled iteration (ProfilerStep) to draw")
        step = None if step == representative else step
    search = controls[-2].text_input("Highlight kernels named", key=f"{key}_search",
                                     placeholder="part of a kernel name, e.g. gemm")
    bars = _bars(report, every, step)
    if bars.empty:
        st.info("No mode has kernels to draw.")
        return
    plot_key = state.timeline_plot_key(key, report.key)
    window = state.timeline_window(key, (every, step))  # another step: start from the whole of it
    if window is not None:  # a callback: the run it starts draws the whole window, without the button
        controls[-1].button("Whole", key=f"{key}_whole", help="Show the whole window again",
                            on_click=state.set_timeline_window, args=(key, None))

    drawn = _figure(report, bars, every, step, window, stamp)
    fig = drawn if not search.strip() else memo(  # the figure drawn already, with one layer more
        session, ("highlighted", every, step, window, search.strip()),
        lambda: highlight(drawn, session, bars, search, window=window))
    level = level_of_detail(bars, window)
    zoom = {"scrollZoom": level != "svg"}  # the wheel zooms a large timeline; a small one leaves it to the page
    present = _presented(report, key, drawn, bars, level)
    desk = ChartSettings()
    # A box drawn on a large timeline narrows the window in a callback, before the run it starts draws.
    clicked = web.plot(figure_json(fig), plot_key, {**camera_options(desk, f"fusionviz-{key}"), **zoom},
                       present=present, on_box=lambda: _narrow(key, report.key))
    picked = clicked_kernel(clicked)
    whole = _whole_trace(report)
    drawn_span = ("the whole trace" if whole else "all profiled iterations" if every else
                  f"iteration {step}" if step is not None else "the steady iteration (of median length)")
    _caption(level, bars, search, window, drawn_span, plain_trace=session.source == "trace",
             stretch=stretch_words(report.stretch, report.latencies, [r.mode for r in runs]))
    if picked:
        mode, row = picked
        run = session.run(mode)
        if run is not None:
            show_code(run, kernel_names(run)[row], origins(run)[row])


def _bars(report: Report, every: bool, step: int | None) -> pd.DataFrame:
    session = report.session
    return memo(session, ("bars", every, step),  # type: ignore[no-any-return]
                lambda: timeline_bars(session, all_iterations=every, iteration=step, tables=frames, origins=origins))


def _whole_trace(report: Report) -> bool:
    """Whether every run drawn is a whole trace (one without profiler steps)."""
    return all(r.summary is not None and r.summary.iterations_from == "trace" for r in report.drawable)


def _figure(report: Report, bars: pd.DataFrame, every: bool, step: int | None,
            window: tuple[float, float] | None, stamp: str) -> Any:
    session = report.session
    title = ("Kernel timeline: the whole trace" if _whole_trace(report) else
             "Kernel timeline: all profiled iterations" if every else
             f"Kernel timeline: iteration {step}" if step is not None else None)
    settings = ChartSettings()
    return memo(session, ("figure", every, step, window, stamp),
                lambda: stamped(timeline_figure(session, bars, settings, title, window=window,
                                                latencies=report.latencies), stamp, settings))


def _presented(report: Report, key: str, drawn: Any, bars: pd.DataFrame, level: str) -> web.Presented:
    presented, zoom = ChartSettings.presentation(), {"scrollZoom": level != "svg"}
    return memo(drawn, ("present", key, level), lambda: web.Presented.of(  # type: ignore[no-any-return]
        timeline_layout(drawn, report.session, bars, presented),
        {**camera_options(presented, f"fusionviz-{key}"), **zoom}))


def warm(report: Report, key: str, stamp: str) -> None:
    """Build what the first draw of this session's timeline (one steady iteration, the whole of it, stamped
    `stamp`) needs, into the caches it reads (ui/warm.py): its bars, its figure as JSON and its presentation
    layout."""
    bars = _bars(report, False, None)
    if not bars.empty:
        drawn = _figure(report, bars, False, None, None, stamp)
        figure_json(drawn)
        _presented(report, key, drawn, bars, level_of_detail(bars, None))


def _narrow(key: str, session: str) -> None:
    """A box drawn on the plot becomes the window (a callback: the rerun it starts draws the new window)."""
    box = web.drawn_box(state.timeline_plot_key(key, session))
    if box is not None:
        state.set_timeline_window(key, box)


def _caption(level: str, bars: Any, search: str, window: tuple[float, float] | None, span: str, *,
             plain_trace: bool, stretch: str) -> None:
    """What the timeline shows and how to move in it; `span` names the iterations drawn (one, all, the trace);
    `stretch` how much longer the profiled iterations ran than the timed calls (`captions.stretch_words`)."""
    matches = matching_kernels(bars, search)
    found = (f" **{len(matches):,}** kernels match “{search.strip()}” (marked in red)."
             if search.strip() else "")
    if stretch:
        found = (" The dark strip above each mode's kernels is its measured latency per call (timed, unprofiled; "
                 f"p10–p90 shaded): {plain(stretch)}.") + found
    if level == "svg" and plain_trace:  # no modes, no graph breaks and no generated code to show
        regions = "; shaded = a compiled region the trace marks" if (bars.lane == "region").any() else ""
        st.caption("Each block is one trace: kernels coloured by class (one lane per CUDA stream), the thin grey "
                   f"lane is the CPU (gaps there are Python between ops){regions}. Click a kernel for what it "
                   "is." + found)
        return
    if level == "svg":
        st.caption("Each block is one mode: kernels coloured by class (one lane per CUDA stream), the thin grey "
                   "lane is the CPU (gaps there are Python between ops); shaded = compiled region, red ✕ = graph "
                   "break. Click a kernel for its code." + found)
        return
    where = f"{window[0]:,.0f}–{window[1]:,.0f} µs of {span}" if window else span
    if level == "bins":
        st.caption(f"Too many kernels to draw one by one in {where}: each lane is cut into slices of time, darker "
                   f"= busier. **Drag a box** to zoom in: at {DETAIL_KERNELS:,} kernels or fewer every kernel is "
                   "drawn. Scroll to zoom, drag the axis to pan; **Whole** goes back." + found)
    else:
        if clickable(bars, window):
            how = "Drag a box or scroll to zoom, double-click to zoom out, click a kernel for its code"
        else:
            how = (f"Scroll to zoom; **drag a box** around {CLICK_KERNELS:,} kernels or fewer to click one for its "
                   "code")
        st.caption(f"Every kernel in {where}, coloured by class, one lane per CUDA stream. {how}"
                   + ("; **Whole** goes back." if window else ".") + found)
