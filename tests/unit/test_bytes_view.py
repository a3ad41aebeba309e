"""The bytes view on recorded H200 sessions: its figures are inspect's, its caption's percentages follow from
them, the claim of "70% less memory traffic" is held where it holds and refused where it does not, a trace with
no bytes says why, and the roofline without FLOPs says so instead of drawing an empty panel."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.analysis.bytes_moved import CLAIM_PCT, size_words
from fusionviz.analysis.headline import read_size
from fusionviz.analysis.kernel_costs import no_flops_note, roofline_caption
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.view_captions import bytes_caption, bytes_headline
from fusionviz.charts.views import scene_caption, view_figure
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.files import open_path
from fusionviz.records.talk import load_talk
from fusionviz.records.trace_pair import trace_pair

ROOT = Path(__file__).resolve().parents[2]
POINTWISE = ROOT / "sessions" / "h200_acct_pointwise_chain_4096x4096_float32.json.gz"
MLP = ROOT / "sessions" / "h200_acct_mlp_512x256_float32.json.gz"
TALK_MLP = ROOT / "sessions" / "h100_mlp_512x256_float32.json.gz"  # the talk's: the one recorded with the naive loop
TRACES = ROOT / "tests" / "data"
CHAIN = 4096 * 4096 * 4  # one float32 tensor of the chain, bytes


@pytest.fixture(scope="module")
def pointwise() -> Report:
    return analyse(open_path(POINTWISE))


@pytest.fixture(scope="module")
def mlp() -> Report:
    return analyse(open_path(MLP))


def test_the_views_figures_are_inspects(pointwise: Report) -> None:
    inspected = {r["label"]: r for r in inspect_report(pointwise, POINTWISE.name)["runs"]}
    found = pointwise.bytes_moved
    assert [r.mode for r in found.runs] == [r.mode for r in pointwise.drawable]
    figure = view_figure(pointwise, "bytes")
    bars = {t.name: t for t in figure.data}
    measured = bars["DRAM measured (Nsight Compute)"]
    estimated = [t for t in figure.data if t.name.startswith("estimated")]
    for i, r in enumerate(found.runs):
        shown = inspected[r.mode]
        assert (r.estimated, r.measured) == (shown["bytes_per_iteration"], shown["measured_bytes_per_iteration"])
        assert sum(t.x[i] for t in estimated) == pytest.approx(shown["bytes_per_iteration"])
        assert measured.x[i] == (shown["measured_bytes_per_iteration"] or 0)
        assert measured.text[i] == (size_words(r.measured) if r.measured is not None else "DRAM not counted")
        assert r.launches == pointwise.session.run(r.mode).summary.launches_per_iteration  # type: ignore[union-attr]
    # counters were folded in for eager and default only; the others say why not
    assert [r.mode for r in found.runs if r.measured is not None] == ["eager", "default"]
    assert all(r.measured_note for r in found.runs if r.measured is None)


def test_the_caption_gives_the_measured_figure_of_the_claim(pointwise: Report) -> None:
    inspected = {r["label"]: r for r in inspect_report(pointwise, POINTWISE.name)["runs"]}
    eager, default = inspected["eager"], inspected["default"]
    counted = 1 - default["measured_bytes_per_iteration"] / eager["measured_bytes_per_iteration"]
    assert counted * 100 >= CLAIM_PCT
    headline = bytes_headline(pointwise, "default")
    # read aloud: the counted bytes, two figures each; the exact ones, estimated and counted, in the details
    assert headline.text == (f"default: {read_size(eager['measured_bytes_per_iteration'])} → "
                             f"{read_size(default['measured_bytes_per_iteration'])} moved per iteration")
    assert headline.mechanism.startswith(f'"{CLAIM_PCT}% less memory traffic" holds; ')
    assert bytes_caption(pointwise, "default") == headline.line
    (caption,) = headline.details
    assert caption.startswith(
        f"default moves {counted:.0%} fewer bytes than eager ("
        f"{size_words(eager['bytes_per_iteration'])} → {size_words(default['bytes_per_iteration'])} estimated; "
        f"DRAM {size_words(eager['measured_bytes_per_iteration'])} → "
        f"{size_words(default['measured_bytes_per_iteration'])} measured): "
        f'"{CLAIM_PCT}% less memory traffic" holds here')
    # the chain's 18 results, each a whole tensor, become one: 17 stay on chip
    run = pointwise.bytes_moved.run("default")
    assert run is not None and (run.kept_intermediates, run.kept_bytes) == (17, 17 * CHAIN)
    assert caption.endswith(f"; 17 intermediates ({size_words(17 * CHAIN)}) stay on chip.")


def test_the_graph_trees_input_copy_is_counted(pointwise: Report) -> None:
    """reduce-overhead copies the chain's 64 MB input into its graph's static buffer each call (one
    `_foreach_copy_`, whose tensor list the profiler records without dtypes): read once and written once, beside
    the fused kernel's own bytes, so every byte of the mode is known and judged."""
    run, default = pointwise.bytes_moved.run("reduce-overhead"), pointwise.bytes_moved.run("default")
    assert run is not None and default is not None and run.known_pct == pytest.approx(100)
    assert run.by_source["shapes"] == 2 * CHAIN and run.estimated == run.by_source["inductor"] + 2 * CHAIN
    headline = bytes_headline(pointwise, "reduce-overhead")
    assert headline.text == (f"reduce-overhead: {read_size(run_bytes(pointwise, 'eager'))} → "
                             f"{read_size(run.estimated)} moved per iteration")


