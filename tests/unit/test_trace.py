"""The trace reader on hand-made minimal traces, expected values written as arithmetic."""

from typing import Any

import pytest

from fusionviz.errors import TraceError
from fusionviz.records.trace import idle_gaps, parse_trace


def ev(name: str, cat: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": args}


def gpu_trace() -> dict[str, Any]:
    return {"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("aten::addmm", "cpu_op", 10, 20, **{"External id": 1, "Input Dims": [[4], [2, 4], [4, 4]]}),
        ev("cudaLaunchKernel", "cuda_runtime", 15, 5, correlation=11, **{"External id": 1}),
        ev("nvjet_tst_gemm", "kernel", 30, 10, tid=7, correlation=11, stream=7, grid=[1, 2, 3], block=[128, 1, 1],
           **{"External id": 1}),
        ev("triton_poi_fused_relu_0", "cpu_op", 40, 10, kernel_file="/cache/k.py", **{"External id": 2}),
        ev("cuLaunchKernel", "cuda_driver", 42, 5, correlation=12, **{"External id": 2}),
        ev("triton_poi_fused_relu_0", "kernel", 60, 20, tid=7, correlation=12, stream=7, **{"External id": 2}),
        ev("ProfilerStep#2", "user_annotation", 100, 100),
        ev("cudaGraphLaunch", "cuda_runtime", 110, 5, correlation=21),
        ev("graph_kernel_a", "kernel", 120, 10, tid=7, correlation=21, stream=7),
        ev("graph_kernel_b", "kernel", 140, 10, tid=7, correlation=21, stream=7),
        ev("cudaLaunchKernel", "cuda_runtime", 190, 5, correlation=22),
        ev("late_kernel", "kernel", 195, 15, tid=7, correlation=22, stream=7),
    ]}


def test_gpu_kernels_belong_to_the_step_that_launched_them() -> None:
    parsed = parse_trace(gpu_trace())
    k = parsed.kernels
    assert parsed.device_kind == "cuda"
    assert list(k.iteration) == [0, 0, 1, 1, 1]
    assert list(k.start_us) == [30, 60, 120 - 100, 140 - 100, 195 - 100]
    gemm = k.iloc[0]
    assert (gemm.kernel_class, gemm.launch_op, gemm.grid, gemm.block, gemm.stream) == (
        "gemm", "aten::addmm", "1,2,3", "128,1,1", 7)
    assert gemm.input_shapes == "[[4], [2, 4], [4, 4]]"
    relu = k.iloc[1]
    assert (relu.kernel_class, relu.fused_ops, relu.source_file) == ("triton_pointwise", ["relu"], "/cache/k.py")
    assert k.iloc[2].launch_op == "cudaGraphLaunch"
    assert parsed.kernel_files == {"triton_poi_fused_relu_0": "/cache/k.py"}


def test_gpu_summary_arithmetic() -> None:
    s = parse_trace(gpu_trace()).summary
    assert s.iterations == 2
    assert s.kernels_per_iteration == 5 / 2
    assert s.launches_per_iteration == (2 + 2) / 2
    # iteration 0: kernels cover 10 + 20 µs of a 100 µs span; iteration 1: 10 + 10 + 15 µs of 110 µs
    # (its last kernel ends 10 µs after the step).
    assert s.kernel_time_us == pytest.approx((30 + 35) / 2)
    assert s.span_us == pytest.approx((100 + 110) / 2)
    assert s.busy_fraction == pytest.approx(32.5 / 105)
    assert s.largest_gap_us == 95 - 50  # iteration 1: from graph_kernel_b's end to late_kernel's start


def test_idle_gaps() -> None:
    k = parse_trace(gpu_trace()).kernels
    assert idle_gaps(k, 0) == [(0, 30), (40, 20)]


def cpu_trace() -> dict[str, Any]:
    return {"traceEvents": [
        ev("ProfilerStep#5", "user_annotation", 0, 100),
        ev("Torch-Compiled Region: 0/0", "cpu_op", 5, 90),
        ev("## Call CompiledFxGraph abc ##", "user_annotation", 10, 80),
        ev("aten::addmm", "cpu_op", 20, 20),
        ev("aten::copy_", "cpu_op", 22, 3),
        ev("aten::empty_strided", "cpu_op", 41, 1),
        ev("graph_0_cpp_fused_relu_0", "cpu_op", 50, 10),
        ev("aten::t", "cpu_op", 96, 1),
    ]}


def test_cpu_kernels_are_top_level_compute_calls() -> None:
    parsed = parse_trace(cpu_trace())
    k = parsed.kernels
    assert parsed.device_kind == "cpu"
    assert list(k.name) == ["aten::addmm", "cpp_fused_relu_0"]  # the copy inside addmm is not a kernel
    assert list(k.kernel_class) == ["gemm", "cpp_fused"]
    assert list(k.graph) == ["abc", "abc"]
    assert k.iloc[1].fused_ops == ["relu"]
    assert parsed.summary.busy_fraction == pytest.approx((20 + 10) / 100)
    assert parsed.summary.launches_per_iteration is None
    regions = parsed.cpu_ops[parsed.cpu_ops.category == "region"]
    assert list(regions.name) == ["Torch-Compiled Region: 0/0", "## Call CompiledFxGraph abc ##"]


def test_trace_without_steps_is_one_iteration() -> None:
    events = [e for e in gpu_trace()["traceEvents"] if not e["name"].startswith("ProfilerStep")]
    s = parse_trace({"traceEvents": events}).summary
    assert (s.iterations, s.kernels_per_iteration) == (1, 5)


@pytest.mark.parametrize("data", [{"foo": 1}, [], {"traceEvents": [ev("x", "python_thing", 0, 1)]}, "text"])
def test_not_a_trace(data: Any) -> None:
    with pytest.raises(TraceError):
        parse_trace(data)
