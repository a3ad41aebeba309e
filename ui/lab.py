"""The fusion lab's sections: metrics, graph breaks, the collapse views, a crossover grid's heat map, the
presentation mode and the full report, for any session on screen (recorded, uploaded, traces or live)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Literal

import streamlit as st

from fusionviz.analysis.grid import GRID_COLUMNS
from fusionviz.analysis.headline import times
from fusionviz.analysis.links import Collapse
from fusionviz.analysis.methodology import SHOWN_COLUMNS
from fusionviz.analysis.report import Report, analyse
from fusionviz.analysis.summary import SUMMARY_COLUMNS, Comparison
from fusionviz.analysis.timing import Verdict
from fusionviz.analysis.verdict import exact_words, result_words, spread_words
from fusionviz.charts.collapse import collapse_animation, collapse_figure
from fusionviz.charts.export import camera_options
from fusionviz.charts.grid import grid_figure
from fusionviz.charts.latency import latency_figure, metrics_figure
from fusionviz.charts.registry import VIEWS, views_needing
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.views import view_problem
from fusionviz.records.session import Session
from ui import on_screen, sections, served_views, state, story, tables, timeline_view, web
from ui.memo import memo
from ui.text import plain

# a session's views; a crossover grid's heat map besides
PRESENTED = views_needing("runs", "sources", "timing", "naive")
GRID = "grid"  # also the heat map's chart key at the desk, which the click callback reads
PRESENT_GRID = "present_grid"  # the presentation's heat map, on the page beside the desk's (hidden in turn)
LAB_CHART_PX = story.PAGE_CHART_PX  # under the page title and the view selector
PLOT_KEY = "present_view_plot"  # the presentation's plot, for every view but the animation and the heat map
AHEAD = 2  # views fetched ahead in the browser past the one on screen while presenting
# A speedup's arrow and colour by its verdict, named rather than left to Streamlit's sign rule: the delta is a
# word ("slower (0.53–0.64×)"), which reads as positive, so "normal" painted a slower mode green.
VERDICT_LOOKS: dict[Verdict, tuple[Literal["up", "down", "off"], Literal["green", "red", "gray"]]] = {
    "faster": ("up", "green"), "slower": ("down", "red")}


def show_metrics(report: Report) -> None:
    """Each compiled mode's speedup and kernels against eager, in the headline's words ("10x faster", its p10–p90
    rounded alike): one screen never says "10x" and "10.00×" of one number. The exact figures are the hover."""
    session, compared = report.session, report.comparisons
    eager = session.run("eager")
    compiled = [r for r in session.runs if r.mode != "eager"]
    cols = st.columns(max(len(compiled), 1))
    for col, r in zip(cols, compiled, strict=False):
        vs = compared.get(r.mode)
        if not (r.summary and eager and eager.summary):
            col.metric(r.mode, r.status.replace("_", " "))
            continue
        if vs is not None:
            arrow, colour = VERDICT_LOOKS.get(vs.verdict, ("off", "gray"))
            col.metric(f"{plain(r.mode)} against eager", result_words(vs), delta=interval_words(vs),
                       delta_arrow=arrow, delta_color=colour,
                       help=f"{exact_words(vs)}: the median and p10–p90 of eager's time / {plain(r.mode)}'s in the "
                            f"same round, {spread_words(vs.speedup)}")
        change = r.summary.kernels_per_iteration - eager.summary.kernels_per_iteration
        col.metric(f"{plain(r.mode)} kernels / iteration", f"{r.summary.kernels_per_iteration:g}",
                   delta=f"{change:+g} vs eager" if change else "same as eager", delta_color="inverse" if change
                   else "off", delta_arrow="auto" if change else "off")


def interval_words(vs: Comparison) -> str:
    """A speedup's p10–p90 in the words of its headline (`result_words`), rounded alike: "8.7–12x" of a mode
    10x faster, "1.2–1.4x slower" of one 1.3x slower (eager's time over the mode's, inverted)."""
    s = vs.speedup
    if vs.verdict == "slower":
        return f"p10–p90 {times(1 / s.high).removesuffix('x')}–{times(1 / s.low)} slower"
    return f"p10–p90 {times(s.low).removesuffix('x')}–{times(s.high)}"


def show_graph_breaks(session: Session) -> None:
    compiled = [r for r in session.runs if r.ok and r.mode != "eager"]
    broken = [r for r in compiled if (r.graph_count or 0) > 1 or r.graph_breaks]
    if session.source == "trace":
        st.markdown("Plain profiler traces do not say where Dynamo broke the graph: the timeline marks where a "
                    "compiled frame ends and a new one starts within one call.")
        return
    if not broken:
        st.markdown("No graph breaks: " + ", ".join(f"{plain(r.mode)} compiled the model as "
                                                    f"{r.graph_count or 1} graph" for r in compiled) + ".")
        return
    for r in broken:
        st.markdown(f"**{plain(r.mode)}** compiled **{r.graph_count} graphs** with **{len(r.graph_breaks)} break(s)**; "
                    "the code between them runs eagerly (the gaps between shaded regions on the timeline).")
        for i, brk in enumerate(r.graph_breaks, start=1):
            st.markdown(f"{i}. {plain(brk.reason)}")
            st.code(brk.user_frame, language="text")


def show_collapse(report: Report, settings: ChartSettings, *, animated: bool) -> None:
    eager = report.session.run("eager")
    compiled = sections.mode_picker(report, "Compiled mode", "animation_mode" if animated else "collapse_mode",
                                    compiled_only=True)
    if eager is None or not eager.ok or compiled is None or compiled.mode not in report.collapses:
        st.info("The collapse view needs eager and a compiled mode that both ran.")
        return
    collapse, stamp = report.collapses[compiled.mode], sections.stamp_of(report)
    if animated:
        seconds = story.pace("lab_pace")
        sections.chart(memo(collapse, ("animation", settings, seconds),
                            lambda: collapse_animation(collapse, settings, seconds=seconds)), "animation", stamp=stamp,
                       settings=settings)
        st.caption("① back to eager · ② the eager kernels move onto the kernel that absorbs them · ③ they merge "
                   "into it. The slider steps through it frame by frame.")
    else:
        sections.chart(_collapse(collapse, settings), "collapse", stamp=stamp, settings=settings)


def _collapse(collapse: Collapse, settings: ChartSettings) -> Any:
    return memo(collapse, ("figure", settings), lambda: collapse_figure(collapse, settings))


def _latency(report: Report, settings: ChartSettings) -> Any:
    return memo(report, ("latency", settings), lambda: latency_figure(report, settings))


def _metrics(report: Report, settings: ChartSettings) -> Any:
    return memo(report, ("metrics", settings), lambda: metrics_figure(report, settings))


def show_grid(grid: Report, settings: ChartSettings) -> None:
    """A crossover grid's heat map (click a cell to show it below), its sentence and every cell's figures."""
    assert grid.grid is not None
    sections.chart(grid_figure(grid, settings), GRID, selectable=on_screen.pick_clicked_cell,
                   stamp=sections.stamp_of(grid), settings=settings)
    st.markdown(plain(grid.grid.sentence))
    with st.expander("Every cell"):
        tables.show(grid.grid.table, "lab_grid_table", helps=GRID_COLUMNS, presentable=False)


def presented(report: Report, grid: Report | None = None) -> list[str]:
    """The views presentation mode offers (with a crossover `grid`, its heat map first): one the session cannot
    show says why when picked, but the methodology is offered only for a session with the naive snippet."""
    views = [v for v in PRESENTED if VIEWS[v].needs != "naive" or report.methodology is not None]
    return (views_needing("grid") if grid else []) + views


def present(report: Report, settings: ChartSettings, grid: Report | None = None) -> None:
    """Presentation mode: one view at a time, sized to fit a 1920 × 1080 screen under its selectors; with a
    crossover `grid`, its heat map is a view too and the others show the cell picked in the sidebar. Its
    selectors rerun it alone (a fragment: the desk under it, hidden, and the sidebar stay as they are), but
    with a grid, whose heat map's click picks the cell every view shows, and so reruns the page."""
    (_present if grid is not None else _present_alone)(report, settings, grid)


