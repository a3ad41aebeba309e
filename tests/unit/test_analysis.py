"""Analysis on hand-made sessions: figures recomputed from raw records, with expected values as arithmetic."""

from __future__ import annotations

import dataclasses

import msgspec
import pandas as pd
import pytest

from fusionviz.analysis.grid import cell_session, grid_table
from fusionviz.analysis.kernel_diff import kernel_diff
from fusionviz.analysis.kernel_tables import class_stats, iteration_kernels, pair_summary
from fusionviz.analysis.methodology import methodology_note, methodology_table
from fusionviz.analysis.report import analyse
from fusionviz.analysis.sentences import Source, load_warnings
from fusionviz.analysis.summary import SUMMARY_COLUMNS, drawable_runs
from fusionviz.analysis.sweep import (
    recompile_limit_note,
    recompile_reasons,
    steady_table,
    sweep_calls,
    sweep_leader,
    sweep_summary,
)
from fusionviz.analysis.timing import TOO_WIDE, Estimate, round_table, verdict_of
from fusionviz.analysis.trace_stats import KernelStat, as_frame, kernel_ranking
from fusionviz.analysis.verdict import verdict
from fusionviz.charts.grid import grid_figure
from fusionviz.cli.inspection import inspect_report
from fusionviz.records.session import (
    Grid,
    GridCell,
    Latency,
    MachineLoad,
    ModeRun,
    NaiveResult,
    StrategyRun,
    Sweep,
    SweepCall,
)
from tests.unit.factories import collapse_of, k, run, session, timing

EAGER = run("eager", [k("gemm", 0, 10, ops=("addmm",), op_id=1), k("aten::relu", 20, 5, ops=("relu",), op_id=2),
                      k("aten::add", 40, 5, ops=("add",), op_id=3)])
FUSED = run("default", [k("gemm", 0, 10, ops=("mm",), op_id=4, kernel_class="gemm"),
                        k("triton_poi_fused_add_relu_0", 15, 5, ops=("add", "relu"))], compile_s=2.0)
SLOW = run("max-autotune-no-cudagraphs", FUSED.kernels, compile_s=9.0)
# Two timing processes of five rounds; the second process is 20% slower throughout, for every mode alike.
MS = {"eager": [[0.10] * 5, [0.12] * 5], "default": [[0.05] * 5, [0.06] * 5],
      "max-autotune-no-cudagraphs": [[0.20] * 5, [0.24] * 5]}


def test_latency_pools_every_round_of_every_process_and_speedups_pair_rounds() -> None:
    compared = analyse(session(EAGER, FUSED, SLOW, ms=MS)).comparisons
    eager, default = compared["eager"], compared["default"]
    assert (eager.latency.median, eager.latency.low, eager.latency.high) == pytest.approx((0.11, 0.10, 0.12))
    assert (eager.latency.samples, eager.latency.processes) == (10, 2)
    # Within each round default takes half of eager's time, however slow its process: a tight 2x.
    assert (default.speedup.median, default.speedup.low, default.speedup.high) == pytest.approx((2.0, 2.0, 2.0))
    assert default.verdict == "faster" and compared["max-autotune-no-cudagraphs"].verdict == "slower"
    assert default.break_even_calls == pytest.approx(2.0e3 / (0.11 - 0.055))
    assert compared["max-autotune-no-cudagraphs"].break_even_calls is None  # slower: never pays back
    rounds = round_table(session(EAGER, FUSED, ms=MS))  # each process's median: the spread between them
    medians = rounds.groupby(["process", "mode"], as_index=False, sort=False).ms.median()
    assert medians[medians["mode"] == "eager"].ms.tolist() == pytest.approx([0.10, 0.12])


