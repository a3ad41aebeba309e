"""The plan diff of one mode against the run before it (`analysis.plan_diff`): one row per fusion group, A's
µs per iteration as a grey bar above B's, coloured by what happened to the group (merged, split, appeared...)."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from fusionviz.analysis.plan_diff import CHANGES, PlanDiff
from fusionviz.analysis.report import Report
from fusionviz.charts.registry import Asked
from fusionviz.charts.style import DEFAULT_SETTINGS, EAGER_COLOUR, ChartSettings, legend_below, style
from fusionviz.charts.view_captions import mode_diff

CHANGE_COLOURS: dict[str, str] = {
    "merged": "#4C78A8", "split": "#F58518", "regrouped": "#B279A2", "appeared": "#E45756", "vanished": "#54A24B",
    "replaced": "#72B7B2", "kept": "#BAB0AC",
}
LABEL_CHARS = 48  # a group's label on the y axis, its computed ops cut to this


def group_labels(diff: PlanDiff) -> list[str]:
    """Each group's y label: its number and change, what it computes (cut short), and its kernels A → B."""
    labels = []
    for row in diff.groups.itertuples():
        what = str(row.computes)
        what = what if len(what) <= LABEL_CHARS else what[:LABEL_CHARS - 1] + "…"
        labels.append(f"<b>{row.group} {row.change}</b> {row.launches_a}→{row.launches_b} kernels<br>{what}")
    return labels


def plan_diff_figure(diff: PlanDiff, settings: ChartSettings = DEFAULT_SETTINGS) -> go.Figure:
    groups = diff.groups
    labels = group_labels(diff)

    def hover(names: str, launches: int, bytes_: float) -> str:
        moved = f"{bytes_ / 1e6:.3g} MB" if math.isfinite(bytes_) else "bytes unknown"
        return f"{names or 'no kernel'}<br>{launches} launches, {moved}"

    traces = [go.Bar(y=labels, x=list(groups.us_a), orientation="h", name=diff.a, offsetgroup="a",
                     marker_color=EAGER_COLOUR,
                     customdata=[hover(r.names_a, r.launches_a, r.bytes_a) for r in groups.itertuples()],
                     hovertemplate=f"{diff.a}: %{{x:.1f}} µs<br>%{{customdata}}<extra></extra>")]
    for change in CHANGES:
        picked = groups[groups.change == change]
        if picked.empty:
            continue
        traces.append(go.Bar(
            y=[labels[i] for i in picked.index], x=list(picked.us_b), orientation="h", offsetgroup="b",
            name=f"{diff.b}: {change}", marker_color=CHANGE_COLOURS[change],
            customdata=[hover(r.names_b, r.launches_b, r.bytes_b) for r in picked.itertuples()],
            hovertemplate=f"{diff.b}: %{{x:.1f}} µs<br>%{{customdata}}<extra></extra>"))
    fig = go.Figure(traces)
    fig.update_layout(barmode="group")
    matched = "matched by Inductor's records" if diff.links == "provenance" else "matched by kernel names"
    fig.update_xaxes(title_text=f"kernel µs per iteration (profiled; groups {matched})", gridcolor="#EEEEEE",
                     rangemode="tozero")
    fig.update_yaxes(autorange="reversed", categoryorder="array", categoryarray=labels)
    height = max(settings.chart_px, 140 + 2 * settings.lane_px * len(groups))
    return legend_below(style(fig, settings, f"Plan diff: {diff.b} against {diff.a}, fusion group by group", height))


def draw_plan_diff(report: Report, asked: Asked) -> go.Figure:
    return plan_diff_figure(mode_diff(report, asked.mode), asked.settings)
