"""Shape sweeps on the CPU, for real: what each strategy compiles, when, and why."""

from __future__ import annotations

import pytest

from fusionviz.analysis.sweep import sweep_calls, sweep_summary
from fusionviz.errors import ConfigError
from fusionviz.measure.client import run_sweep_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import MAX_SWEEP_CALLS, RunConfig, SweepRequest, sweep_sizes
from fusionviz.records.session import Session, StrategyRun

MLP = RunConfig(model="mlp", dim=32, batch=16, device="cpu")


def strategy(session: Session, name: str) -> StrategyRun:
    assert session.sweep is not None
    return next(s for s in session.sweep.strategies if s.strategy == name)


def test_static_compiles_once_per_shape_dynamic_at_most_twice(small_sweep: Session) -> None:
    static, dynamic = strategy(small_sweep, "static"), strategy(small_sweep, "dynamic")
    assert static.status == dynamic.status == "ok"
    assert static.compiles == 3  # batch 4, 8 and 12
    assert [c.compiled for c in static.calls] == [True, True, True, False, False, False]
    assert dynamic.compiles <= 2 and dynamic.calls[0].compiled
    assert not any(c.compiled for c in dynamic.calls[2:])
    assert static.compile_total_s == pytest.approx(sum(c.compile_s for c in static.calls))
    assert sorted(static.steady_ms_by_size, key=int) == ["4", "8", "12"]
    summary = sweep_summary(small_sweep).set_index("strategy")
    assert summary.compiles["static"] == 3 and summary.ratio_vs_static["static"] == pytest.approx(1.0)


def test_recompile_reasons_name_the_guard_that_failed(small_sweep: Session) -> None:
    static = strategy(small_sweep, "static")
    assert len(static.recompile_reasons) == 2  # the first compile has no reason; each recompile has one
    assert all("size mismatch" in r for r in static.recompile_reasons)
    assert "expected 4, actual 8" in static.recompile_reasons[0]
    assert strategy(small_sweep, "dynamic").recompile_reasons == []


def test_cumulative_time_adds_up_every_call(small_sweep: Session) -> None:
    calls = sweep_calls(small_sweep)
    for name, rows in calls.groupby("strategy"):
        assert rows.cumulative_s.iloc[-1] == pytest.approx(sum(c.latency_ms for c in strategy(small_sweep, name).calls)
                                                           / 1e3)
        assert rows.cumulative_s.is_monotonic_increasing


def test_ten_shapes_under_static_hit_the_recompile_limit(worker: Worker) -> None:
    sizes = list(range(1, 11))
    session = run_sweep_session(MLP, SweepRequest(schedule="list", sizes=sizes, strategies=["static"],
                                                  steady_repeats=3), worker=worker)
    static = strategy(session, "static")
    assert static.recompile_limit_hit
    compiled = [c.index for c in static.calls if c.compiled]
    fallen = [c.index for c in static.calls if c.fell_back_to_eager]
    assert compiled == list(range(len(compiled))) and 1 < len(compiled) < len(sizes)
    assert fallen and fallen == list(range(fallen[0], len(sizes)))  # from the limit on, every call is eager
    assert fallen[0] >= compiled[-1]
    assert any(r.startswith("recompile limit hit") for r in static.recompile_reasons)


def test_buckets_compile_once_per_bucket_used(worker: Worker) -> None:
    sizes = [3, 5, 9, 12, 5, 3, 12]
    session = run_sweep_session(MLP, SweepRequest(schedule="list", sizes=sizes, strategies=["buckets", "automatic"],
                                                  steady_repeats=3), worker=worker)
    assert session.sweep is not None and session.sweep.buckets == [4, 8, 16]  # powers of two covering the sizes
    buckets = strategy(session, "buckets")
    assert buckets.compiles == 3
    assert [c.compiled for c in buckets.calls] == [True, True, True, False, False, False, False]
    automatic = strategy(session, "automatic")  # static first, then one dynamic recompile covers the rest
    assert automatic.compiles <= 2 and not any(c.compiled for c in automatic.calls[2:])


@pytest.mark.parametrize(("config", "request_", "message"), [
    (MLP, SweepRequest(schedule="list", sizes=[4, 0, 8]), "whole numbers from 1"),
    (MLP, SweepRequest(schedule="list", sizes=[70000]), "whole numbers from 1"),
    (MLP, SweepRequest(schedule="list", sizes=[]), "1 to"),
    (MLP, SweepRequest(schedule="list", sizes=[2] * (MAX_SWEEP_CALLS + 1)), f"not {MAX_SWEEP_CALLS + 1}"),
    (MLP, SweepRequest(dimension="seq", sizes=[4]), "no sequence length"),
    (MLP, SweepRequest(sizes=[4], strategies=["jit"]), "unknown: jit"),
    (MLP, SweepRequest(schedule="zigzag"), "unknown schedule"),
])
def test_sweep_sizes_refuses_a_bad_request(config: RunConfig, request_: SweepRequest, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        sweep_sizes(config, request_)


def test_generated_schedules_are_deterministic_and_bounded() -> None:
    increasing = sweep_sizes(MLP, SweepRequest(schedule="increasing", calls=4))
    assert increasing == [4, 8, 12, 16]
    random = sweep_sizes(MLP, SweepRequest(schedule="random", calls=8))
    assert random == sweep_sizes(MLP, SweepRequest(schedule="random", calls=8))
    assert all(2 <= s <= 16 for s in random)


def test_kernel_source_comes_from_the_compile_that_serves_the_profiled_shape(small_sweep: Session) -> None:
    # Inductor reuses kernel names across recompiles: the static source must be batch 8's (8 x 32 = 256
    # elements), not the last compile's (batch 12: 384); the dynamic one takes the size as an argument.
    assert small_sweep.sweep.kernel_size == 8
    static, dynamic = small_sweep.sweep.strategies
    (source,) = static.kernel_sources.values()
    assert "256L" in source and "384L" not in source
    assert all("ks0" in s for s in dynamic.kernel_sources.values())


def test_cold_caches_compile_every_strategy_from_scratch() -> None:
    config = RunConfig(model="mlp", dim=32, batch=8, device="cpu")
    request = SweepRequest(schedule="list", sizes=[4, 8], strategies=["static", "automatic"], cold_caches=True,
                           steady_repeats=3)
    session = run_sweep_session(config, request)
    assert [s.strategy for s in session.sweep.strategies] == ["static", "automatic"]
    for strategy in session.sweep.strategies:
        assert strategy.cold_caches and strategy.fx_cache_hits == 0 and strategy.fx_cache_misses >= 1
