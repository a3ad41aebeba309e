"""Figure inputs and figures on hand-made sessions: bars, markers and node layouts, checked by arithmetic."""

from __future__ import annotations

from typing import Any

import msgspec
import plotly.graph_objects as go
import pytest

from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.collapse import OUTLINE_WORDS, collapse_figure, collapse_layout, node_label
from fusionviz.charts.latency import (
    BUSY_CAP,
    latency_figure,
    latency_rows,
    metric_rows,
    metrics_figure,
    missing_break_even,
)
from fusionviz.charts.style import CHAR_EM, CLASS_COLOURS, ChartSettings
from fusionviz.charts.timeline import clicked_kernel, timeline_figure
from fusionviz.charts.timeline_layout import BLOCK, break_markers, timeline_bars
from fusionviz.charts.views import view_figure
from fusionviz.records.session import GraphBreak
from tests.clicks import clicked
from tests.unit.factories import collapse_of, cpu, k, run, session

LN = ("native_layer_norm",)
EAGER = run("eager", [k("gemm", 0, 10, ops=("addmm",), op_id=1), k("aten::layer_norm", 12, 5, ops=LN, op_id=2),
                      k("aten::gelu", 20, 5, ops=("gelu",), op_id=3),
                      k("gemm", 100, 10, ops=("addmm",), op_id=4, iteration=1),
                      k("aten::layer_norm", 112, 5, ops=LN, op_id=5, iteration=1),
                      k("aten::gelu", 120, 30, ops=("gelu",), op_id=6, iteration=1)],
            cpu_ops=[cpu("aten::linear", "op", 0, 8), cpu("cudaLaunchKernel", "launch", 1, 2)])
COMPILED = run("default", [k("gemm", 0, 10, ops=("mm",), op_id=7, kernel_class="gemm"),
                           k("triton_per_fused_gelu_native_layer_norm_0", 12, 6, ops=("gelu", "native_layer_norm")),
                           k("triton_poi_fused_new_0", 20, 2, ops=("sin",))],
               compile_s=1.0,
               cpu_ops=[cpu("Torch-Compiled Region: 0/0", "region", 0, 30),  # frame 1 resumes inside frame 0
                        cpu("## Call CompiledFxGraph ab ##", "region", 1, 8),
                        cpu("Torch-Compiled Region: 1/0", "region", 15, 10)],
               graphs=2)


def test_timeline_bars_one_iteration_per_mode_in_blocks() -> None:
    bars = timeline_bars(session(EAGER, COMPILED))
    kernels = bars[bars.lane == "kernel"]
    # The representative iteration is the one of median span: two iterations of 100 µs and 150 µs → index 1.
    assert list(kernels[kernels["mode"] == "eager"].start_us) == [100, 112, 120]
    assert set(kernels[kernels["mode"] == "default"].y) == {BLOCK}
    assert list(bars[bars.lane == "region"].name) == ["Torch-Compiled Region: 0/0", "Torch-Compiled Region: 1/0"]
    assert list(bars[bars.lane == "graph_call"].dur_us) == [8]


def test_all_iterations_lay_iterations_end_to_end() -> None:
    bars = timeline_bars(session(EAGER), all_iterations=True)
    kernels = bars[bars.lane == "kernel"]
    # iteration 0 ends at its last event (25 µs); iteration 1 starts there, its kernels keep their offsets.
    assert list(kernels.start_us) == [0, 12, 20, 25 + 100, 25 + 112, 25 + 120]


def test_graph_breaks_mark_a_change_of_compiled_frame_within_a_call() -> None:
    broken = msgspec.structs.replace(COMPILED,
                                     graph_breaks=[GraphBreak("Tensor.item", "model.py:3 in forward: x.item()")])
    s = session(EAGER, broken)
    markers = break_markers(s, timeline_bars(s))
    # at the end of the graph call before frame 1 resumed: eager code ran from there
    assert list(markers.x_us) == [1 + 8] and list(markers.reason) == ["Tensor.item"]


def test_timeline_figure_colours_by_class_and_clicks_map_back() -> None:
    s = session(EAGER, COMPILED)
    fig = timeline_figure(s, timeline_bars(s))
    traces = {t.name: t for t in fig.data}
    assert traces["gemm"].marker.color == CLASS_COLOURS["gemm"]
    assert list(traces["gemm"].x) == [10, 10]  # durations on x, starts as base
    assert list(traces["gemm"].base) == [100, 0]
    picked = clicked_kernel(clicked(traces["triton_reduction"], 0))
    assert picked == ("default", 1)
    assert fig.layout.yaxis.ticktext == ("<b>eager</b>", "CPU", "<b>default</b>", "CPU")


