"""Real CPU runs through the worker: real torch.compile (Inductor's C++ backend), real profiler."""

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.links import fusion_links
from fusionviz.analysis.report import analyse
from fusionviz.analysis.summary import busy_fraction
from fusionviz.analysis.timing import latency_estimates
from fusionviz.analysis.trace_stats import busy_time
from fusionviz.cli import main
from fusionviz.errors import ConfigError
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Session


def small(model: str, **kw: object) -> RunConfig:
    return replace(RunConfig(model=model, dim=32, batch=8, device="cpu", rounds=3, processes=1, warmup_calls=3,
                             memory=False), **kw)


def test_layer_norm_and_gelu_fuse_into_one_cpp_kernel(ln_gelu_session: Session) -> None:
    eager = iteration_kernels(ln_gelu_session.run("eager"))
    default = iteration_kernels(ln_gelu_session.run("default"))
    assert list(eager.name) == ["aten::linear", "aten::layer_norm", "aten::gelu"]
    fused = default[default.kernel_class == "cpp_fused"]
    assert len(fused) == 1 and set(fused.iloc[0].fused_ops) == {"gelu", "native_layer_norm"}
    assert fused.iloc[0]["name"] in ln_gelu_session.run("default").kernel_sources
    assert "extern \"C\"" in ln_gelu_session.run("default").kernel_sources[fused.iloc[0]["name"]]
    links = fusion_links(eager, default)
    fused_index = int(fused.index[0])
    assert set(links[links.compiled_index == fused_index].eager_index) == {1, 2}


def test_session_numbers_hang_together(ln_gelu_session: Session) -> None:
    env = ln_gelu_session.environment
    assert env.device_kind == "cpu" and env.torch_version and env.captured_at and env.cpu
    timing = ln_gelu_session.timing
    assert timing.timer == "perf_counter" and timing.load_before.cores >= 1 and timing.load_after is not None
    assert [p.index for p in timing.processes] == [0, 1] and all(p.error is None for p in timing.processes)
    for process in timing.processes:
        assert len(process.rounds) == 3 and all(set(r) == {"eager", "default"} for r in process.rounds)
        assert process.pinned_cpu is None and process.threads == ln_gelu_session.config.threads >= 1
    latencies = latency_estimates(ln_gelu_session)
    for run in ln_gelu_session.runs[:2]:
        assert run.ok
        lat = latencies[run.mode]
        assert lat.low <= lat.median <= lat.high and (lat.samples, lat.processes) == (6, 2)
        assert run.summary.iterations == 3
        assert run.summary.kernels_per_iteration == len(iteration_kernels(run))
        assert 0 < busy_fraction(busy_time(run), lat) <= 1
        assert run.chrome_trace() is not None
    default = ln_gelu_session.run("default")
    assert default.compile.first_call_s > 0 and default.compile.cache in ("warm", "cold", "mixed")
    assert default.graph_count == 1 and default.graph_breaks == [] and default.recompiles == 0
    paired = [r["eager"] / r["default"] for p in timing.processes for r in p.rounds]
    assert analyse(ln_gelu_session).comparisons["default"].speedup.median == pytest.approx(float(np.median(paired)))
    table = analyse(ln_gelu_session).summary
    assert list(table["mode"]) == ["eager", "default", "reduce-overhead"]
    # A real CPU measurement on a shared machine may land either side of the call; the words must follow it.
    called = analyse(ln_gelu_session).comparisons["default"].verdict
    opening = "default shows no clear difference" if called == "no clear difference" else "default is "
    assert analyse(ln_gelu_session).verdict.startswith(opening)


def test_reduce_overhead_is_not_applicable_on_the_cpu(ln_gelu_session: Session) -> None:
    run = ln_gelu_session.run("reduce-overhead")
    assert run.status == "not_applicable" and "CUDA graphs" in run.error and run.latency is None


def test_session_file_round_trip(ln_gelu_session: Session, tmp_path: Path) -> None:
    assert Session.load(ln_gelu_session.save(tmp_path / "s.json.gz")) == ln_gelu_session


