"""A live GPU run with eager as a CUDA graph: the ladder's steps with their intervals, the ceilings from the cache."""

from __future__ import annotations

import pytest

from fusionviz.analysis.report import analyse
from fusionviz.cli.inspection import inspect_report
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig

pytestmark = pytest.mark.gpu


def test_a_live_run_gives_the_ladder_with_intervals_and_cached_ceilings(worker: Worker) -> None:
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", rounds=5, processes=2,
                       modes=("eager", "eager_cuda_graph", "default", "reduce-overhead"))
    first = run_session(config, worker=worker)
    graphed = first.run("eager_cuda_graph")
    assert graphed is not None and graphed.ok, graphed and graphed.error
    steps = {s["step"]: s for s in inspect_report(analyse(first), "live", top=None)["ladder"]}
    assert {"eager → eager_cuda_graph", "eager_cuda_graph → reduce-overhead", "eager → default"} <= set(steps)
    for step in steps.values():
        if step["delta_us"] is not None:
            d = step["delta_us"]
            assert d["low"] <= d["median"] <= d["high"] and step["mechanism"]
    assert steps["eager → eager_cuda_graph"]["delta_us"]["median"] < 0  # launches removed: faster
    second = run_session(RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", rounds=3, processes=1,
                                   modes=("eager", "default")), worker=worker)
    assert first.ceilings is not None and second.ceilings is not None
    assert second.ceilings.measured_at == first.ceilings.measured_at  # the second run read the cache
    assert first.ceilings.copy_gbps > 0 and "float32" in first.ceilings.matmul_tflops