def run_bytes(report: Report, mode: str) -> int:
    found = report.bytes_moved.run(mode)
    assert found is not None and found.estimated is not None
    return found.estimated


def test_the_mlp_scene_says_the_claim_does_not_hold(mlp: Report) -> None:
    talk = load_talk(ROOT / "talks" / "fusion_story.toml", views=VIEWS)
    scenes = {s.session: s for s in talk.scenes if s.view == "bytes"}
    assert scenes.keys() == {POINTWISE.name, TALK_MLP.name}
    scene = scenes[TALK_MLP.name]
    talks = analyse(open_path(TALK_MLP))
    assert scene_caption(talks, scene.caption, scene.view, scene.mode) == bytes_caption(talks, scene.mode)
    assert "does not hold" in bytes_headline(talks, scene.mode).mechanism
    (caption,) = bytes_headline(mlp, scene.mode).details
    eager, default = mlp.bytes_moved.run("eager"), mlp.bytes_moved.run("default")
    assert eager is not None and default is not None and eager.estimated == default.estimated
    assert f"about as many bytes as eager by the estimate ({size_words(eager.estimated)} → " in caption
    assert f'"{CLAIM_PCT}% less memory traffic" does not hold here (GEMMs take' in caption
    assert caption.endswith("; nothing stays on chip.")


def test_a_plain_trace_without_shapes_says_why() -> None:
    eager = open_path(TRACES / "h200_linear_ln_gelu_fp32_eager.trace.json.gz")
    compiled = open_path(TRACES / "h200_linear_ln_gelu_fp32_default.trace.json.gz")
    report = analyse(trace_pair(eager, compiled))
    why = report.bytes_moved.why
    assert "record_shapes=True" in why and "kernel_num_gb" in why
    assert bytes_headline(report, "default").details == (why,)
    figure = view_figure(report, "bytes", mode="default")
    assert not figure.data  # no empty axes: the reason where the chart would be
    assert figure.layout.annotations[0].text.replace("<br>", " ") == why


def test_the_roofline_without_flops_draws_the_bandwidth_panel_and_says_why(pointwise: Report, mlp: Report) -> None:
    note = no_flops_note(pointwise.session.run("eager"), pointwise.focus("default"), pointwise.costs)
    assert note.startswith("No kernel of eager or default has counted FLOPs")
    figure = view_figure(pointwise, "roofline", mode="default")
    # the bandwidth chart alone, under its own name, and a note saying why there is no roofline
    assert "xaxis2" not in figure.layout.to_plotly_json()
    assert figure.layout.title.text.startswith("Bandwidth") and "no roofline" in figure.layout.title.text
    assert figure.layout.xaxis.title.text.startswith("working set") and figure.layout.yaxis.title.text == (
        "achieved GB/s")
    assert any(a.text.replace("<br>", " ").startswith("No kernel of eager or default has counted FLOPs.")
               for a in figure.layout.annotations)
    # the caption's details (under the view's headline) say it too
    eager, focus = pointwise.session.run("eager"), pointwise.focus("default")
    assert note in roofline_caption(pointwise.session.ceilings, eager, focus, pointwise.costs)
    # the mlp's GEMMs have FLOPs: both panels, no note
    assert no_flops_note(mlp.session.run("eager"), mlp.focus("default"), mlp.costs) == ""
    assert "xaxis2" in view_figure(mlp, "roofline", mode="default").layout.to_plotly_json()