def _present(report: Report, settings: ChartSettings, grid: Report | None = None) -> None:
    views = presented(report, grid)
    pick, mode_col, pace_col = st.columns([6, 2, 2], vertical_alignment="bottom")
    view = pick.radio("Show", views, horizontal=True, key="present_view", label_visibility="collapsed",
                      format_func=lambda v: VIEWS[v].label)
    shown_view, mode = VIEWS[view], None
    compiled = [r.mode for r in report.drawable if r.mode != "eager"]
    if offered := _mode_choices(view, compiled):
        mode = mode_col.selectbox("Compiled mode", offered, key=f"present_mode_{view}",
                                  format_func=lambda m: m or "every mode")
    seconds: float = story.DEFAULT_PACE
    if shown_view.animated:
        with pace_col:
            seconds = story.pace("present_pace")
    if shown_view.needs == "grid" and grid is not None:
        shown, key, on_click = grid, PRESENT_GRID, functools.partial(on_screen.pick_clicked_cell, PRESENT_GRID)
    else:
        # One element for every view but the animation (an element of its own, whose pace is set on the server),
        # which keeps a plot per view in the browser and switches between them there (`_picker`), where a plot
        # of each view's own was mounted anew on every switch.
        shown, key, on_click = report, f"present_{view}" if shown_view.animated else PLOT_KEY, None
    picker = _picker(report, views, view, settings, compiled) if key == PLOT_KEY else None
    story.show_view(shown, view, settings, key, mode=mode, seconds=seconds, height=LAB_CHART_PX, on_click=on_click,
                    picker=picker)
    with st.sidebar, web.presentation_only("lab_slide"):
        st.markdown("**This view as a slide**")
        story.slide_downloads(shown, view, "present_slide", mode=mode, seconds=seconds)


