"""The timeline's inputs on hand-made traces: hovers carry each bar's true start and duration, memory operations
get their own colour, graph breaks are changes of compiled frame within one call, one lane per stream, and large
timelines drawn with WebGL at a level of detail."""

from typing import Any

import numpy as np
import pandas as pd
import pytest

from fusionviz.charts import timeline
from fusionviz.charts.style import CLASS_COLOURS, ChartSettings
from fusionviz.charts.timeline import clicked_kernel, lane_bins, level_of_detail, timeline_figure, timeline_layout
from fusionviz.charts.timeline_layout import (
    CPU_W,
    KERNEL_W,
    STREAM_GAP,
    break_markers,
    matching_kernels,
    timeline_bars,
    timeline_lanes,
)
from fusionviz.records.files import session_from_trace
from fusionviz.records.session import GraphBreak
from tests.clicks import clicked
from tests.synthetic import gpu_trace
from tests.unit.test_trace import calls_trace, ev, memory_trace, replay_trace


def test_hovers_show_true_start_and_duration_not_the_bars_end() -> None:
    session = session_from_trace(memory_trace(), "mem")
    fig = timeline_figure(session, timeline_bars(session))
    (gemm,) = [t for t in fig.data if t.name == "gemm"]
    assert "%{x" not in gemm.hovertemplate and "%{base" not in gemm.hovertemplate
    assert (gemm.customdata[0][8], gemm.customdata[0][9], gemm.customdata[0][10]) == (20, 40, 0)
    (memory,) = [t for t in fig.data if t.name == "memory"]
    assert (memory.marker.color, len(memory.customdata)) == (CLASS_COLOURS["memory"], 2)


def test_all_iterations_lay_bars_end_to_end_but_hover_their_own_start() -> None:
    session = session_from_trace(replay_trace(), "replay")
    bars = timeline_bars(session, all_iterations=True)
    copies = bars[(bars.lane == "kernel") & (bars.kind == "copy")]
    assert list(copies.at_us) == [30, 30, 30]
    # each iteration starts where the previous one's last event (graph_kernel_b, 55 + 10 µs in) ended
    assert list(copies.start_us) == [30, 65 + 30, 2 * 65 + 30]


def graph_break_trace() -> dict[str, Any]:
    """Two steps; in each, compiled frame 0 runs a graph, breaks on `.item()`, and frame 1 resumes inside it
    (as Dynamo runs a resumed frame: `Torch-Compiled Region: 1/0` inside `0/0`)."""
    events = []
    for step in range(2):
        t0 = 100 * step
        events += [
            ev(f"ProfilerStep#{step + 1}", "user_annotation", t0, 100),
            ev("Torch-Compiled Region: 0/0", "cpu_op", t0 + 5, 90),
            ev("## Call CompiledFxGraph abc ##", "user_annotation", t0 + 10, 30),
            ev("graph_0_cpp_fused_mul_0", "cpu_op", t0 + 12, 20),
            ev("aten::_local_scalar_dense", "cpu_op", t0 + 42, 3),
            ev("Torch-Compiled Region: 1/0", "cpu_op", t0 + 50, 40),
            ev("## Call CompiledFxGraph def ##", "user_annotation", t0 + 55, 30),
            ev("graph_1_cpp_fused_relu_0", "cpu_op", t0 + 60, 20),
        ]
    return {"traceEvents": events}


def test_a_change_of_compiled_frame_within_a_call_is_a_break() -> None:
    session = session_from_trace(graph_break_trace(), "gb")
    session.runs[0].graph_breaks = [GraphBreak("Tensor.item() call", "model.py:12 in forward: if x.item():")]
    markers = break_markers(session, timeline_bars(session))
    assert list(markers.x_us) == [10 + 30]  # where the graph before the break ended: eager code runs from there
    assert list(markers.reason) == ["Tensor.item() call"]
    every = break_markers(session, timeline_bars(session, all_iterations=True))
    assert len(every) == 2 and list(every.reason) == ["Tensor.item() call"] * 2


def test_calls_of_one_region_one_after_another_are_no_break() -> None:
    for iterations in ("steps", "calls"):
        session = session_from_trace(calls_trace(), "calls", iterations=iterations)  # type: ignore[arg-type]
        bars = timeline_bars(session, all_iterations=True)
        assert len(bars[bars.lane == "region"]) == 3
        assert break_markers(session, bars).empty