def test_verdict_calls_no_clear_difference_when_the_interval_straddles_one() -> None:
    noisy = [[0.8, 1.25, 0.9, 1.1, 1.0, 0.95, 1.05, 0.85, 1.2, 1.0]]
    s = session(EAGER, FUSED, ms={"eager": [[1.0] * 10], "default": noisy})
    vs = analyse(s).comparisons["default"]
    assert vs.speedup.low < 1 < vs.speedup.high and vs.verdict == "no clear difference"
    assert vs.break_even_calls is None
    text = analyse(s).verdict
    assert text.startswith(f"default shows no clear difference from eager here: {vs.speedup.median:.2f}x "
                           f"({vs.speedup.low:.2f}–{vs.speedup.high:.2f}x over 10 rounds in 1 process; one process")
    assert "so the interval straddles 1" in text and "No compiled mode is clearly faster" in text
    assert analyse(s).headline.text.startswith("default: no clear difference. ")


def test_two_processes_that_disagree_give_no_verdict() -> None:
    """The folklore case: one process says 4.5x slower, the next 3x faster. Pooled, it is no clear difference."""
    s = session(EAGER, FUSED, ms={"eager": [[1.0] * 5, [1.0] * 5], "default": [[4.5] * 5, [1 / 3] * 5]})
    assert analyse(s).comparisons["default"].verdict == "no clear difference"


def test_a_spread_too_wide_to_call_is_no_clear_difference() -> None:
    wide = [[0.25, 0.3, 0.5, 0.6, 0.4, 0.9, 0.2, 0.35, 0.45, 0.8]]  # eager / this: 1.1x to 5x
    vs = analyse(session(EAGER, FUSED, ms={"eager": [[1.0] * 10], "default": wide})).comparisons["default"]
    assert vs.speedup.low > 1 and vs.speedup.high / vs.speedup.low > TOO_WIDE
    assert vs.verdict == "no clear difference"
    assert verdict_of(Estimate(1.5, 1.2, 1.8, 10, 1)) == "faster"
    assert verdict_of(Estimate(0.5, 0.4, 0.6, 10, 1)) == "slower"


def test_a_sure_but_negligible_difference_is_no_clear_difference() -> None:
    # the H200 grid's dim 1024 × batch 4096 cell: 0.999x (0.997–1.000), every round below 1
    assert verdict_of(Estimate(0.999, 0.997, 0.9996, 30, 3)) == "no clear difference"
    assert verdict_of(Estimate(1.01, 1.005, 1.02, 30, 3)) == "no clear difference"
    assert verdict_of(Estimate(1.03, 1.01, 1.05, 30, 3)) == "faster"
    assert verdict_of(Estimate(0.96, 0.95, 0.99, 30, 3)) == "slower"


def test_schema_one_sessions_compare_separately_timed_latencies() -> None:
    old_eager = msgspec.structs.replace(EAGER,
                                        latency=Latency(0.10, 0.09, 0.12, [0.09, 0.10, 0.12], 10, "cuda_events"))
    old_fused = msgspec.structs.replace(FUSED,
                                        latency=Latency(0.05, 0.045, 0.06, [0.045, 0.05, 0.06], 10, "cuda_events"))
    vs = analyse(session(old_eager, old_fused)).comparisons["default"]
    assert (vs.speedup.median, vs.speedup.low, vs.speedup.high) == pytest.approx((2.0, 0.09 / 0.06, 0.12 / 0.045))
    assert vs.speedup.samples == 0 and "modes timed apart" in analyse(session(old_eager, old_fused)).verdict


def test_summary_table_has_every_column_and_a_row_per_mode() -> None:
    failed = ModeRun(mode="reduce-overhead", status="error", error="boom")
    table = analyse(session(EAGER, FUSED, failed, ms={m: MS[m] for m in ("eager", "default")})).summary
    assert list(table.columns) == list(SUMMARY_COLUMNS)
    assert list(table["mode"]) == ["eager", "default", "reduce-overhead"]
    assert table.kernels_per_iteration.tolist()[:2] == [3, 2]
    # busy: kernel time per iteration (20 µs) over the unprofiled median latency (0.11 ms)
    assert table.busy_pct[0] == pytest.approx(100 * 20 / 110)
    assert pd.isna(table.verdict[0]) and table.verdict[1] == "faster" and table.rounds[1] == 10
    assert table.speedup.isna()[2] and table.graph_breaks.isna()[0]
    assert [r.mode for r in drawable_runs(session(EAGER, FUSED, failed))] == ["eager", "default"]


