"""Figure builders on real CPU sessions: what each figure shows must agree with the session it draws."""

from __future__ import annotations

import dataclasses
import gzip

import msgspec
import pytest

from fusionviz.analysis import kernel_diff, kernel_tables, sources, sweep
from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.report import analyse
from fusionviz.analysis.summary import drawable_runs
from fusionviz.analysis.sweep import sweep_summary
from fusionviz.analysis.trace_stats import KernelStat, as_frame, kernel_ranking
from fusionviz.charts import collapse, latency, style, timeline, timeline_layout
from fusionviz.charts import sweep as sweep_charts
from fusionviz.errors import SessionFileError
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.files import open_file
from fusionviz.records.session import Session
from fusionviz.records.trace_pair import pair_session
from tests.clicks import clicked
from tests.unit.factories import collapse_of


@pytest.fixture(scope="module")
def break_session(worker: Worker) -> Session:
    """graph_break on the CPU: `.item()` splits the forward into two compiled graphs."""
    config = RunConfig(model="graph_break", dim=32, batch=8, modes=("eager", "default"), rounds=3, processes=1,
                       warmup_calls=3, memory=False)
    return run_session(config, worker=worker)


def kernel_bars_by_mode(fig: object) -> dict[str, int]:
    counts: dict[str, int] = {}
    for trace in fig.data:  # type: ignore[attr-defined]
        if trace.name in style.CLASS_COLOURS:
            for custom in trace.customdata:
                counts[custom[0]] = counts.get(custom[0], 0) + 1
    return counts


def test_timeline_has_one_lane_per_ran_mode_with_its_kernels(ln_gelu_session: Session) -> None:
    bars = timeline_layout.timeline_bars(ln_gelu_session)
    fig = timeline.timeline_figure(ln_gelu_session, bars)
    expected = {r.mode: len(iteration_kernels(r)) for r in ln_gelu_session.runs if r.ok}
    assert kernel_bars_by_mode(fig) == expected
    assert list(expected) == ["eager", "default"]  # reduce-overhead does not apply on the CPU: no lane
    assert fig.layout.yaxis.ticktext[0] == "<b>eager</b>" and fig.layout.yaxis.autorange == "reversed"


def test_all_iterations_draws_every_profiled_kernel_end_to_end(ln_gelu_session: Session) -> None:
    bars = timeline_layout.timeline_bars(ln_gelu_session, all_iterations=True)
    for run in drawable_runs(ln_gelu_session):
        kernels = bars[(bars["mode"] == run.mode) & (bars.lane == "kernel")].sort_values("start_us")
        assert len(kernels) == len(run.kernel_frame())
        assert list(kernels.iteration) == sorted(kernels.iteration)  # iterations follow one another


def test_kernel_bars_colour_by_class_and_map_back_to_kernel_rows(ln_gelu_session: Session) -> None:
    fig = timeline.timeline_figure(ln_gelu_session, timeline_layout.timeline_bars(ln_gelu_session))
    for trace in fig.data:
        if trace.name in style.CLASS_COLOURS:
            assert trace.marker.color == style.CLASS_COLOURS[trace.name]
            for custom in trace.customdata:
                run = ln_gelu_session.run(custom[0])
                row = run.kernel_frame().loc[custom[1]]
                assert (row["name"], row.kernel_class) == (custom[2], trace.name)
    mode, row = timeline.clicked_kernel(clicked(fig.data[[t.name for t in fig.data].index("cpp_fused")], 0))
    name = ln_gelu_session.run(mode).kernel_frame().name[row]
    assert name.startswith("cpp_fused_gelu_native_layer_norm")
    assert "void" in sources.find_source(ln_gelu_session.run(mode).kernel_sources, f"graph_0_{name}")


def test_cpu_lane_and_compiled_region(ln_gelu_session: Session) -> None:
    bars = timeline_layout.timeline_bars(ln_gelu_session)
    for run in drawable_runs(ln_gelu_session):
        cpu = run.cpu_op_frame()
        cpu = cpu[cpu.iteration == run.summary.representative_iteration]
        mine = bars[bars["mode"] == run.mode]
        assert (mine.lane == "cpu").sum() == cpu.category.isin(["op", "launch"]).sum()
        regions = mine[mine.lane == "region"]
        assert len(regions) == (0 if run.mode == "eager" else 1)
        if len(regions):
            kernels = mine[mine.lane == "kernel"]
            region = regions.iloc[0]
            assert (kernels.start_us >= region.start_us).all()
            assert (kernels.start_us + kernels.dur_us <= region.start_us + region.dur_us).all()