def test_graph_break_is_explained_and_shown(worker: Worker) -> None:
    session = run_session(small("graph_break", modes=("eager", "default")), worker=worker)
    run = session.run("default")
    assert run.graph_count == 2
    (brk,) = run.graph_breaks
    assert "item()" in brk.reason and "zoo.py" in brk.user_frame and ".item()" in brk.user_frame
    ops = run.cpu_op_frame()
    graphs = ops[(ops.iteration == 0) & ops.name.str.startswith("## Call CompiledFxGraph")]
    assert len(graphs) == 2
    assert iteration_kernels(run).graph.nunique() == 2


def test_custom_op_splits_fusion(worker: Worker) -> None:
    session = run_session(small("custom_op", modes=("eager", "default")), worker=worker)
    default = iteration_kernels(session.run("default"))
    assert (default.kernel_class == "cpp_fused").sum() >= 2  # one kernel each side of the opaque op


def test_train_pass(worker: Worker) -> None:
    session = run_session(small("mlp", modes=("eager", "default"), pass_="train"), worker=worker)
    eager, default = session.run("eager"), session.run("default")
    assert eager.ok and default.ok
    assert eager.summary.kernels_per_iteration > 5  # the backward's kernels too


def test_no_dynamo_state_leaks_between_configurations(worker: Worker) -> None:
    first = run_session(small("linear_ln_gelu", modes=("eager", "default")), worker=worker)
    second = run_session(small("linear_ln_gelu", modes=("eager", "default"), batch=12), worker=worker)
    assert first.run("default").recompiles == 0 and second.run("default").recompiles == 0


def test_a_crash_is_an_error_in_the_session_not_a_dead_caller() -> None:
    with Worker() as worker:
        session = run_session(small("tests.models_for_tests:crash", modes=("eager", "default")), worker=worker)
        assert [r.status for r in session.runs] == ["error", "error"]
        assert "died" in session.runs[0].error
        healthy = run_session(small("tests.models_for_tests:tiny_mlp", modes=("eager",)), worker=worker)
        assert healthy.runs[0].ok


def test_a_hang_is_stopped_at_the_time_limit() -> None:
    with Worker() as worker:
        session = run_session(small("tests.models_for_tests:hang", modes=("eager",), timeout_s=8), worker=worker)
        assert session.runs[0].status == "error" and "longer than its limit" in session.runs[0].error
        assert not worker.alive


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (RunConfig(model="mlp", dim=16384, batch=65536, device="cpu"), "GiB free"),
        (RunConfig(model="nope", device="cpu"), "unknown model"),
        (RunConfig(model="mlp", batch=0, device="cpu"), "positive"),
        (RunConfig(model="mlp", dim=10**6, device="cpu"), "bound"),
        (RunConfig(model="mlp", device="tpu"), "device"),
        (RunConfig(model="mlp", modes=("fast",), device="cpu"), "unknown mode"),
        (RunConfig(model="no_such_pkg.mod:factory", device="cpu"), "cannot load"),
    ],
)
def test_refusals_say_what_to_change(config: RunConfig, message: str, worker: Worker) -> None:
    with pytest.raises(ConfigError, match=message):
        run_session(config, worker=worker)


def test_cli_run_then_inspect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["run", "--model", "pointwise_chain", "--dim", "64", "--batch", "16", "--device", "cpu",
                 "--modes", "eager,default", "--rounds", "3", "--processes", "1", "--no-memory",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "session written" in printed and "pointwise_chain" not in printed.splitlines()[0]
    assert main(["inspect", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    eager, default = report["runs"]
    assert eager["kernels_per_iteration"] > default["kernels_per_iteration"]
    assert default["kernels"][0]["class"] == "cpp_fused" and eager["gpu_busy_fraction"] is None
    assert eager["memory"] is None and default["memory"] is None  # --no-memory


def test_a_timing_process_reuses_the_captures_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The timing processes compile with the capture's Inductor settings (its provenance tracking is part of the
    FX-graph cache's key), so each finds the capture's graph in the cache instead of compiling it again."""
    from torch._dynamo.utils import counters

    from fusionviz.measure.capture import run_mode
    from fusionviz.measure.timing import time_modes

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))  # empty: the capture must compile
    config = small("mlp", modes=("default",), rounds=1)
    captured = run_mode(config, "default", lambda _: None)
    assert captured.compile is not None and captured.compile.fx_cache_misses >= 1
    time_modes(config, ["default"], 0, lambda _: None)
    assert counters["inductor"]["fxgraph_cache_hit"] >= 1
    assert counters["inductor"].get("fxgraph_cache_miss", 0) == 0