def test_verdict_names_the_cause_and_the_payback() -> None:
    report = analyse(session(EAGER, FUSED, SLOW, ms=MS))
    text = report.verdict
    assert text.startswith("default is faster than eager here: 2.00x (2.00–2.00x over 10 rounds in 2 processes). "
                           "Fusion cut the kernels from 3 to 2.")
    assert report.headline.text == "default: 2x faster. 3 kernels became 2"
    assert "launch-bound" not in text  # a class of the one classification, or none
    assert "Also: max-autotune-no-cudagraphs slower, 0.50x (0.50–0.50x), 3 → 2 kernels." in text
    assert f"Fastest: default; its 2.0 s compile pays back after {2.0e3 / 0.055:,.0f} calls." in text
    slow_ms = {m: MS[m] for m in ("eager", "max-autotune-no-cudagraphs")}
    slow_first = analyse(session(EAGER, SLOW, ms=slow_ms))
    assert slow_first.verdict.startswith("max-autotune-no-cudagraphs is slower than eager here: 0.50x")
    assert slow_first.headline.text == "max-autotune-no-cudagraphs: 2x slower. 3 kernels became 2"
    assert "No compiled mode is clearly faster" in slow_first.verdict


def test_load_warnings_name_the_busy_processes() -> None:
    s = session(EAGER, FUSED, ms=MS, device_kind="cpu")
    s.config = dataclasses.replace(s.config, threads=2)
    s.timing.load_before = MachineLoad(cores=2, load_average=1.5, busy_cores=1.2, others=["chromium (42): 1.1 cores"])
    s.timing.load_after = MachineLoad(cores=2, load_average=0.2, busy_cores=0.1)
    (note,) = load_warnings(s)
    assert note.startswith("The machine was busy before the run: 1.2 of 2 cores in use by other processes "
                           "(chromium (42): 1.1 cores), load average 1.5; the workers' 2 threads did not all")
    s.timing.processes[1].error = "crash: the worker died"
    assert load_warnings(s)[1] == ("1 of 2 timing processes failed (crash: the worker died); the figures come "
                                   "from the others.")


def test_verdict_without_eager() -> None:
    r = analyse(session(FUSED))
    assert verdict(r.session, r.latencies, r.speedups, r.comparisons, r.busy) == ("Eager did not run, so there is "
                                                                                  "nothing to compare against.")


def test_kernel_tables() -> None:
    two = run("eager", [k("a", 0, 10), k("b", 10, 30), k("a", 50, 20, iteration=1), k("b", 80, 30, iteration=1)])
    stats = as_frame(kernel_ranking(two), KernelStat).set_index("name")
    assert stats.loc["b", "total_us"] == 60 and stats.loc["a", "mean_us"] == 15
    assert stats.loc["a", "per_iteration"] == 1 and stats.pct_of_kernel_time.sum() == pytest.approx(100)
    classes = class_stats(two)
    assert classes["count"].sum() == 4 and classes.total_us.sum() == 90
    assert list(iteration_kernels(two, 1).start_us) == [50, 80]
    diff = kernel_diff(EAGER, FUSED).table.set_index("name")
    assert diff.loc["triton_poi_fused_add_relu_0", "count_diff"] == 1
    assert diff.loc["aten::relu", "us_diff"] == -5
    pair = pair_summary(EAGER, FUSED).set_index("quantity")
    assert pair.loc["kernels per iteration", "B - A"] == -1