def streams_trace() -> dict[str, Any]:
    """Two steps; in each, a GEMM on stream 7 and a copy on stream 13 launched by one op."""
    events = []
    for step in range(2):
        t0 = 100 * step
        events += [
            ev(f"ProfilerStep#{step + 1}", "user_annotation", t0, 100),
            ev("aten::mm", "cpu_op", t0 + 5, 20, **{"External id": 10 + step}),
            ev("cudaLaunchKernel", "cuda_runtime", t0 + 6, 2, correlation=10 + step),
            ev("nvjet_tst_gemm", "kernel", t0 + 10, 30, tid=7, correlation=10 + step, stream=7),
            ev("cudaLaunchKernel", "cuda_runtime", t0 + 9, 2, correlation=20 + step),
            ev("void at::native::vectorized_elementwise_kernel<4>()", "kernel", t0 + 15, 10 + step, tid=13,
               correlation=20 + step, stream=13),
        ]
    return {"traceEvents": events}


def test_one_kernel_lane_per_stream_and_the_cpu_lane_below() -> None:
    session = session_from_trace(streams_trace(), "s")
    bars = timeline_bars(session)
    kernels = bars[bars.lane == "kernel"]
    assert dict(zip(kernels.stream, kernels.y, strict=True)) == {7: 0.0, 13: STREAM_GAP}
    lanes = timeline_lanes(session, bars)
    assert [lane.label for lane in lanes] == ["<b>s</b> · stream 7", "stream 13", "CPU"]
    assert lanes[-1].y == STREAM_GAP + 0.62  # the CPU lane moves down by the extra lane
    fig = timeline_figure(session, bars)
    assert fig.layout.yaxis.ticktext == ("<b>s</b> · stream 7", "stream 13", "CPU")


def test_a_chosen_iteration_is_drawn() -> None:
    session = session_from_trace(streams_trace(), "s")
    copies = timeline_bars(session, iteration=0)
    copies = copies[copies.stream == 13]
    assert (list(copies.iteration), list(copies.dur_us)) == ([0], [10])  # step 1's copy took 10 µs, step 2's 11
    assert list(timeline_bars(session, iteration=9).iteration.unique()) == [1]  # no such step: the steady one


def test_lane_bins_cover_time_slices() -> None:
    bars = pd.DataFrame({"y": [0.0, 0.0, 1.0], "start_us": [0.0, 5.0, 12.0], "dur_us": [5.0, 10.0, 100.0]})
    busy, counts = lane_bins(bars, [0.0, 1.0], np.array([0.0, 10.0, 20.0]))
    # lane 0: [0, 5) and [5, 15) fill slice 0 and half of slice 1; lane 1: [12, 112) covers 8 µs of slice 1
    assert busy.tolist() == [[1.0, 0.5], [0.0, 0.8]]
    assert counts.tolist() == [[2, 0], [0, 1]]


def test_large_timelines_use_webgl_with_a_level_of_detail(monkeypatch: pytest.MonkeyPatch) -> None:
    session = session_from_trace(streams_trace(), "s")
    bars = timeline_bars(session, all_iterations=True)
    assert level_of_detail(bars, None) == "svg"
    monkeypatch.setattr(timeline, "SVG_BARS", 2)
    monkeypatch.setattr(timeline, "DETAIL_KERNELS", 3)
    assert level_of_detail(bars, None) == "bins"  # 4 kernels in the whole window
    assert level_of_detail(bars, (0.0, 50.0)) == "kernels"  # the first step's 2
    zoomed_out = timeline_figure(session, bars)
    assert {type(t).__name__ for t in zoomed_out.data} == {"Heatmap"} and zoomed_out.layout.dragmode == "select"
    detail = timeline_figure(session, bars, window=(0.0, 50.0), search="GEMM")
    cells = [t for t in detail.data if type(t).__name__ == "Heatmap" and t.name == "kernels"]
    assert len(cells) == 2  # one lane per stream
    gemm = next(c for c in cells if list(c.y) == [-KERNEL_W / 2, KERNEL_W / 2])  # the lane's band, as its bars
    assert list(gemm.x) == [10, 40] and gemm.z[0][0] == timeline.KERNEL_CLASSES.index("gemm")  # exact edges
    (click,) = [t for t in detail.data if t.name == "click"]
    assert clicked_kernel(clicked(click, 0)) == ("s", 0)
    assert list(detail.layout.xaxis.range) == [0.0, 50.0] and detail.layout.dragmode == "zoom"
    (marks,) = [t for t in detail.data if t.name.startswith("matches")]
    assert list(marks.x) == [10, 40]
    monkeypatch.setattr(timeline, "CLICK_KERNELS", 1)  # more kernels than that: no marker layer, hover on the cells
    crowded = timeline_figure(session, bars, window=(0.0, 50.0))
    assert not [t for t in crowded.data if t.name == "click"] and crowded.layout.dragmode == "select"  # a box narrows
    cells = {sum(t.y) / 2: t for t in crowded.data if type(t).__name__ == "Heatmap" and t.name == "kernels"}
    gemm = cells[0.0]  # the first step's GEMM: 30 µs from 10 µs into iteration 0
    assert list(gemm.text[0]) == ["<b>nvjet_tst_gemm</b><br>gemm"]
    assert gemm.customdata[0][0].tolist() == [30.0, 10.0, 0.0]
    assert gemm.customdata.dtype == np.float32 and " · s<br>" in gemm.hovertemplate
    assert len(matching_kernels(bars, "gemm")) == 2 and matching_kernels(bars, " ").empty


