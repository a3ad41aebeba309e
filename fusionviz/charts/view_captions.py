"""Each view's own caption, as the registry (`charts.registry.VIEWS`) names it: a function of the session's Report
and the mode, which reads the parts of the Report the view is about and hands them to the analysis function of
the same name, which words them (the analysis takes data, not the Report)."""

from __future__ import annotations

from fusionviz.analysis import bytes_moved, captions, kernel_costs, ladder, what_if
from fusionviz.analysis.report import Report


def verdict_caption(report: Report, mode: str | None = None) -> str:
    return captions.verdict_caption(report.caption_fields(mode), report.session.environment.device_kind)


def timeline_caption(report: Report, mode: str | None = None) -> str:
    return captions.timeline_caption(report.caption_fields(mode), report.focus(mode),
                                     report.session.environment.device_kind)


def kernels_caption(report: Report, mode: str | None = None) -> str:
    return captions.kernels_caption(report.caption_fields(mode))


def source_caption(report: Report, mode: str | None = None) -> str:
    return captions.source_caption(report.focus(mode), report.source_views)


def latency_caption(report: Report, mode: str | None = None) -> str:
    """Every mode at once: `mode` is not used."""
    return captions.latency_caption(report.comparisons)


def methodology_caption(report: Report, mode: str | None = None) -> str:
    """Without a naive snippet, the verdict's caption."""
    if report.methodology is None:
        return verdict_caption(report, mode)
    return captions.methodology_caption(report.methodology, report.comparisons)


def sweep_latency_caption(report: Report, mode: str | None = None) -> str:
    return captions.sweep_latency_caption(report.sweep, report.session.sweep)


def sweep_steady_caption(report: Report, mode: str | None = None) -> str:
    return captions.sweep_steady_caption(report.sweep, report.session.sweep)


def sweep_cumulative_caption(report: Report, mode: str | None = None) -> str:
    return captions.sweep_cumulative_caption(report.sweep, report.session.sweep)


def grid_caption(report: Report, mode: str | None = None) -> str:
    assert report.grid is not None  # the registry draws a grid view of a grid session only
    return captions.grid_caption(report.grid)


def waterfall_caption(report: Report, mode: str | None = None) -> str:
    return ladder.waterfall_caption(report.ladder)


def bound_caption(report: Report, mode: str | None = None) -> str:
    return ladder.bound_caption(report.session)


def what_if_caption(report: Report, mode: str | None = None) -> str:
    return what_if.what_if_caption(what_if.what_if(report.session))


def bytes_caption(report: Report, mode: str | None = None) -> str:
    return bytes_moved.bytes_caption(report.bytes_moved, report.focus(mode), report.session.run("eager"))


def roofline_caption(report: Report, mode: str | None = None) -> str:
    return kernel_costs.roofline_caption(report.session.ceilings, report.session.run("eager"), report.focus(mode),
                                         report.costs)