def test_collapse_layout_roles_and_positions() -> None:
    nodes, links = collapse_layout(collapse_of(EAGER, COMPILED))
    eager, compiled = nodes[nodes.side == "eager"], nodes[nodes.side == "compiled"]
    assert list(eager.role) == ["kept", "fused", "fused"]
    assert list(compiled.role) == ["kept", "fusion", "new"]
    # A compiled kernel sits over the mean slot of what it absorbed, at least one slot after the previous one.
    assert list(compiled.x) == [0.0, 1.5, 2.5]
    assert list(compiled.label) == ["mm", "gelu+native_layer_norm", "sin"]
    assert len(links) == 3
    fig = collapse_figure(collapse_of(EAGER, COMPILED))
    boxes = next(t for t in fig.data if t.name == "default")
    assert list(boxes.marker.line.width) == [1, 3, 2]  # a fusion stands out, a new kernel is outlined in red


MS = {"eager": [[0.09, 0.10, 0.11]], "default": [[0.18, 0.20, 0.22]]}


def timed(ms: dict[str, list[list[float]]]) -> Report:
    return analyse(session(EAGER, COMPILED, ms=ms))


def test_latency_rows_and_metrics() -> None:
    rows = latency_rows(timed(MS))
    # p10 and p90 of three rounds, interpolated: 0.092 and 0.108 for eager
    assert list(rows.err_plus) == pytest.approx([0.008, 0.016])
    assert list(rows.err_minus) == pytest.approx([0.008, 0.016])
    assert list(rows.label) == ["baseline", "0.50× (0.50–0.50×) vs eager"]
    noisy = latency_rows(timed({"eager": MS["eager"], "default": [[0.05, 0.10, 0.2]]}))
    # paired ratios 0.09/0.05, 0.10/0.10, 0.11/0.20 = 1.8, 1.0, 0.55: p10 = 0.55 + 0.2·0.45, p90 = 1.0 + 0.8·0.8
    assert noisy.label[1] == "no clear difference (0.64–1.64×)"
    metrics = metric_rows(timed(MS)).set_index(["mode", "metric"])
    assert ("default", "break_even_calls") not in metrics.index  # slower: nothing to pay back, no empty bar
    assert metrics.loc[("default", "kernels_per_iteration"), "value"] == 3
    assert metrics.loc[("eager", "busy_pct"), "text"].endswith("%")
    assert ("eager", "compile_s") not in metrics.index
    faster = metric_rows(timed({"eager": MS["eager"], "default": [[0.03, 0.03, 0.03]]}))
    assert faster[faster.metric == "break_even_calls"]["mode"].tolist() == ["default"]
    fig = latency_figure(timed(MS))
    assert list(fig.data[0].marker.color) == ["#7F7F7F", "#E45756"]  # slower than eager: red
    assert list(latency_figure(timed({"eager": MS["eager"], "default": [[0.05, 0.10, 0.2]]})
                               ).data[0].marker.color) == ["#7F7F7F", "#A8B3BF"]  # no clear difference: grey


def panel_traces(fig: go.Figure, title: str) -> list[Any]:
    """The traces drawn in the subplot titled `title` (its axes are x, x2, x3… in the order of the titles)."""
    titles = [a.text for a in fig.layout.annotations]
    n = titles.index(title) + 1
    axis = "x" if n == 1 else f"x{n}"
    return [t for t in fig.data if (t.xaxis or "x") == axis]


def test_the_verdict_chart_plots_the_speedup_its_title_states() -> None:
    report = timed(MS)  # default: eager's 0.09/0.10/0.11 ms against 0.18/0.20/0.22 ms, 0.5x in every round
    fig = metrics_figure(report, title="default: 2x slower")
    bar = next(t for t in panel_traces(fig, "speedup vs eager (p10–p90)") if t.type == "bar")
    default = report.comparisons["default"].speedup
    assert list(bar.y) == ["eager", "default"] and list(bar.x) == pytest.approx([1.0, default.median])
    assert bar.error_x.array[1] == pytest.approx(default.high - default.median)
    assert bar.error_x.arrayminus[1] == pytest.approx(default.median - default.low)
    assert any(shape.x0 == shape.x1 == 1.0 for shape in fig.layout.shapes)  # eager's 1x, marked