def _picker(report: Report, views: list[str], shown: str, settings: ChartSettings,
            compiled: list[str]) -> web.Picker:
    """The view picker as the browser switches it (ui/served_views.py): every view offered that draws on the
    presentation's plot, in the mode its own picker holds, and the next views fetched ahead, while this one is
    talked over (at the desk, where the plot is drawn hidden, the next one: the toggle shows this view without
    a run)."""
    offered: dict[str, dict[str, Any]] = {}
    for view in views:
        choices = _mode_choices(view, compiled)
        mode = st.session_state.get(f"present_mode_{view}") if choices else None
        mode = mode if mode in choices else (choices[0] if choices else None)
        if VIEWS[view].animated or view_problem(report, view, mode):
            continue
        offered[VIEWS[view].label] = {
            "url": served_views.offer(report, view, settings, mode, LAB_CHART_PX, PLOT_KEY),
            "config": camera_options(settings, story.slide_name(report, view))}
    ahead = [VIEWS[v].label for v in next_views(views, shown, AHEAD if state.presentation() else 1)]
    return web.Picker(web.key_class("present_view"), PLOT_KEY, offered, VIEWS[shown].label,
                      [label for label in ahead if label in offered])


def next_views(views: Sequence[str], shown: str, ahead: int) -> list[str]:
    """The `ahead` views after `shown` in the order offered, wrapping round to the first."""
    if shown not in views:
        return list(views[:ahead])
    at = list(views).index(shown)
    return [views[(at + step) % len(views)] for step in range(1, min(ahead, len(views) - 1) + 1)]