def test_methodology_table_and_note() -> None:
    naive = NaiveResult(mode="default", calls=100, naive_eager_ms=1.0, naive_mode_ms=0.1, naive_speedup=10.0,
                        key_averages_rows_eager=9, key_averages_rows_mode=4)
    r = analyse(session(EAGER, FUSED, ms={m: MS[m] for m in ("eager", "default")}))
    table = methodology_table(naive, r.session, r.latencies, r.speedups)
    assert list(table.naive) == [10.0, 1.0, 0.1, 9, 4]
    assert list(table.one_process) == pytest.approx([2.0, 0.10, 0.05, 3, 2])  # the first process alone
    assert list(table.proper) == pytest.approx([2.0, 0.11, 0.055, 3, 2])
    assert list(table.high[1:3]) == pytest.approx([0.12, 0.06])
    assert "naive loop reports a 10.00x speedup. Measured properly in one process it is 2.00x" in methodology_note(
        table, 2)
    untimed = analyse(session(EAGER))
    assert methodology_table(naive, untimed.session, untimed.latencies, untimed.speedups).empty


def test_sentences_and_report() -> None:
    s = session(EAGER, FUSED)
    assert Source.of(s).line().startswith("Recorded session: H200, torch 2.11.0")
    assert collapse_of(EAGER, FUSED).title == "default: 3 eager kernels collapse into 2 per iteration"
    assert collapse_of(FUSED, EAGER).title.startswith("⚠ eager runs MORE kernels")
    report = inspect_report(analyse(s), "x.json")
    assert [r["kernels_per_iteration"] for r in report["runs"]] == [3, 2]
    assert report["runs"][1]["kernels"][1] == {"name": "triton_poi_fused_add_relu_0", "class": "triton_pointwise",
                                               "duration_us": 5.0, "fused_ops": ["add", "relu"],
                                               "bytes": None, "flop": None, "achieved": None, "measured_bytes": None,
                                               "provenance": None, "source_lines": []}


def _strategy(name: str, latencies: list[float], compiled: list[bool], reasons: list[str], *,
              fell: int | None = None) -> StrategyRun:
    calls = [SweepCall(index=i, size=8 * (i % 3 + 1), latency_ms=ms, compiled=c, compile_s=ms / 1e3 if c else 0.0,
                       fell_back_to_eager=fell is not None and i >= fell)
             for i, (ms, c) in enumerate(zip(latencies, compiled, strict=True))]
    return StrategyRun(strategy=name, calls=calls, compiles=sum(compiled), recompile_reasons=reasons,
                       steady_ms_by_size={"8": 1.0, "16": 2.0} if name == "static" else {"8": 1.5, "16": 2.0},
                       recompile_limit_hit=fell is not None)


def test_sweep_tables() -> None:
    static = _strategy("static", [100, 90, 80, 1, 1, 1], [True, True, True, False, False, False],
                       ["size mismatch at 0: expected 8, actual 16", "size mismatch at 0: expected 16, actual 24"])
    dynamic = _strategy("dynamic", [120, 2, 2, 2, 2, 2], [True] + [False] * 5, [])
    s = session(EAGER)
    s.sweep = Sweep(dimension="batch", schedule=[8, 16, 24, 8, 16, 24], strategies=[static, dynamic])
    calls = sweep_calls(s)
    assert list(calls[calls.strategy == "static"].reason[:3]) == [
        "first compile", "size mismatch at 0: expected 8, actual 16", "size mismatch at 0: expected 16, actual 24"]
    assert calls[calls.strategy == "dynamic"].cumulative_s.iloc[-1] == pytest.approx(0.130)
    assert sweep_leader(calls) == ("dynamic", 1)  # behind after call 0 (120 > 100 ms), ahead from call 1 on
    summary = sweep_summary(s).set_index("strategy")
    assert summary.loc["dynamic", "ratio_vs_static"] == pytest.approx((1.5 + 1.0) / 2)
    assert summary.loc["static", "total_s"] == pytest.approx(0.273)
    assert list(steady_table(s).steady_ms) == [1.0, 2.0, 1.5, 2.0]
    assert list(recompile_reasons(s).strategy) == ["static", "static"]
    assert recompile_limit_note(s) == ""
    static.recompile_limit_hit = True
    for c in static.calls[4:]:
        c.fell_back_to_eager = True
    assert recompile_limit_note(s) == ("static hit Dynamo's recompile limit at call 4: it and the 1 calls after it "
                                       "ran in eager, uncompiled.")


