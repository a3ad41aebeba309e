"""Analysis on hand-made sessions: figures recomputed from raw records, with expected values as arithmetic."""

from __future__ import annotations

import pytest

from fusionviz.analysis.kernel_tables import class_stats, iteration_kernels, kernel_diff, kernel_stats, pair_summary
from fusionviz.analysis.methodology import methodology_note, methodology_table
from fusionviz.analysis.report import inspect_report
from fusionviz.analysis.sentences import collapse_title, source_line
from fusionviz.analysis.summary import SUMMARY_COLUMNS, comparisons, drawable_runs, summary_table
from fusionviz.analysis.sweep import (
    recompile_limit_note,
    recompile_reasons,
    steady_table,
    sweep_calls,
    sweep_leader,
    sweep_summary,
)
from fusionviz.analysis.verdict import verdict
from fusionviz.records.session import ModeRun, NaiveResult, StrategyRun, Sweep, SweepCall
from tests.unit.factories import k, run, session

EAGER = run("eager", [k("gemm", 0, 10, ops=("addmm",), op_id=1), k("aten::relu", 20, 5, ops=("relu",), op_id=2),
                      k("aten::add", 40, 5, ops=("add",), op_id=3)], ms=(0.10, 0.09, 0.12))
FUSED = run("default", [k("gemm", 0, 10, ops=("mm",), op_id=4, kernel_class="gemm"),
                        k("triton_poi_fused_add_relu_0", 15, 5, ops=("add", "relu"))],
            ms=(0.05, 0.045, 0.06), compile_s=2.0)
SLOW = run("max-autotune-no-cudagraphs", FUSED.kernels, ms=(0.20, 0.19, 0.25), compile_s=9.0)


def test_speedup_spread_and_break_even_are_computed_from_latencies() -> None:
    compared = comparisons(session(EAGER, FUSED, SLOW))
    assert compared["eager"].speedup == 1.0
    default = compared["default"]
    assert (default.speedup, default.low, default.high) == pytest.approx((0.10 / 0.05, 0.09 / 0.06, 0.12 / 0.045))
    assert default.break_even_calls == pytest.approx(2.0e3 / (0.10 - 0.05))
    assert compared["max-autotune-no-cudagraphs"].break_even_calls is None  # slower: never pays back


def test_summary_table_has_every_column_and_a_row_per_mode() -> None:
    failed = ModeRun(mode="reduce-overhead", status="error", error="boom")
    table = summary_table(session(EAGER, FUSED, failed))
    assert list(table.columns) == list(SUMMARY_COLUMNS)
    assert list(table["mode"]) == ["eager", "default", "reduce-overhead"]
    assert table.kernels_per_iteration.tolist()[:2] == [3, 2]
    assert table.busy_pct[0] == pytest.approx(100 * (10 + 5 + 5) / 100)
    assert table.speedup.isna()[2] and table.graph_breaks.isna()[0]
    assert [r.mode for r in drawable_runs(session(EAGER, FUSED, failed))] == ["eager", "default"]


def test_verdict_names_the_cause_and_the_payback() -> None:
    text = verdict(session(EAGER, FUSED, SLOW))
    assert text.startswith("default is 2.0x faster than eager here: fusion cut the kernels from 3 to 2")
    assert "launch-bound: the GPU is busy 20% of each eager call" not in text  # only said when it loses
    assert "Also: max-autotune-no-cudagraphs 2.0x slower (3 → 2 kernels)." in text
    assert f"pays back after {2.0e3 / 0.05:,.0f} calls" in text
    slow_first = verdict(session(EAGER, SLOW))
    assert "2.0x slower than eager here" in slow_first and "launch-bound: the GPU is busy 20%" in slow_first
    assert "No compiled mode beats eager" in slow_first


def test_verdict_without_eager() -> None:
    assert verdict(session(FUSED)) == "Eager did not run, so there is nothing to compare against."


def test_kernel_tables() -> None:
    two = run("eager", [k("a", 0, 10), k("b", 10, 30), k("a", 50, 20, iteration=1), k("b", 80, 30, iteration=1)])
    stats = kernel_stats(two).set_index("name")
    assert stats.loc["b", "total_us"] == 60 and stats.loc["a", "mean_us"] == 15
    assert stats.loc["a", "per_iteration"] == 1 and stats.share_pct.sum() == pytest.approx(100)
    classes = class_stats(two)
    assert classes["count"].sum() == 4 and classes.total_us.sum() == 90
    assert list(iteration_kernels(two, 1).start_us) == [50, 80]
    diff = kernel_diff(EAGER, FUSED).set_index("name")
    assert diff.loc["triton_poi_fused_add_relu_0", "count_diff"] == 1
    assert diff.loc["aten::relu", "us_diff"] == -5
    pair = pair_summary(EAGER, FUSED).set_index("quantity")
    assert pair.loc["kernels per iteration", "B - A"] == -1


def test_methodology_table_and_note() -> None:
    naive = NaiveResult(mode="default", calls=100, naive_eager_ms=1.0, naive_mode_ms=0.1, naive_speedup=10.0,
                        key_averages_rows_eager=9, key_averages_rows_mode=4)
    table = methodology_table(naive, session(EAGER, FUSED))
    assert list(table.naive) == [10.0, 1.0, 0.1, 9, 4]
    assert list(table.proper) == pytest.approx([2.0, 0.10, 0.05, 3, 2])
    assert "naive loop reports a 10.00× speedup; measured properly it is 2.00×" in methodology_note(table)
    assert methodology_table(naive, session(EAGER)).empty


def test_sentences_and_report() -> None:
    s = session(EAGER, FUSED)
    assert source_line(s).startswith("Recorded session: H200, torch 2.11.0")
    assert collapse_title(EAGER, FUSED) == "default: 3 eager kernels collapse into 2 per iteration"
    assert collapse_title(FUSED, EAGER).startswith("⚠ eager runs MORE kernels")
    report = inspect_report(s, "x.json")
    assert [r["kernels_per_iteration"] for r in report["runs"]] == [3, 2]
    assert report["runs"][1]["kernels"][1] == {"name": "triton_poi_fused_add_relu_0", "class": "triton_pointwise",
                                               "duration_us": 5.0, "fused_ops": ["add", "relu"]}


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
