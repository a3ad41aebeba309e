"""Every shipped session's waterfall, roofline and collapse views, read from the figure as drawn (Plotly JSON): the
waterfall's rungs in the ladder's order with the side branch labelled and nothing below zero; the roofline a
roofline only where FLOPs are counted, and no dot above its roof without a ring and a note; the collapse's labels
whole (wrapped to their slot, never cut) and every outline in the legend."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import pytest

from fusionviz.analysis.kernel_costs import memory_roof
from fusionviz.analysis.ladder import MAIN_LADDER, SIDE_LADDER
from fusionviz.analysis.report import Report, analyse
from fusionviz.charts.collapse import OUTLINE_WORDS, collapse_figure, collapse_layout
from fusionviz.charts.export import HEADLINE_PX, SLIDE_HEIGHT, SLIDE_WIDTH, TICK_PX, slide
from fusionviz.charts.registry import VIEWS
from fusionviz.charts.roofline import ABOVE_COLOUR, BANDWIDTH, ROOFLINE, above_note, roofline_dots, unjudged
from fusionviz.charts.stats import class_stats_figure
from fusionviz.charts.style import CHAR_EM, ChartSettings
from fusionviz.charts.views import view_figure, view_problem
from fusionviz.charts.waterfall import MAIN_BRANCH, SIDE_BRANCH
from fusionviz.records.files import open_path

SESSIONS = sorted((Path(__file__).resolve().parents[2] / "sessions").glob("*.json.gz"))


@pytest.fixture(scope="module", params=SESSIONS, ids=lambda p: p.name)
def report(request: pytest.FixtureRequest) -> Report:
    return analyse(open_path(request.param))


def test_the_waterfall_climbs_the_ladder_in_order_and_never_below_zero(report: Report) -> None:
    if view_problem(report, "waterfall"):
        pytest.skip("no timing: no waterfall")
    fig = view_figure(report, "waterfall", ChartSettings.presentation())
    bars = fig.data[0]
    branches, labels = bars.y
    modes = [label.split(":")[0] for label in labels]
    timed = report.latencies
    main = [m for m in MAIN_LADDER if m in timed]
    side = [m for m in SIDE_LADDER[1:] if m in timed]
    assert modes == main + side  # eager, the main ladder in its order, then the side branch in its order
    assert list(branches) == [MAIN_BRANCH] * len(main) + [SIDE_BRANCH] * len(side)
    assert fig.layout.yaxis.type in (None, "multicategory") and len(bars.y) == 2  # the branch is on the axis
    # each bar from the rung before's latency (eager's, for the side branch's first) to its own
    for i, mode in enumerate(modes):
        source = None if i == 0 else "eager" if side and mode == side[0] else modes[i - 1]
        start = 0.0 if source is None else timed[source].median * 1e3
        assert bars.base[i] == pytest.approx(start)
        assert bars.base[i] + bars.x[i] == pytest.approx(timed[mode].median * 1e3)
    # nothing drawn below zero: bar ends, and whiskers (each rung's own latency interval)
    drawn = [v for i in range(len(modes)) for v in (bars.base[i], bars.base[i] + bars.x[i],
                                                    bars.base[i] + bars.x[i] - bars.error_x.arrayminus[i],
                                                    bars.base[i] + bars.x[i] + bars.error_x.array[i])]
    assert min(drawn) >= 0.0
    assert fig.layout.xaxis.range[0] >= 0.0


def test_a_roofline_only_where_flops_are_counted_and_no_dot_above_its_roof_unsaid(report: Report) -> None:
    if view_problem(report, "roofline"):
        pytest.skip("no eager run with kernels")
    fig = view_figure(report, "roofline", ChartSettings.presentation())
    dots = roofline_dots(report, None)
    title = fig.layout.title.text
    if any(d.panel == ROOFLINE for d in dots):
        assert title.startswith("Roofline")
        # log-log: arithmetic intensity on x, achieved FLOP/s on y
        assert (fig.layout.xaxis.type, fig.layout.yaxis.type) == ("log", "log")
        assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("FLOP per byte moved",
                                                                              "achieved FLOP/s")
    else:
        assert title.startswith("Bandwidth") and "no roofline" in title
        assert fig.layout.xaxis.title.text.startswith("working set")
        why = "has counted FLOPs" if not unjudged(report, None) else "whose ceiling was not measured: not drawn"
        assert any(why in (a.text or "").replace("<br>", " ") for a in fig.layout.annotations)
    # each dot against its roof, worked out here from the ceilings: at or under it, else ringed and said
    ceilings = report.session.ceilings
    assert ceilings is not None
    peak = ceilings.matmul_tflops[report.session.config.dtype]
    ringed = {(x, y) for t in fig.data if t.mode == "markers" and t.x and t.x[0] is not None
              for x, y, colour in zip(t.x, t.y, t.marker.line.color, strict=True) if colour == ABOVE_COLOUR}
    notes = " ".join(a.text.replace("<br>", " ") for a in fig.layout.annotations)
    for d in dots:
        level = memory_roof(ceilings, d.bytes).gbps
        point: tuple[float, float]
        if d.panel == BANDWIDTH:
            over, point = d.gbps > level, (d.bytes, d.gbps)
        else:
            assert d.intensity is not None and d.tflops is not None
            over, point = d.tflops > min(peak, d.intensity * level / 1e3), (d.intensity, d.tflops * 1e12)
        assert over == d.above
        if over:
            assert any(p == pytest.approx(point) for p in ringed), d
    if any(d.above for d in dots):
        assert above_note(dots).replace("<br>", " ")[:60] in notes


def test_collapse_labels_are_never_cut_nor_overlap_and_every_outline_is_in_the_legend(report: Report) -> None:
    settings = ChartSettings.presentation()
    # the densest collapse of the session (most kernels in a row): a figure takes about 0.1 s to build
    shown = sorted(report.collapses.items(), key=lambda item: -max(len(item[1].eager), len(item[1].compiled)))
    for mode, collapse in shown[:1]:
        fig = collapse_figure(collapse, settings)
        nodes, _ = collapse_layout(collapse)
        px_per_slot = settings.plot_px / (fig.layout.xaxis.range[1] - fig.layout.xaxis.range[0])
        rows = [t for t in fig.data if t.mode == "markers+text"]
        assert sum(len(t.text) for t in rows) == len(nodes), mode
        for row in rows:
            placed = []
            for x, label, (_, _, dur, _, _) in zip(row.x, row.text, row.customdata, strict=True):
                lines = [line for line in label.split("<br>") if line.strip()]
                assert "…" not in label and "..." not in label, (mode, label)
                assert all(len(line) <= settings.label_chars for line in lines), (mode, label)
                band = label.startswith(" <br>") or label.endswith("<br> ")  # moved a band out
                width = max((len(line) for line in lines), default=0) * CHAR_EM * settings.font_size
                placed.append((x, width, band, dur))
            # a row too dense to name every node names its longest kernels: one left unnamed has a named one
            # at least as long where its label (at most label_chars wide, a character apart) would have run into
            # it, or sits so near the plot's edge that its label might not fit
            char_px = CHAR_EM * settings.font_size
            named = [(x, width + char_px, dur) for x, width, _, dur in placed if width]
            widest = (settings.label_chars + 1) * char_px
            for x, _, _, dur in (p for p in placed if not p[1]):
                centre = (x - fig.layout.xaxis.range[0]) * px_per_slot
                assert min(centre, settings.plot_px - centre) < widest / 2 or any(
                    abs(x2 - x) * px_per_slot < (width2 + widest) / 2 and dur2 >= dur
                    for x2, width2, dur2 in named), (mode, x)
            # labels on one band never run into each other (at the width the slide lays the plot out at)
            for i, (x, width, band, _) in enumerate(placed):
                for x2, width2, band2, _ in placed[i + 1:]:
                    if band == band2 and width and width2:
                        assert abs(x2 - x) * px_per_slot >= (width + width2) / 2, (mode, x, x2)
        legend = {t.name for t in fig.data if t.showlegend is not False}
        assert {OUTLINE_WORDS[r] for r in nodes.role if r in OUTLINE_WORDS} <= legend, mode


FIGURE_SESSIONS = ["h100_mlp_512x256_float32", "h100_pointwise_chain_4096x4096_float32",
                   "h200_sweep_transformer_block_seq", "h200_grid_mlp_default"]


def overflowing_titles(fig: go.Figure, settings: ChartSettings) -> list[str]:
    """The axis titles whose longest line is longer than their axis (a y axis's share of the plot's height, an
    x axis's share of the width the settings lay a plot out at), at CHAR_EM of the font a character."""
    margin = fig.layout.margin
    plot_h = fig.layout.height - (margin.t or 0) - (margin.b or 0)
    found = []
    for axes, length in ((fig.select_yaxes(), plot_h), (fig.select_xaxes(), settings.plot_px)):
        for axis in axes:
            low, high = axis.domain or (0.0, 1.0)
            lines = (axis.title.text or "").split("<br>")
            if max(len(line) for line in lines) * CHAR_EM * settings.font_size > length * (high - low):
                found.append(axis.title.text)
    return found


@pytest.mark.parametrize("name", FIGURE_SESSIONS)
@pytest.mark.parametrize("settings", [ChartSettings(), ChartSettings.presentation()], ids=["screen", "slide"])
def test_every_axis_title_fits_its_axis(name: str, settings: ChartSettings) -> None:
    report = analyse(open_path(SESSIONS[0].parent / f"{name}.json.gz"))
    figures = {view: view_figure(report, view, settings) for view in VIEWS
               if not VIEWS[view].animated and view_problem(report, view) is None}
    if report.session.runs and len(report.drawable) > 1:
        figures["trace explorer's classes"] = class_stats_figure(list(report.runs.values())[:2], settings)
    assert figures
    for view, fig in figures.items():
        assert not overflowing_titles(fig, settings), view


def slide_text_problems(fig: go.Figure) -> list[str]:
    """What in a slide's layout is smaller than a room can read: a title (the headline) under HEADLINE_PX or a line
    of it wider than the slide, an axis's ticks under TICK_PX (a log axis left to Plotly's ticks labels its 2s and
    5s smaller), or text on the chart under TICK_PX. The stamp under the title is left out: small on purpose."""
    found = []
    title = fig.layout.title
    if (title.font.size or 0) < HEADLINE_PX:
        found.append(f"title at {title.font.size} px")
    for line in (title.text or "").split("<br>"):
        if len(line) * CHAR_EM * (title.font.size or 0) > SLIDE_WIDTH:
            found.append(f"title line wider than the slide: {line}")
    base = fig.layout.font.size or 0
    for axis in (*fig.select_xaxes(), *fig.select_yaxes()):
        if axis.visible is not False and (axis.tickfont.size or base) < TICK_PX:
            found.append(f"ticks at {axis.tickfont.size or base} px")
        if axis.type == "log" and axis.tickvals is None and not isinstance(axis.dtick, int | float):
            found.append("a log axis with Plotly's own ticks")
    for note in fig.layout.annotations:
        if (note.font.size or base) < TICK_PX:
            found.append(f"note at {note.font.size} px: {note.text}")
    for trace in fig.data:
        size = getattr(trace, "textfont", None) and trace.textfont.size
        if isinstance(size, int | float) and size < TICK_PX and trace.text is not None:
            found.append(f"{trace.name} text at {size} px")
    return found


@pytest.mark.parametrize("name", FIGURE_SESSIONS)
def test_every_exported_slide_reads_from_the_back_of_the_room(name: str) -> None:
    # the export path: `python -m fusionviz export --view …` draws view_figure at the presentation settings and
    # lays it out with `slide` (fusionviz/cli/export.py)
    report = analyse(open_path(SESSIONS[0].parent / f"{name}.json.gz"))
    settings = ChartSettings.presentation()
    views = [view for view in VIEWS if view_problem(report, view) is None]
    assert views
    for view in views:
        fig = slide(view_figure(report, view, settings), report.source.stamp, settings)
        assert (fig.layout.width, fig.layout.height) == (SLIDE_WIDTH, SLIDE_HEIGHT)
        assert not slide_text_problems(fig), view


@pytest.mark.parametrize("name", ["h100_hf_gpt2_768x4x128_bfloat16", "h100_hf_llama_576x8x256_bfloat16"])
def test_the_animation_of_a_dense_collapse_plays_every_frame(name: str) -> None:
    """A row so dense that its squares shrink below the font's size: the animation's frames set its sizes to a
    list, which raised against the NumPy scalar the row was drawn with."""
    report = analyse(open_path(SESSIONS[0].parent / f"{name}.json.gz"))
    fig = view_figure(report, "animation")
    last = fig.frames[-1].data[0]  # the eager row at the end: every absorbed kernel merged away
    assert len(fig.frames) == 31 and min(last.marker.size) == 0 and max(last.marker.size) > 0
