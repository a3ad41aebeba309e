"""Each view's own headline and caption, as the registry (`charts.registry.VIEWS`) names them: a function of the
session's Report and the mode, which reads the parts of the Report the view is about and hands them to the
analysis function that words them (the analysis takes data, not the Report).

`view_headline(report, view, mode)` is a view's `analysis.headline.Headline` (a few words read aloud, one line of
mechanism, the exact figures in its details); the registry's caption of a view (`*_caption`) is its headline's
`line`, the headline and its mechanism as one line."""

from __future__ import annotations

from collections.abc import Callable

from fusionviz.analysis import bytes_moved, captions, kernel_costs, ladder, what_if
from fusionviz.analysis.bound import bound_headline
from fusionviz.analysis.headline import Headline
from fusionviz.analysis.memory import memory_headline
from fusionviz.analysis.modules import module_headline
from fusionviz.analysis.plan_diff import PlanDiff, baseline
from fusionviz.analysis.report import Report

Worded = Callable[[Report, str | None], Headline]


def verdict_headline(report: Report, mode: str | None = None) -> Headline:
    """The mode against eager (`Report.mode_headlines`); what plain traces can say where there is no timing."""
    run = report.focus(mode)
    if run is not None and run.mode in report.mode_headlines:
        return report.mode_headlines[run.mode]
    return report.headline


def timeline_headline(report: Report, mode: str | None = None) -> Headline:
    return captions.timeline_headline(report.caption_fields(mode), report.focus(mode),
                                      report.session.environment.device_kind)


def kernels_headline(report: Report, mode: str | None = None) -> Headline:
    run = report.focus(mode)
    return captions.kernels_headline(report.caption_fields(mode), report.collapses.get(run.mode) if run else None)


def source_headline(report: Report, mode: str | None = None) -> Headline:
    return captions.source_headline(report.focus(mode), report.source_views)


def modules_headline(report: Report, mode: str | None = None) -> Headline:
    run = report.focus(mode)
    return module_headline(report.modules, run.mode if run else None)


def latency_headline(report: Report, mode: str | None = None) -> Headline:
    """Every mode at once: `mode` is not used."""
    return captions.latency_headline(report.comparisons, report.fastest)


def methodology_headline(report: Report, mode: str | None = None) -> Headline:
    """Without a naive snippet, the verdict's headline."""
    if report.methodology is None:
        return verdict_headline(report, mode)
    return captions.methodology_headline(report.methodology, report.comparisons)


def sweep_latency_headline(report: Report, mode: str | None = None) -> Headline:
    return captions.sweep_latency_headline(report.sweep, report.session.sweep)


def sweep_steady_headline(report: Report, mode: str | None = None) -> Headline:
    return captions.sweep_steady_headline(report.sweep, report.session.sweep)


def sweep_cumulative_headline(report: Report, mode: str | None = None) -> Headline:
    return captions.sweep_cumulative_headline(report.sweep, report.session.sweep)


def grid_headline(report: Report, mode: str | None = None) -> Headline:
    assert report.grid is not None  # the registry draws a grid view of a grid session only
    return captions.grid_headline(report.grid)


def waterfall_headline(report: Report, mode: str | None = None) -> Headline:
    return ladder.waterfall_headline(report.ladder, report.bounds)


def bound_view_headline(report: Report, mode: str | None = None) -> Headline:
    return bound_headline(report.bounds)


def what_if_headline(report: Report, mode: str | None = None) -> Headline:
    return what_if.what_if_headline(what_if.what_if(report.session))


def bytes_headline(report: Report, mode: str | None = None) -> Headline:
    return bytes_moved.bytes_headline(report.bytes_moved, report.focus(mode), report.session.run("eager"))


def memory_view_headline(report: Report, mode: str | None = None) -> Headline:
    focus = report.focus(mode)
    return memory_headline(report.memory, focus.mode if focus is not None else None)


def roofline_headline(report: Report, mode: str | None = None) -> Headline:
    eager, focus = report.session.run("eager"), report.focus(mode)
    caption = kernel_costs.roofline_caption(report.session.ceilings, eager, focus, report.costs)
    return captions.roofline_headline(caption, eager, focus, report.costs)


def mode_diff(report: Report, mode: str | None = None) -> PlanDiff:
    """The plan diff the plan_diff view shows for `mode` (its focus): against `default` for another compiled
    mode, else against eager (`plan_diff.baseline`)."""
    run = report.focus(mode)
    assert run is not None  # view_problem said so
    against = baseline(report.drawable, run.mode)
    assert against is not None  # the view needs an eager run with kernels
    return report.plan_diff(against, run.mode)


def plan_diff_headline(report: Report, mode: str | None = None) -> Headline:
    return mode_diff(report, mode).headline


# Every view of the registry, by name (tests/unit/test_headlines.py holds the two to the same names).
HEADLINES: dict[str, Worded] = {
    "verdict": verdict_headline, "timeline": timeline_headline, "collapse": kernels_headline,
    "animation": kernels_headline, "source": source_headline, "modules": modules_headline,
    "latency": latency_headline,
    "methodology": methodology_headline, "sweep_latency": sweep_latency_headline,
    "sweep_steady": sweep_steady_headline, "sweep_cumulative": sweep_cumulative_headline, "grid": grid_headline,
    "waterfall": waterfall_headline, "bytes": bytes_headline, "roofline": roofline_headline,
    "bound": bound_view_headline, "what_if": what_if_headline, "memory": memory_view_headline,
    "plan_diff": plan_diff_headline,
}


def view_headline(report: Report, view: str, mode: str | None = None) -> Headline:
    """The headline of `view` (a name of `charts.registry.VIEWS`) for `mode`."""
    return HEADLINES[view](report, mode)


def _caption(worded: Worded) -> Callable[[Report, str | None], str]:
    """The registry's caption of a view: its headline as one line."""
    def caption(report: Report, mode: str | None = None) -> str:
        return worded(report, mode).line

    caption.__doc__ = f"`{worded.__name__}`'s headline as one line."
    return caption


verdict_caption = _caption(verdict_headline)
timeline_caption = _caption(timeline_headline)
kernels_caption = _caption(kernels_headline)
source_caption = _caption(source_headline)
modules_caption = _caption(modules_headline)
latency_caption = _caption(latency_headline)
methodology_caption = _caption(methodology_headline)
sweep_latency_caption = _caption(sweep_latency_headline)
sweep_steady_caption = _caption(sweep_steady_headline)
sweep_cumulative_caption = _caption(sweep_cumulative_headline)
grid_caption = _caption(grid_headline)
waterfall_caption = _caption(waterfall_headline)
bound_caption = _caption(bound_view_headline)
what_if_caption = _caption(what_if_headline)
bytes_caption = _caption(bytes_headline)
roofline_caption = _caption(roofline_headline)
memory_caption = _caption(memory_view_headline)
plan_diff_caption = _caption(plan_diff_headline)
