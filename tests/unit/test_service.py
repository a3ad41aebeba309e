"""The run service's result keys and its rule of what may be shared (no page or worker needed)."""

from __future__ import annotations

import msgspec

from fusionviz.measure.service import NaiveRun, SessionRun, SweepRun, complete
from fusionviz.records.config import RunConfig, SweepRequest
from fusionviz.records.session import ModeRun, StrategyRun, Sweep, TimingProcess
from tests.unit.factories import k, run, session


def test_result_key_is_stable_and_tells_configurations_apart() -> None:
    a, b = RunConfig(model="mlp"), RunConfig(model="mlp", batch=8)
    assert SessionRun(a).key == SessionRun(RunConfig(model="mlp")).key
    assert SessionRun(a).key != SessionRun(b).key != NaiveRun(b, "default", 100).key
    assert SweepRun(a, SweepRequest()).key.startswith("sweep|")


def test_only_a_result_with_nothing_failed_is_complete_enough_to_share() -> None:
    eager, default = run("eager", [k("mm", 0, 10)]), run("default", [k("triton_fused", 0, 5)])
    ok = session(eager, default, ms={"eager": [[2.0, 2.1]], "default": [[1.0, 1.1]]})
    assert complete(ok) and complete(None) and complete(RunConfig())  # only sessions can hold failures
    crashed = msgspec.structs.replace(ok, runs=[eager, ModeRun(mode="default", status="error", error="died")])
    assert not complete(crashed)
    not_applicable = msgspec.structs.replace(ok, runs=[eager, ModeRun(mode="cudagraphs", status="not_applicable")])
    assert complete(not_applicable)  # a property of the configuration, the same for everyone
    assert ok.timing is not None
    timing_failed = msgspec.structs.replace(ok, timing=msgspec.structs.replace(
        ok.timing, processes=[*ok.timing.processes, TimingProcess(index=1, error="timed out")]))
    assert not complete(timing_failed)
    sweep = Sweep(dimension="batch", schedule=[8],
                  strategies=[StrategyRun(strategy="static"), StrategyRun(strategy="dynamic", status="error")])
    assert not complete(msgspec.structs.replace(ok, runs=[], timing=None, sweep=sweep))