def _mode_choices(view: str, compiled: list[str]) -> list[str | None]:
    """The presentation's mode picker for `view`, the first its default: None is every mode at once; empty
    where the view takes no mode or the session has no compiled one."""
    if not (VIEWS[view].takes_mode and compiled):
        return []
    return [*([None] if VIEWS[view].every_mode else []), *compiled]


_present_alone = st.fragment(_present)


def show_methodology(report: Report, settings: ChartSettings) -> None:
    methodology = report.methodology
    if methodology is None:
        return
    if methodology.note is None:
        st.info(f"{plain(methodology.naive.mode)} was not timed properly here, so the naive loop has nothing to be "
                "set against.")
        return
    st.subheader("The naive loop against this measurement")
    sections.chart(sections.methodology_chart(methodology, settings), "methodology", stamp=sections.stamp_of(report),
                   settings=settings)
    tables.show(methodology.shown, "lab_methodology", helps=SHOWN_COLUMNS, presentable=False)
    st.caption(plain(methodology.note))


def show_proposals(report: Report, rerun: Callable[[str], None] | None) -> None:
    """"Try the fix", folded under the headline: each proposal of the session's diagnosis (`Report.proposals`), what
    it expects in one line and its evidence under it; a variant's with a button that re-runs the session's
    configuration with it added to the modes (`rerun`, `on_screen.rerun_with`) where the session can be measured
    here, else the line says to add it where the session was recorded. Advice (no option does it) has no button."""
    found = report.proposals
    if not found:
        return
    variants = sum(1 for p in found if p.variant)
    said = [f"{variants} variant{'s' if variants != 1 else ''} to re-run" if variants else "",
            f"{len(found) - variants} piece{'s' if len(found) - variants != 1 else ''} of advice"
            if len(found) > variants else ""]
    with st.expander("Try the fix: " + ", ".join(w for w in said if w)):
        for i, proposal in enumerate(found):
            if proposal.variant is None:
                st.markdown(f"**Advice**: {plain(proposal.expects)}")
            elif rerun is None:
                st.markdown(f"**{plain(proposal.variant)}**: {plain(proposal.expects)} (recorded on a device not "
                            "on this machine: add the variant to its modes where it was recorded)")
            else:
                text, button = st.columns([5, 1], vertical_alignment="center")
                text.markdown(f"**{plain(proposal.variant)}**: {plain(proposal.expects)}")
                button.button(f"Re-run with {plain(proposal.variant)}", key=f"propose_{i}", on_click=rerun,
                              args=(proposal.variant,), width="stretch")
            st.caption(plain(proposal.diagnosis))


def show_top(report: Report, settings: ChartSettings, *, live: bool = False,
             rerun: Callable[[str], None] | None = None) -> None:
    """The top of one session's sections: its headline (what a speaker reads aloud, its mechanism on one line, the
    verdict's exact figures folded away), its metrics and its two charts (`show_rest` draws the others). What
    could have skewed the timing is a warning for a `live` run (this machine, now), and a small note under the
    headline for a recorded one: a visitor read two yellow boxes about how the library was recorded as a problem
    of their own. Under the headline, what to try next (`show_proposals`: `rerun` re-runs the session with a
    variant, None where it cannot be measured here). Its tables have no presentation form: the lab's presentation
    mode draws other views (`present`)."""
    session = report.session
    if live:
        for line in report.warnings:
            st.warning(plain(line))
    sections.show_headline(report.headline)
    if report.warnings and not live:
        st.caption("Recorded with the machine not quiet: " + " ".join(plain(line) for line in report.warnings))
    sections.show_run_problems(session, not_applicable=False)  # the verdict names the modes that do not apply
    show_proposals(report, rerun)
    show_metrics(report)
    stamp = sections.stamp_of(report)
    left, right = st.columns(2)
    with left:
        if report.timed:
            sections.chart(_latency(report, settings), "latency", stamp=stamp, settings=settings)
        else:
            st.info("No latency bars: plain profiler traces carry no timing outside the profiler, which slows "
                    "every call. Compare kernels here; time the two with `python -m fusionviz run` for speed.")
    with right:
        sections.chart(_metrics(report, settings), "metrics", stamp=stamp, settings=settings)