def test_busy_stops_at_100_percent_and_a_missing_break_even_says_why() -> None:
    # eager's kernels take 25 µs of an iteration timed at 10 µs a call: busy all of the call (the analysis caps
    # the share at 1); the axis ends at 100%, where the bar does, not at 145% of the longest bar
    report = timed({"eager": [[0.010] * 3], "default": [[0.02] * 3]})
    fig = metrics_figure(report)
    busy = next(t for t in panel_traces(fig, "busy % of the call") if t.type == "bar")
    axis = fig.layout[f"xaxis{[a.text for a in fig.layout.annotations].index('busy % of the call') + 1}"]
    assert list(axis.range) == [0, BUSY_CAP] and max(busy.x) == BUSY_CAP
    assert report.busy["eager"] == 1.0 and busy.text[0] == "100%" and busy.textposition[0] == "inside"
    # default is slower than eager: no bar, and the reason where the bar would be
    assert missing_break_even(report) == {"default": "never: slower than eager"}
    note = next(t for t in panel_traces(fig, "break-even calls") if t.type == "scatter")
    assert list(note.y) == ["default"] and list(note.text) == ["never: slower than eager"]
    clear = timed({"eager": MS["eager"], "default": [[0.03, 0.03, 0.03]]})
    assert missing_break_even(clear) == {}  # it pays back: a bar, no note


def test_a_node_label_wraps_and_keeps_its_end() -> None:
    # the cut labels: "addmm+mul+opaqu…" hid the op the scene asks about, "native_layer_no…" the norm
    assert node_label("addmm+mul+opaque+swish+tanh", "triton_pointwise", 16).split("<br>") == [
        "addmm+mul+", "opaque+swish+", "tanh"]
    assert node_label("native_layer_norm", "aten", 16) == "layer_norm"  # written shorter, not cut
    assert node_label("_native_batch_norm_legit_no_training+convolution+relu", "triton", 16).split("<br>") == [
        "batch_norm+", "convolution+relu"]
    assert node_label("_efficient_attention_forward", "aten", 12) == "efficient_<br>attention"
    # more ops than three lines hold: the rest counted, never an ellipsis
    many = node_label("add+addmm+exp+gelu+mean+mul+prepare+softmax+online+sub", "triton", 12).split("<br>")
    assert len(many) == 3 and many[-1].endswith("more") and "…" not in "".join(many)
    shown = "".join(many).rsplit("+", 1)[0].split("+")
    assert len(shown) + int(many[-1].split("+")[-1].split()[0]) == 10
    # a library kernel's tile configuration does not help a room: its class, the name in the hover
    assert node_label("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8", "gemm", 16) == "gemm"


def test_every_outline_the_collapse_draws_has_a_legend_entry() -> None:
    fig = collapse_figure(collapse_of(EAGER, COMPILED))  # a fusion (bold) and a new kernel (red) among them
    legend = {t.name for t in fig.data if t.showlegend is not False}
    nodes, _ = collapse_layout(collapse_of(EAGER, COMPILED))
    drawn = {r for r in nodes.role if r in OUTLINE_WORDS}
    assert drawn == {"fusion", "new"} and {OUTLINE_WORDS[r] for r in drawn} <= legend
    assert OUTLINE_WORDS["unmatched"] not in legend  # no eager kernel is linked to none here: no entry


def test_a_timed_call_label_that_ends_the_drawing_stays_inside_the_plot() -> None:
    # eager timed at 405 µs a call, its profiled kernels done within 150 µs: its strip ends the drawing, and its
    # label after it ran off the chart ("timed call 405 µ")
    report = analyse(session(EAGER, COMPILED, ms={"eager": [[0.40, 0.405, 0.41]], "default": [[0.3] * 3]}))
    settings = ChartSettings()
    fig = view_figure(report, "timeline", settings, mode="default")
    label = next(t for t in fig.data if t.type == "scatter" and t.mode == "text" and "timed call" in t.text[0])
    assert fig.layout.xaxis.range is not None  # left to autorange, the axis ended at the strip's p90
    end = fig.layout.xaxis.range[1]
    for x, text in zip(label.x, label.text, strict=True):
        width_us = len(text) * CHAR_EM * (settings.font_size - 3) / settings.plot_px * end
        assert x + width_us <= end


def test_a_roofline_with_nothing_to_place_says_so() -> None:
    # hand-made kernels without op shapes: no bytes known, so no dot; the figure says why its axes are empty
    report = analyse(session(EAGER, COMPILED, ms={"eager": [[0.4] * 3], "default": [[0.3] * 3]}))
    fig = view_figure(report, "roofline", mode="default")
    assert not [t for t in fig.data if t.mode == "markers" and t.x and t.x[0] is not None]
    assert [a.text.replace("<br>", " ") for a in fig.layout.annotations] == [
        "No kernel of eager or default has known bytes: there is nothing to place against the ceilings."]
