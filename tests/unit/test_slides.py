"""Views and slides on hand-made sessions, without a browser: which views a session can show, their figures,
the stamp, the slide size, the toolbar camera's size, offline HTML; and every table's number formats."""

from __future__ import annotations

import dataclasses

import msgspec
import pandas as pd
import plotly.graph_objects as go
import pytest

from fusionviz.analysis.report import analyse
from fusionviz.charts.collapse import STAGES, collapse_animation
from fusionviz.charts.export import (
    SLIDE_HEIGHT,
    SLIDE_WIDTH,
    camera_options,
    gif_bytes,
    html_bytes,
    slide,
    source_stamp,
    stamped,
)
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.style import ChartSettings
from fusionviz.charts.views import view_figure, view_problem
from fusionviz.errors import ConfigError, ExportError
from tests.unit.factories import collapse_of, k, run, session
from ui.tables import html_table, number_formats

EAGER = run("eager", [k("aten::mul", 0, 10, ops=("mul",), op_id=1), k("aten::add", 20, 10, ops=("add",), op_id=2)])
FUSED = run("default", [k("triton_poi_fused_add_mul_0", 0, 10, ops=("add", "mul"))], compile_s=2.0)
SLOW = run("max-autotune-no-cudagraphs", FUSED.kernels, compile_s=9.0)
MS = {"eager": [[0.30, 0.31, 0.29]], "default": [[0.10, 0.10, 0.11]], "max-autotune-no-cudagraphs": [[0.4] * 3]}
TIMED = analyse(session(EAGER, FUSED, SLOW, ms=MS))


def test_a_session_shows_the_views_it_holds_the_data_for() -> None:
    assert view_problem(TIMED, "timeline") is None and view_problem(TIMED, "latency") is None
    assert "shape-sweep" in (view_problem(TIMED, "sweep_latency") or "")
    assert "crossover-grid" in (view_problem(TIMED, "grid") or "")
    assert "naive" in (view_problem(TIMED, "methodology") or "")
    assert view_problem(TIMED, "collapse", "reduce-overhead") == "reduce-overhead did not run in this session"
    assert "no timing" in (view_problem(analyse(session(EAGER, FUSED)), "latency") or "")
    with pytest.raises(ConfigError, match="did not run"):
        view_figure(TIMED, "animation", mode="max-autotune")
    assert set(VIEWS) >= {"verdict", "timeline", "collapse", "animation", "latency"}


def test_view_figures_follow_the_scene() -> None:
    timeline = view_figure(TIMED, "timeline", mode="max-autotune-no-cudagraphs", zoom=(5.0, 25.0))
    assert {str(t) for t in timeline.layout.yaxis.ticktext} == {
        "<b>eager</b>", "CPU", "<b>max-autotune-no-cudagraphs</b>"}  # eager and the scene's mode only
    assert list(timeline.layout.xaxis.range) == [5.0, 25.0]
    verdict = view_figure(TIMED, "verdict")
    assert verdict.layout.title.text.startswith("default: ") and "faster than eager" in verdict.layout.title.text
    animation = view_figure(TIMED, "animation", seconds=8.0)
    assert animation.layout.updatemenus[0].buttons[-1].args[1]["frame"]["duration"] == pytest.approx(8000 / 30)


def test_the_animation_moves_eager_boxes_onto_the_fused_kernel_and_merges_them() -> None:
    fig = collapse_animation(collapse_of(EAGER, FUSED), steps=10)
    first, last = fig.frames[0].data, fig.frames[-1].data
    assert list(first[0].x) == [0.0, 1.0] and list(first[0].y) == [1.0, 1.0]
    assert list(last[0].x) == [0.5, 0.5] and list(last[0].y) == [0.0, 0.0]  # both on the one fused kernel
    assert list(last[0].marker.size) == [0.0, 0.0] and last[1].marker.size > first[1].marker.size  # merged
    assert last[0].marker.opacity == 1.0  # moving, not fading
    assert {f.group for f in fig.frames} == {group for group, _ in STAGES}
    labels = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert labels == ["① eager", "② move", "③ merge", "▶ all"]
    assert fig.layout.xaxis.fixedrange and fig.layout.yaxis.fixedrange


def test_a_slide_is_stamped_and_slide_sized() -> None:
    fig = view_figure(TIMED, "latency", ChartSettings.presentation())
    out = slide(fig, "NVIDIA H200 · torch 2.11.0 · 2026-11-29", ChartSettings.presentation())
    assert (out.layout.width, out.layout.height) == (SLIDE_WIDTH, SLIDE_HEIGHT)
    # a figure drawn from a Report stamps itself with its session; a figure that does not know one, the caller's
    assert out.layout.title.subtitle.text == source_stamp(TIMED.source)
    plain = slide(go.Figure(), "NVIDIA H200 · torch 2.11.0 · 2026-11-29", ChartSettings.presentation())
    assert plain.layout.title.subtitle.text == "NVIDIA H200 · torch 2.11.0 · 2026-11-29"
    assert out.layout.margin.t > fig.layout.margin.t and fig.layout.title.subtitle.text is None  # a copy
    assert stamped(fig, "x", ChartSettings()).layout.title.subtitle.font.size < ChartSettings().font_size