def show_rest(report: Report, settings: ChartSettings) -> None:
    """The sections below `show_top`, top to bottom."""
    session = report.session
    with st.expander("All numbers per mode"):
        tables.show(report.summary, "lab_summary", helps=SUMMARY_COLUMNS, presentable=False)
    st.subheader("Kernel timeline")
    sections.show_timeline(report, "timeline")
    st.subheader("What fused into what")
    show_collapse(report, settings, animated=False)
    # Drawn when asked for: an expander runs its content on every rerun, and the animation's frames were most of a
    # session switch's work.
    if st.toggle("Animated: from eager to compiled (for talks)", key="lab_animation"):
        show_collapse(report, settings, animated=True)
    show_methodology(report, settings)
    st.subheader("Graph breaks")
    show_graph_breaks(session)
    st.subheader("Kernels and generated code")
    sections.show_kernel_table(report, "kernels")
    st.subheader("Slides")
    slides = [v for v in PRESENTED if view_problem(report, v) is None]
    view = st.selectbox("View", slides, key="slide_view", format_func=lambda v: VIEWS[v].label,
                        help="At 1920 × 1080 with the source stamp; the chart toolbar's camera saves a PNG too")
    story.slide_downloads(report, view, "report_slide")
    if session.source != "trace":
        st.subheader("Downloads")
        sections.show_downloads(session, "downloads")


def warm_parts(session: Session) -> list[Callable[[], object]]:
    """What the lab draws of `session` at the desk, in the order it draws it, as parts that each build into the
    caches the lab reads (ui/warm.py): the analysis, the latency and metrics charts stamped with their source,
    the timeline, what fused into what under the first compiled mode (the mode picker's first), the naive loop
    against the measurement where the session has one, and the presentation's first view, drawn hidden. Parts
    rather than one build, so that a click never waits long behind one."""
    settings = ChartSettings()

    def analysis() -> Report:
        report = analyse(session)
        report.headline, report.summary, report.warnings  # noqa: B018 (each part is computed when first asked for)
        return report

    def charts() -> None:
        report = analysis()
        if report.timed:
            sections.drawn_json(_latency(report, settings), sections.stamp_of(report), settings)
        sections.drawn_json(_metrics(report, settings), sections.stamp_of(report), settings)

    def timeline() -> None:
        report = analysis()
        timeline_view.warm(report, "timeline", sections.stamp_of(report))

    def collapse() -> None:
        report = analysis()
        compiled = [r.mode for r in report.drawable if r.mode != "eager"]
        if compiled and compiled[0] in report.collapses:
            sections.drawn_json(_collapse(report.collapses[compiled[0]], settings), sections.stamp_of(report), settings)

    def methodology() -> None:
        report = analysis()
        if report.methodology is not None and report.methodology.note is not None:
            sections.drawn_json(sections.methodology_chart(report.methodology, settings), sections.stamp_of(report),
                                settings)

    def presentation() -> None:
        report = analysis()
        view = presented(report)[0]
        choices = _mode_choices(view, [r.mode for r in report.drawable if r.mode != "eager"])
        if not VIEWS[view].animated:
            story.build_view(report, view, ChartSettings.presentation(), mode=choices[0] if choices else None,
                             height=LAB_CHART_PX)

    return [analysis, charts, timeline, collapse, methodology, presentation]


def warm_top(session: Session) -> None:
    """What a browser's first run of the lab draws of `session`, its top (`show_top`, ui/page.py's `top_only`):
    the parts `warm_parts` gives first, the analysis and the two charts. The rest is the rest run's own to build:
    built here too, it took a core while the browser drew the first chart (benchmarks/RESULTS.md, "A first visit:
    the worker started once the first chart is on screen")."""
    analysis, charts, *_ = warm_parts(session)
    analysis()
    charts()