def test_graph_break_marked_with_its_reason(break_session: Session) -> None:
    run = break_session.run("default")
    assert run.graph_count == 2 and len(run.graph_breaks) == 1
    bars = timeline_layout.timeline_bars(break_session)
    assert (bars[bars["mode"] == "default"].lane == "region").sum() == 2
    breaks = timeline_layout.break_markers(break_session, bars)
    assert list(breaks["mode"]) == ["default"]
    assert breaks.reason[0] == run.graph_breaks[0].reason and "zoo.py" in breaks["where"][0]
    fig = timeline.timeline_figure(break_session, bars)
    assert "graph break" in [t.name for t in fig.data]


def test_collapse_links_layer_norm_and_gelu_into_one_kernel(ln_gelu_session: Session) -> None:
    eager, default = ln_gelu_session.run("eager"), ln_gelu_session.run("default")
    nodes, links = collapse.collapse_layout(collapse_of(eager, default))
    ek, ck = iteration_kernels(eager), iteration_kernels(default)
    targets = {ek.name[r.eager_index]: ck.name[r.compiled_index] for r in links.itertuples()}
    assert targets["aten::layer_norm"] == targets["aten::gelu"]
    assert targets["aten::gelu"].startswith("cpp_fused_gelu_native_layer_norm")
    compiled = nodes[nodes.side == "compiled"].set_index("name")
    assert compiled.role[targets["aten::gelu"]] == "fusion"
    assert compiled.loc[compiled.kernel_class == "gemm", "role"].tolist() == ["kept"]  # the GEMM stands apart
    fig = collapse.collapse_figure(collapse_of(eager, default))
    assert f"{len(ek)} eager kernels collapse into {len(ck)}" in fig.layout.title.text
    assert [t.name for t in fig.data if t.mode == "lines"] == ["fused into", "kept as is"]


def test_collapse_says_so_when_compiled_runs_more_kernels(ln_gelu_session: Session) -> None:
    eager, default = ln_gelu_session.run("eager"), ln_gelu_session.run("default")
    # The same two real runs in reverse roles: the "compiled" side now has more kernels.
    more = msgspec.structs.replace(eager, mode="default")
    title = collapse.collapse_figure(collapse_of(default, more)).layout.title.text
    assert "MORE kernels" in title and f"{len(iteration_kernels(default))} → {len(iteration_kernels(eager))}" in title


def test_collapse_animation_moves_eager_kernels_onto_their_fused_kernel(ln_gelu_session: Session) -> None:
    eager, default = ln_gelu_session.run("eager"), ln_gelu_session.run("default")
    fig = collapse.collapse_animation(collapse_of(eager, default), steps=6)
    nodes, links = collapse.collapse_layout(collapse_of(eager, default))
    assert len(fig.frames) == 7 and fig.layout.updatemenus[0].buttons[0].method == "animate"
    first, last = fig.frames[0].data[0], fig.frames[-1].data[0]
    assert list(first.x) == list(range(len(iteration_kernels(eager))))
    compiled_x = nodes[nodes.side == "compiled"].x.tolist()
    for link in links.itertuples():
        assert last.x[link.eager_index] == pytest.approx(compiled_x[link.compiled_index])
    # the compiled kernels wait as faint outlines and grow to full as the eager kernels merge into them
    assert fig.frames[-1].data[1].marker.opacity == 1.0 and fig.frames[0].data[1].marker.opacity < 0.5
    merged = [i for i in range(len(first.x)) if last.y[i] == 0.0]
    assert merged and all(last.marker.size[i] == 0 for i in merged)


def test_latency_bars_show_medians_spread_and_speedup(ln_gelu_session: Session) -> None:
    fig = latency.latency_figure(analyse(ln_gelu_session))
    bar = fig.data[0]
    ok = [r for r in ln_gelu_session.runs if r.ok]
    assert [y.split("<br>")[0] for y in bar.y] == [f"<b>{r.mode}</b>" for r in ok]
    compared = analyse(ln_gelu_session).comparisons
    assert list(bar.x) == pytest.approx([compared[r.mode].latency.median for r in ok])
    assert list(bar.error_x.array) == pytest.approx([compared[r.mode].latency.high - compared[r.mode].latency.median
                                                     for r in ok])
    s = compared["default"].speedup
    expected = (f"no clear difference ({s.low:.2f}–{s.high:.2f}×)" if compared["default"].verdict ==
                "no clear difference" else f"{s.median:.2f}× ({s.low:.2f}–{s.high:.2f}×) vs eager")
    assert bar.text[1] == expected and bar.text[1] in bar.y[1]


