"""A named view (`charts.registry.VIEWS`) of one session's Report: whether the session can show it, its figure
and its caption, as a talk's scene, the lab's presentation mode, a slide and `python -m fusionviz export` draw
it; and the `draw_*` functions the registry names, each a view's figure from the report and what was asked."""

from __future__ import annotations

import msgspec
import plotly.graph_objects as go

from fusionviz.analysis.captions import speedup_words
from fusionviz.analysis.links import Collapse
from fusionviz.analysis.report import Report
from fusionviz.analysis.source_view import has_sources
from fusionviz.charts.collapse import collapse_animation, collapse_figure
from fusionviz.charts.export import carry_stamp
from fusionviz.charts.grid import grid_figure
from fusionviz.charts.latency import latency_figure, metrics_figure
from fusionviz.charts.methodology import methodology_figure
from fusionviz.charts.registry import VIEWS, Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, ChartSettings
from fusionviz.charts.sweep import sweep_cumulative_figure, sweep_latency_figure, sweep_steady_figure
from fusionviz.charts.timeline import timeline_figure
from fusionviz.charts.timeline_layout import timeline_bars
from fusionviz.errors import ConfigError


def view_problem(report: Report, view: str, mode: str | None = None) -> str | None:
    """Why this session cannot show `view` (for `mode`), in a sentence; None when it can."""
    session = report.session
    info = VIEWS.get(view)
    if info is None:
        return f"unknown view {view!r}: choose from {', '.join(VIEWS)}"
    if info.needs == "sweep":
        return None if session.sweep is not None else f"the {view} view needs a shape-sweep session"
    if info.needs == "grid":
        return None if session.grid is not None else "the grid view needs a crossover-grid session (fusionviz grid)"
    if info.needs == "naive" and (report.methodology is None or report.methodology.table.empty):
        return ("the methodology view needs a session recorded with the naive snippet (fusionviz run "
                "--naive-calls N) whose mode was timed")
    eager = session.run("eager")
    if eager is None or not eager.ok or eager not in report.drawable:
        return f"the {view} view needs an eager run with kernels, and this session has none"
    if info.needs == "sources" and not has_sources(eager, report.focus(mode)):
        return (f"the {view} view needs a session recorded with the lines of its kernels (fusionviz 0.1 sessions "
                "of schema 3): this one was recorded before")
    if view == "memory" and not any(r.memory is not None and r.memory.timeline for r in session.runs):
        if not session.config.memory:
            return ("the memory view needs each mode's memory, and this run was asked without it (`run --no-memory`, "
                    "or the lab's Memory box unticked)")
        return ("the memory view needs a session recorded with each mode's memory (fusionviz run since issue 47): "
                "this one was recorded before")
    if info.needs == "timing" and not report.timed:
        return "this session carries no timing (plain profiler traces have none), so there are no latencies to draw"
    if info.takes_mode and report.focus(mode) is None:
        return (f"{mode} did not run in this session" if mode else "no compiled mode ran in this session")
    return None


def view_figure(report: Report, view: str, settings: ChartSettings = DEFAULT_SETTINGS, mode: str | None = None,
                zoom: tuple[float, float] | None = None, seconds: float = 4.0) -> go.Figure:
    """The figure of `view` for `mode` (default: the first compiled mode that ran), its x axis limited to
    `zoom`; `seconds` is the animation's length; it carries the session's stamp (`carry_stamp`). Raises
    ConfigError when the session cannot show it."""
    problem = view_problem(report, view, mode)
    if problem:
        raise ConfigError(problem)
    fig = carry_stamp(VIEWS[view].draw(report, Asked(settings, mode, seconds)), report.source)
    if zoom:
        fig.update_xaxes(range=list(zoom), autorange=False)
    return fig


def view_caption(report: Report, view: str, mode: str | None = None) -> str:
    """The view's own one-line caption, from the data."""
    return VIEWS[view].words(report, mode)


def scene_caption(report: Report, template: str | None, view: str, mode: str | None = None) -> str:
    """A talk scene's caption: the speaker's template filled from the data, else the view's own."""
    if template is None:
        return view_caption(report, view, mode)
    return template.format(**report.caption_fields(mode))


def _collapse(report: Report, mode: str | None) -> Collapse:
    """What fused into what under the mode a view is about (view_problem found it)."""
    run = report.focus(mode)
    assert run is not None
    return report.collapses[run.mode]


def draw_verdict(report: Report, asked: Asked) -> go.Figure:
    run = report.focus(asked.mode)
    assert run is not None  # view_problem said so
    vs = report.comparisons.get(run.mode)
    return metrics_figure(report, asked.settings, f"{run.mode}: {speedup_words(vs)}" if vs else "Per mode")


def draw_timeline(report: Report, asked: Asked) -> go.Figure:
    """Eager and the asked mode, or every mode when none is asked."""
    session = report.session
    shown = (msgspec.structs.replace(session, runs=[r for r in session.runs if r.mode in ("eager", asked.mode)])
             if asked.mode else session)
    return timeline_figure(shown, timeline_bars(shown), asked.settings, latencies=report.latencies)


def draw_collapse(report: Report, asked: Asked) -> go.Figure:
    return collapse_figure(_collapse(report, asked.mode), asked.settings)


def draw_animation(report: Report, asked: Asked) -> go.Figure:
    return collapse_animation(_collapse(report, asked.mode), asked.settings, seconds=asked.seconds)


def draw_latency(report: Report, asked: Asked) -> go.Figure:
    return latency_figure(report, asked.settings)


def draw_methodology(report: Report, asked: Asked) -> go.Figure:
    assert report.methodology is not None  # view_problem said so
    return methodology_figure(report.methodology.table, asked.settings)


def draw_sweep_latency(report: Report, asked: Asked) -> go.Figure:
    return sweep_latency_figure(report, asked.settings)


def draw_sweep_steady(report: Report, asked: Asked) -> go.Figure:
    return sweep_steady_figure(report, asked.settings)


def draw_sweep_cumulative(report: Report, asked: Asked) -> go.Figure:
    return sweep_cumulative_figure(report, asked.settings)


def draw_grid(report: Report, asked: Asked) -> go.Figure:
    return grid_figure(report, asked.settings)
