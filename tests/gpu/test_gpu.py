"""On the GPU machine: the fusion facts the tool must show (skipped without CUDA)."""

import pytest

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.analysis.timing import latency_estimates
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Session

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def ln_gelu_gpu(worker: Worker) -> Session:
    config = RunConfig(model="linear_ln_gelu", dim=512, batch=256, device="cuda:0",
                       modes=("eager", "default", "reduce-overhead"), rounds=5)
    return run_session(config, worker=worker)


def test_eager_runs_layer_norm_and_gelu_as_separate_kernels(ln_gelu_gpu: Session) -> None:
    eager = iteration_kernels(ln_gelu_gpu.run("eager"))
    ops = [op for ops in eager.fused_ops for op in ops]
    assert "native_layer_norm" in ops and "gelu" in ops
    assert (eager.kernel_class == "gemm").sum() == 1
    assert len(eager) == 3


def test_default_fuses_layer_norm_and_gelu_into_one_triton_kernel(ln_gelu_gpu: Session) -> None:
    default = iteration_kernels(ln_gelu_gpu.run("default"))
    fused = default[default.fused_ops.map(lambda ops: {"gelu", "native_layer_norm"} <= set(ops))]
    assert len(fused) == 1
    assert fused.iloc[0].kernel_class == "triton_reduction"
    assert fused.iloc[0]["name"] in ln_gelu_gpu.run("default").kernel_sources
    assert len(default) == 2


def test_reduce_overhead_replays_a_cuda_graph_with_an_input_copy(ln_gelu_gpu: Session) -> None:
    ro = ln_gelu_gpu.run("reduce-overhead")
    kernels = iteration_kernels(ro)
    assert ro.ok and (kernels.kernel_class == "copy").any()
    # The graph's kernels replay from one cudaGraphLaunch: fewer launch calls than kernels.
    assert ro.summary.launches_per_iteration < ro.summary.kernels_per_iteration


def test_timings_are_cuda_events(ln_gelu_gpu: Session) -> None:
    assert ln_gelu_gpu.timing.timer == "cuda_events"
    for process in ln_gelu_gpu.timing.processes:
        assert process.error is None and process.pinned_cpu is not None  # the launching thread was pinned
    cores = [p.pinned_cpu for p in ln_gelu_gpu.timing.processes]
    assert len(set(cores)) == len(cores)  # each on a core of its own, so that they warmed side by side
    for lat in latency_estimates(ln_gelu_gpu).values():
        assert lat.low <= lat.median <= lat.high and lat.processes == 3
    assert ln_gelu_gpu.environment.device_kind == "cuda" and ln_gelu_gpu.environment.cuda_version


def test_mlp_fp32_default_splits_the_bias_from_the_gemm(worker: Worker) -> None:
    config = RunConfig(model="mlp", dim=512, batch=256, device="cuda:0", modes=("eager", "default"), rounds=5,
                       processes=1)
    session = run_session(config, worker=worker)
    eager, default = (iteration_kernels(session.run(m)) for m in ("eager", "default"))
    assert (eager.kernel_class == "gemm").sum() == 3
    # Inductor calls cuBLAS without the bias (mm), then adds bias and ReLU in a Triton kernel.
    assert (default.kernel_class == "gemm").sum() >= 3
    assert default.fused_ops.map(lambda ops: ops == ["addmm", "relu"]).sum() == 2
    assert len(default) > len(eager)
