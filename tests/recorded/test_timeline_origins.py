"""The timeline of sessions recorded on the H200 (issues 20 and 22): a kernel's hover says where it came from, from
Inductor's records and eager's op lines, and each timed mode's measured latency is drawn beside its profiled
iteration, with the one stretch figure the caption and `inspect` give."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from fusionviz.analysis.captions import stretch_words
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts import timeline
from fusionviz.charts.latency import latency_figure
from fusionviz.charts.style import CLASS_COLOURS
from fusionviz.charts.timeline import BAR, LATENCY, MEASURED, timeline_figure
from fusionviz.charts.timeline_layout import timeline_bars
from fusionviz.charts.view_captions import timeline_caption
from fusionviz.records.files import open_file

ROOT = Path(__file__).parents[2]
MLP = ROOT / "sessions" / "h100_mlp_512x256_float32.json.gz"  # schema 3, with provenance
PROVENANCE = ROOT / "tests" / "data" / "h200_prov_mlp_512x256_float32.json.gz"
OLD = ROOT / "tests" / "data" / "schema1_3_h200_linear_ln_gelu_float32.json.gz"  # before provenance
TRACE = ROOT / "tests" / "data" / "h200_linear_ln_gelu_fp32_default.trace.json.gz"  # a plain trace: no timing


def report_of(path: Path) -> Report:
    return analyse(open_file(path.read_bytes(), path.name))


def hovers(fig: Any) -> list[dict[str, Any]]:
    """Every kernel bar's customdata by field name."""
    return [dict(zip(BAR.names, row, strict=True)) for t in fig.data if t.meta == BAR.meta and t.name in CLASS_COLOURS
            for row in t.customdata]


def drawn(report: Report, **asked: Any) -> Any:
    session = report.session
    return timeline_figure(session, timeline_bars(session, **asked), latencies=report.latencies)


@pytest.mark.parametrize("path", [MLP, PROVENANCE], ids=lambda p: p.name)
def test_the_fused_relu_kernels_hover_their_nodes_and_line_each_its_own(path: Path) -> None:
    fig = drawn(report_of(path))
    fused = [h for h in hovers(fig) if h["mode"] == "default" and h["name"] == "triton_poi_fused_addmm_relu_0"]
    assert len(fused) == 2
    for h in fused:
        assert re.fullmatch(r"<br>origin: linear \(net\.\d\), relu \(net\.\d\) · zoo\.py:\d+", h["about"]), h
    assert fused[0]["about"] != fused[1]["about"]  # two launches of one name: the relus of net.1 and of net.3
    eager = [h["about"] for h in hovers(fig) if h["mode"] == "eager"]
    assert eager[0].startswith("<br>origin: aten::addmm in net.0 · zoo.py:")
    (pointwise,) = [t for t in fig.data if t.name == "triton_pointwise"]
    assert f"%{{customdata[{BAR.names.index('about')}]}}" in pointwise.hovertemplate


def test_without_provenance_the_hover_names_the_ops_from_the_names() -> None:
    abouts = {h["about"] for h in hovers(drawn(report_of(OLD)))}
    assert abouts and not any("origin" in a for a in abouts)
    assert "<br>ops (from names): native_layer_norm" in abouts


def test_the_measured_latency_is_drawn_per_timed_mode_at_the_reports_latency() -> None:
    report = report_of(MLP)
    (strip,) = [t for t in drawn(report).data if t.name == MEASURED and t.meta == LATENCY.meta]
    marks = [dict(zip(LATENCY.names, row, strict=True)) for row in strip.customdata]
    bars = latency_figure(report).data[0]  # the latency chart's bars, in ms
    assert [m["mode"] for m in marks] == [r.mode for r in report.drawable]
    for mark, x, base, median_ms in zip(marks, strip.x, strip.base, bars.x, strict=True):
        estimate = report.latencies[mark["mode"]]
        assert x == mark["median_us"] == pytest.approx(estimate.median * 1e3) == pytest.approx(median_ms * 1e3)
        assert (mark["low_us"], mark["high_us"]) == pytest.approx((estimate.low * 1e3, estimate.high * 1e3))
        assert base == 0.0  # from the start of the iteration drawn
    every = drawn(report, all_iterations=True)
    (strips,) = [t for t in every.data if t.name == MEASURED and t.meta == LATENCY.meta]
    iterations = report.session.runs[0].summary.iterations  # type: ignore[union-attr]
    assert len(strips.x) == iterations * len(report.drawable)
    assert len(set(strips.base)) > len(report.drawable)  # each iteration's own start, iterations laid end to end


def test_the_stretch_is_one_figure_in_inspect_its_json_and_the_caption(capsys: pytest.CaptureFixture[str]) -> None:
    from fusionviz.cli import main

    report = report_of(MLP)
    stretch = report.stretch["default"]
    spans = [s.span_us for s in report.runs["default"].idle]
    assert stretch == pytest.approx(statistics.median(spans) / (report.latencies["default"].median * 1e3))
    assert stretch > 1.5  # the profiler stretched default's iterations (2.1x here)
    assert main(["inspect", str(MLP), "--json"]) == 0
    runs = {r["label"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert {m: r["profiled_stretch"] for m, r in runs.items()} == report.stretch
    assert main(["inspect", str(MLP)]) == 0
    text = capsys.readouterr().out
    ms = report.latencies["default"].median
    assert f"ran {stretch:.1f}x as long as a timed call" in text
    assert stretch_words(report.stretch, report.latencies, ["default"]) == (
        f"default's profiled iteration ran {stretch:.1f}x as long as its timed call ({ms:.3g} ms), medians: the "
        "profiler's own overhead")
    # a slide's caption stays one line (tests/e2e/test_slides_fit.py): the strips say the timed call there, and
    # the lab's caption (ui/timeline_view.py, test_kernel_origin's AppTest) the stretch
    assert "profiled iteration" not in timeline_caption(report, "default")


def test_a_plain_trace_draws_no_latency_and_says_nothing_of_it() -> None:
    report = report_of(TRACE)
    assert report.stretch == {}
    assert stretch_words(report.stretch, report.latencies, [r.mode for r in report.drawable]) == ""
    assert not [t for t in drawn(report).data if t.name == MEASURED]
    assert "profiled iteration" not in timeline_caption(report)


def test_a_large_timeline_draws_the_latency_too(monkeypatch: pytest.MonkeyPatch) -> None:
    report = report_of(MLP)
    monkeypatch.setattr(timeline, "SVG_BARS", 2)  # drawn as the image past 4,000 bars is
    fig = drawn(report)
    assert any(t.type == "heatmap" for t in fig.data)
    (strip,) = [t for t in fig.data if t.name == MEASURED and t.meta == LATENCY.meta]
    assert len(strip.x) == len(report.drawable)