def test_metrics_cover_kernels_busy_compile_and_break_even(ln_gelu_session: Session) -> None:
    table = latency.metric_rows(analyse(ln_gelu_session))
    default = ln_gelu_session.run("default")
    row = table[(table["mode"] == "default") & (table.metric == "kernels_per_iteration")].iloc[0]
    assert row.value == default.summary.kernels_per_iteration
    even = table[(table["mode"] == "default") & (table.metric == "break_even_calls")]
    break_even = analyse(ln_gelu_session).comparisons["default"].break_even_calls
    assert even.text.tolist() == ([] if break_even is None else [f"{break_even:,.0f}"])  # only modes that pay back
    assert set(table.metric) <= {m for m, _ in latency.METRICS}
    # every metric has its panel, the speedup the verdict's title states first
    panels = [a.text for a in latency.metrics_figure(analyse(ln_gelu_session)).layout.annotations]
    assert panels[:len(latency.METRICS)] == [title for _, title in latency.METRICS]


def test_presentation_settings_enlarge_fonts(ln_gelu_session: Session) -> None:
    big = latency.latency_figure(analyse(ln_gelu_session), style.ChartSettings.presentation())
    small = latency.latency_figure(analyse(ln_gelu_session))
    assert big.layout.font.size > small.layout.font.size and big.layout.height > small.layout.height
    with pytest.raises(dataclasses.FrozenInstanceError):
        style.DEFAULT_SETTINGS.font_size = 30  # type: ignore[misc]


def test_plain_trace_opens_as_a_session_with_the_same_kernels(ln_gelu_session: Session) -> None:
    default = ln_gelu_session.run("default")
    opened = open_file(gzip.compress(default.chrome_trace()), "default.pt.trace.json.gz")
    assert opened.source == "trace" and opened.runs[0].mode == "default.pt.trace"
    assert len(opened.runs[0].kernel_frame()) == len(default.kernel_frame())
    stats = as_frame(kernel_ranking(opened.runs[0]), KernelStat)
    assert stats["count"].sum() == len(default.kernel_frame())
    assert stats.pct_of_kernel_time.sum() == pytest.approx(100.0)
    assert open_file(ln_gelu_session.to_json_bytes(), "s.json").source == "recorded"
    with pytest.raises(SessionFileError, match=r"neither a fusionviz session nor a torch\.profiler trace"):
        open_file(b'{"hello": 1}', "junk.json")


def test_diff_of_two_runs_counts_kernels_per_iteration(ln_gelu_session: Session) -> None:
    eager, default = ln_gelu_session.run("eager"), ln_gelu_session.run("default")
    diff = kernel_diff.kernel_diff(eager, default).table
    assert diff.count_diff.sum() == pytest.approx(
        default.summary.kernels_per_iteration - eager.summary.kernels_per_iteration)
    pair = kernel_tables.pair_summary(eager, default)
    assert pair["B - A"][0] == pytest.approx(-1.0)
    assert [r.mode for r in pair_session(eager, default, "x", "y").runs] == ["A · x", "B · y"]


# ---- shape sweeps: a real small CPU sweep and the shipped H200 sweep ----

def traces_named(fig: object, suffix: str) -> dict[str, object]:
    return {t.name.removesuffix(suffix): t for t in fig.data if t.name.endswith(suffix)}  # type: ignore[attr-defined]


@pytest.mark.parametrize("which", ["small_sweep", "shipped_sweep"])
def test_sweep_latency_has_a_line_per_strategy_and_a_marker_per_compile(which: str,
                                                                        request: pytest.FixtureRequest) -> None:
    session: Session = request.getfixturevalue(which)
    fig = sweep_charts.sweep_latency_figure(analyse(session))
    lines = {t.name: t for t in fig.data if t.mode == "lines+markers"}
    assert list(lines) == [s.strategy for s in session.sweep.strategies]
    assert fig.layout.yaxis.type == "log"
    compiled = traces_named(fig, ": compiled")
    for run in session.sweep.strategies:
        assert list(lines[run.strategy].y) == pytest.approx([c.latency_ms for c in run.calls])
        assert list(compiled[run.strategy].x) == [c.index for c in run.calls if c.compiled]
        reasons = [row[2] for row in compiled[run.strategy].customdata]
        assert reasons[0] == "first compile"
        assert reasons[1:] == [r for r in run.recompile_reasons if not r.startswith("recompile limit")]
        assert [row[1] for row in compiled[run.strategy].customdata] == pytest.approx(
            [c.compile_s for c in run.calls if c.compiled])
    assert not traces_named(fig, ": ran in eager")  # no strategy hit the recompile limit here
    assert sweep.recompile_limit_note(session) == ""