def test_the_toolbar_camera_saves_1920_by_1080() -> None:
    small = camera_options(ChartSettings(), "k")["toImageButtonOptions"]
    big = camera_options(ChartSettings.presentation(), "k")["toImageButtonOptions"]
    assert small["width"] * small["scale"] == big["width"] * big["scale"] == SLIDE_WIDTH
    assert small["height"] * small["scale"] == SLIDE_HEIGHT and small["scale"] == 2  # screen fonts doubled


def test_html_opens_offline_and_a_gif_needs_frames() -> None:
    page = html_bytes(view_figure(TIMED, "animation"), "scene").decode()
    assert "<title>scene</title>" in page and "Plotly.newPlot" in page
    assert "<script src=" not in page and "<script type=\"text/javascript\" src=" not in page  # nothing to fetch
    assert len(page) > 1_000_000  # plotly.js inlined
    with pytest.raises(ExportError, match="animation"):
        gif_bytes(view_figure(TIMED, "latency"))


def test_every_table_number_is_formatted_by_its_unit() -> None:
    frame = pd.DataFrame({"mode": ["eager"], "dur_us": [1.234], "busy_pct": [48.2], "median_ms": [1176.9223],
                          "count": [3], "ok": [True]})
    assert number_formats(frame) == {"dur_us": "%.1f", "busy_pct": "%.1f", "median_ms": "%.4g", "count": "%d"}
    assert number_formats(frame)["median_ms"] % 1176.9223 == "1177"
    assert dataclasses.is_dataclass(ChartSettings)


def test_a_presentation_table_is_one_html_table_with_names_escaped() -> None:
    frame = pd.DataFrame({"name": ["<img src=x onerror=alert(1)>", "triton_poi_fused_add_0"], "dur_us": [1.234, None],
                          "count": [3, 4], "stream": [None, ("a", "b")]})
    table = html_table(frame, number_formats(frame), "x_top_my trace.json")
    assert table.count("<table") == 1 and 'class="fv-table"' in table
    assert "<img" not in table and "&lt;img src=x onerror=alert(1)&gt;" in table
    cells = [line.split(">", 1)[1].rsplit("</td", 1)[0] for line in table.splitlines() if "<td" in line]
    assert cells == ["&lt;img src=x onerror=alert(1)&gt;", "1.2", "3", "–",
                     "triton_poi_fused_add_0", "–", "4", "(&#x27;a&#x27;, &#x27;b&#x27;)"]
    assert 'id="T_x_top_my_trace_json"' in table  # an id its own CSS rules can name


def test_two_recordings_of_one_configuration_are_stamped_apart() -> None:
    # the talk's scenes 6 and 18: eager mlp 512 × 256 at 122 µs and at 73 µs, from two files recorded the same day,
    # both stamped "NVIDIA H200 · torch 2.11.0+cu130 · 2026-12-01"
    first = msgspec.structs.replace(TIMED.session, label="sessions/h200_mlp_512x256_float32.json.gz")
    first.environment = msgspec.structs.replace(first.environment, device_name="NVIDIA H200",
                                                torch_version="2.11.0+cu130", captured_at="2026-12-01T11:24:16+00:00")
    second = msgspec.structs.replace(first, label="/tmp/acc/h200_mlp_512x256_float32_run1.json.gz",
                                     environment=msgspec.structs.replace(first.environment,
                                                                         captured_at="2026-12-01T09:55:49+00:00"))
    stamps = [slide(view_figure(analyse(s), "verdict", ChartSettings.presentation()), analyse(s).source.stamp,
                    ChartSettings.presentation()).layout.title.subtitle.text for s in (first, second)]
    assert stamps[0] == "h200_mlp_512x256_float32.json.gz · NVIDIA H200 · torch 2.11.0+cu130 · 2026-12-01 11:24"
    assert stamps[1].startswith("h200_mlp_512x256_float32_run1.json.gz · ") and stamps[1].endswith("09:55")
    assert analyse(first).source.stamp == analyse(second).source.stamp  # what both scenes said before
    # the file it was opened as names it where the caller knows it (the CLI's export, a talk's scene)
    assert source_stamp(analyse(second).source, "sessions/h200_acct_mlp_512x256_float32.json.gz").startswith(
        "h200_acct_mlp_512x256_float32.json.gz · NVIDIA H200")