@pytest.mark.parametrize("window", [(0.0, 100.0), None])  # every kernel as cells; time slices
def test_a_large_timeline_keeps_each_lane_in_its_own_band(monkeypatch: pytest.MonkeyPatch,
                                                         window: tuple[float, float] | None) -> None:
    """Three streams over a CPU lane, drawn as heatmaps: each lane only as high as its SVG bars, apart from the
    others (a one-row heatmap given its centre alone is a unit high: the CPU lane covered the streams above), and
    the CPU lane in the legend."""
    session = session_from_trace(gpu_trace(2, 6, streams=3), "s")
    bars = timeline_bars(session, all_iterations=True)
    monkeypatch.setattr(timeline, "SVG_BARS", 2)
    monkeypatch.setattr(timeline, "DETAIL_KERNELS", 10)  # of 12 kernels
    fig = timeline_figure(session, bars, window=window)
    lanes = timeline_lanes(session, bars)
    assert [lane.label for lane in lanes] == ["<b>s</b> · stream 7", "stream 8", "stream 9", "CPU"]
    wanted = {lane.y: KERNEL_W if lane.kind == "kernel" else CPU_W for lane in lanes}
    heatmaps = [t for t in fig.data if type(t).__name__ == "Heatmap"]
    if window is not None:
        assert timeline.level_of_detail(bars, window) == "kernels"
        bands = sorted((float(t.y[0]), float(t.y[1])) for t in heatmaps)
        assert bands == [(y - w / 2, y + w / 2) for y, w in sorted(wanted.items())]
        legend = [t.name for t in fig.data if t.showlegend is not False and type(t).__name__ == "Scatter"]
        assert legend == ["triton_pointwise", "CPU op", "CPU launch"]
    else:
        (slices,) = heatmaps
        edges, z = [float(e) for e in slices.y], np.asarray(slices.z, dtype=float)
        assert edges == sorted(edges)
        rows = [edges.index(y - w / 2) for y, w in sorted(wanted.items())]  # each lane's row spans its band
        assert [edges[r + 1] for r in rows] == [y + w / 2 for y, w in sorted(wanted.items())]
        assert all(not np.isnan(z[r]).all() for r in rows)
        assert all(np.isnan(z[r]).all() for r in range(len(z)) if r not in rows)  # the gaps between lanes


@pytest.mark.parametrize("window", [None, (0.0, 50.0)])
def test_a_search_adds_one_layer_to_the_figure_drawn(monkeypatch: pytest.MonkeyPatch,
                                                      window: tuple[float, float] | None) -> None:
    session = session_from_trace(streams_trace(), "s")
    bars = timeline_bars(session, all_iterations=True)
    for svg_bars in (10_000, 2):  # SVG bars, then cells or time slices
        monkeypatch.setattr(timeline, "SVG_BARS", svg_bars)
        monkeypatch.setattr(timeline, "DETAIL_KERNELS", 3)
        drawn = timeline_figure(session, bars, window=window)
        before = drawn.to_json()
        marked = timeline.highlight(drawn, session, bars, " gemm ", window=window)
        assert drawn.to_json() == before  # the cached figure is left as it was
        added = marked.data[len(drawn.data):]
        assert added and all(t.name.startswith("matches “gemm”") for t in added)
        assert [t.to_json() for t in marked.data[:len(drawn.data)]] == [t.to_json() for t in drawn.data]
        assert timeline.highlight(drawn, session, bars, "no such kernel", window=window) is drawn
        searched = timeline_figure(session, bars, window=window, search="gemm")
        assert [t.name for t in searched.data] == [t.name for t in marked.data]


@pytest.mark.parametrize("many", [False, True])
def test_the_presentation_layout_is_the_layout_of_the_timeline_drawn_for_presentation(
        monkeypatch: pytest.MonkeyPatch, many: bool) -> None:
    """The plot switches to it in the browser without drawing the bars again (ui/plotly_view.py): it must be
    what drawing the timeline at presentation settings gives, for SVG bars and at a level of detail."""
    if many:
        monkeypatch.setattr(timeline, "SVG_BARS", 2)
    session = session_from_trace(replay_trace(), "replay")
    bars = timeline_bars(session, all_iterations=True)
    desk = timeline_figure(session, bars)
    presented = timeline_figure(session, bars, ChartSettings.presentation())
    assert desk.layout.height < presented.layout.height
    assert timeline_layout(desk, session, bars, ChartSettings.presentation()) == presented.layout.to_plotly_json()
