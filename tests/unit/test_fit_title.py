"""A chart laid out in one of two columns wraps its title to its width (charts.style.fit_title): the Dynamic
shapes page's "Cumulative time over the schedule: mark_dynamic is ahead from call 1" ran off the plot."""

from __future__ import annotations

import dataclasses

import plotly.graph_objects as go

from fusionviz.charts.style import CHAR_EM, TITLE_LINE_EM, ChartSettings, fit_title, style

LONG = "Cumulative time over the schedule: mark_dynamic is ahead from call 1"


def test_a_title_longer_than_a_half_width_plot_wraps_and_the_margin_grows_by_its_lines() -> None:
    half = dataclasses.replace(ChartSettings(), plot_px=540)
    fig = style(go.Figure(), half, LONG, 380)
    top = fig.layout.margin.t
    fit_title(fig, half)
    lines = fig.layout.title.text.split("<br>")
    assert len(lines) == 2 and " ".join(lines) == LONG
    assert all(len(line) * CHAR_EM * half.title_size <= half.plot_px for line in lines)
    gained = round(TITLE_LINE_EM * half.title_size)
    assert (fig.layout.margin.t, fig.layout.height) == (top + gained, 380 + gained)


def test_a_title_that_fits_is_left_as_it_is() -> None:
    fig = style(go.Figure(), ChartSettings(), LONG, 380)
    before = fig.to_plotly_json()
    assert fit_title(fig, ChartSettings()).to_plotly_json() == before