def test_grid_table_and_sentence() -> None:
    fast = {"eager": [[0.2] * 3], "default": [[0.1] * 3]}
    slow = {"eager": [[0.1] * 3], "default": [[0.2] * 3]}
    cells = [GridCell(dim=d, batch=8, device="cuda:0", runs=[EAGER, FUSED], timing=timing(ms))
             for d, ms in ((256, slow), (4096, fast))] + [GridCell(dim=8192, batch=8, device="cuda:1", error="too big")]
    s = session(EAGER, FUSED)
    s.grid = Grid(dims=[256, 4096, 8192], batches=[8], cells=cells)
    table = grid_table(s)
    assert list(table.verdict) == ["slower", "faster", "error"]
    assert list(table.speedup[:2]) == pytest.approx([0.5, 2.0])
    # eager's 20 µs of kernels per iteration over its 0.1 ms and 0.2 ms medians
    assert list(table.eager_busy[:2]) == pytest.approx([0.2, 0.1])
    assert analyse(s).grid.sentence == (
        "default is clearly faster than eager at 1 of 3 sizes (dim×batch): 4096×8; clearly slower at 1 (256×8); no "
        "clear difference at 0; eager keeps the device busy 10% of the time where default wins and 20% where it loses.")
    assert cell_session(s, 4096, 8).config.dim == 4096
    fig = grid_figure(analyse(s))
    assert [round(v, 6) if v == v else None for v in fig.data[0].z[0]] == [-1.0, 1.0, None]
    # each cell says what was measured in it: the speedup, and eager's busy share there; nothing interpolated
    assert list(fig.data[0].text[0]) == ["0.50×<br>busy 20%", "2.00×<br>busy 10%", "error"]
    assert [t.type for t in fig.data] == ["heatmap"]


def test_kernel_time_per_iteration_is_one_figure_in_the_pairs_table_and_the_class_chart() -> None:
    """Two runs, one with kernels overlapping (two streams) and a Memcpy: under one label, the pair's table and
    the class chart give one figure (they read 61,540 and about 83,000 µs for one trace before)."""
    from fusionviz.analysis.kernel_tables import BUSY_US, KERNEL_US
    from fusionviz.charts.stats import AXIS_TITLE, class_stats_figure

    overlapping = run("eager", [k("gemm", 0, 10, kernel_class="gemm"), k("aten::relu", 5, 10),
                                k("Memcpy HtoD (Pageable -> Device)", 30, 4, kernel_class="memory")])
    report = analyse(session(overlapping, FUSED))
    pair = pair_summary(overlapping, FUSED).set_index("quantity")
    fig = class_stats_figure([report.runs["eager"], report.runs["default"]])
    stacked = [sum(trace.y[i] for trace in fig.data) for i in range(2)]
    assert fig.layout.yaxis.title.text == AXIS_TITLE and KERNEL_US in fig.data[0].hovertemplate
    assert [pair.loc[KERNEL_US, "A"], pair.loc[KERNEL_US, "B"]] == pytest.approx(stacked) == [10 + 10, 10 + 5]
    assert [pair.loc[BUSY_US, "A"], pair.loc[BUSY_US, "B"]] == pytest.approx([15, 15])  # 0-15 and 0-10, 15-20


def test_ratio_words_keep_the_digits_that_tell_a_small_change_from_none() -> None:
    from fusionviz.analysis.verdict import ratio_words

    assert [ratio_words(v) for v in (1.03, 0.95, 1.64, 0.5, 10.44)] == [
        "1.03x faster", "1.05x slower", "1.6x faster", "2x slower", "10x faster"]