def test_sweep_latency_marks_eager_fallbacks_with_a_note(small_sweep: Session) -> None:
    # The real static run, as it reads once Dynamo gives up after call 4 (the session is copied, not changed).
    static = small_sweep.sweep.strategies[0]
    calls = [msgspec.structs.replace(c, fell_back_to_eager=c.index >= 4) for c in static.calls]
    fallen = msgspec.structs.replace(small_sweep, sweep=msgspec.structs.replace(
        small_sweep.sweep, strategies=[msgspec.structs.replace(static, calls=calls, recompile_limit_hit=True)]))
    fig = sweep_charts.sweep_latency_figure(analyse(fallen))
    assert list(traces_named(fig, ": ran in eager")["static"].x) == [4, 5]
    note = sweep.recompile_limit_note(fallen)
    assert "static hit Dynamo's recompile limit at call 4" in note
    assert [a.text for a in fig.layout.annotations] == [note]


def test_sweep_steady_and_cumulative_agree_with_the_session(shipped_sweep: Session) -> None:
    steady = sweep_charts.sweep_steady_figure(analyse(shipped_sweep))
    for trace, run in zip(steady.data, shipped_sweep.sweep.strategies, strict=True):
        assert trace.name == run.strategy
        assert list(trace.x) == sorted(int(k) for k in run.steady_ms_by_size)
        assert list(trace.y) == pytest.approx([run.steady_ms_by_size[str(x)] for x in trace.x])
    assert steady.layout.xaxis.title.text == "seq"

    cumulative = sweep_charts.sweep_cumulative_figure(analyse(shipped_sweep))
    totals = {t.name: t.y[-1] for t in cumulative.data}
    summary = sweep_summary(shipped_sweep).set_index("strategy")
    assert totals == pytest.approx(summary.total_s.to_dict())
    winner, since = sweep.sweep_leader(sweep.sweep_calls(shipped_sweep))
    assert winner == min(totals, key=totals.get)
    assert f"{winner} is ahead from call {since}" in cumulative.layout.title.text
    # static's seven compiles at ~1-3 s each make it the slowest over this schedule
    assert max(totals, key=totals.get) == "static"


def test_recompile_reasons_table(shipped_sweep: Session) -> None:
    reasons = sweep.recompile_reasons(shipped_sweep)
    counts = reasons.groupby("strategy").size().to_dict()
    assert counts == {"static": 6, "automatic": 1, "buckets": 3}
    assert reasons.reason.str.contains("size mismatch at index 1").all()  # seq is dimension 1


def test_sweep_kernels_static_against_dynamic_on_the_cpu(small_sweep: Session) -> None:
    static, dynamic = small_sweep.sweep.strategies
    diff = sweep.strategy_kernel_diff(static, dynamic)
    assert list(diff.name) == list(sweep.strategy_kernels(static).name)  # same kernels, launch order
    fused = diff[diff.kernel_class == "cpp_fused"]
    assert len(fused) and (fused.difference == "source differs").all()
    assert (diff[diff.kernel_class == "gemm"].difference == "same").all()
    name = fused.name.iloc[0]
    static_src = sources.find_source(static.kernel_sources, name)
    dynamic_src = sources.find_source(dynamic.kernel_sources, name)
    assert sources.size_arguments(dynamic_src) == ["ks0"]  # the batch arrives as an argument
    assert sources.size_arguments(static_src) == []
    assert "ks0" in sources.kernel_signature(dynamic_src) and sources.kernel_signature(static_src).startswith("extern")
    assert "+" in sources.source_diff(static_src, dynamic_src, "static", "dynamic")


def test_sweep_kernels_static_against_dynamic_on_the_gpu(shipped_sweep: Session) -> None:
    static, dynamic = shipped_sweep.sweep.strategies[:2]
    diff = sweep.strategy_kernel_diff(static, dynamic)
    assert len(diff) == len(static.kernels) and not diff.difference.str.startswith("only").any()
    triton = diff[diff.name.str.startswith("triton_")]
    assert (triton.difference == "source differs").all()
    for name in triton.name:
        # A static Triton kernel pins xnumel to a constant in its body; the dynamic one takes it at run time.
        assert sources.size_arguments(sources.find_source(dynamic.kernel_sources, name)) == ["xnumel"]
        assert sources.size_arguments(sources.find_source(static.kernel_sources, name)) == []
        assert sources.kernel_signature(sources.find_source(dynamic.kernel_sources, name)).startswith(f"def {name}(")
