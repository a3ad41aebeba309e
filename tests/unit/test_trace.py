"""The trace reader on hand-made minimal traces, expected values written as arithmetic."""

import gzip
import json
from typing import Any

import pytest

from fusionviz.analysis.sentences import trace_notes
from fusionviz.analysis.trace_stats import BusyTime, busy_time
from fusionviz.errors import ConfigError, TraceError
from fusionviz.records.session import ModeRun
from fusionviz.records.trace import ParsedTrace, parse_trace
from tests.synthetic import encoded
from tests.synthetic import gpu_trace as gpu_trace_of


def ev(name: str, cat: str, ts: float, dur: float, tid: int = 1, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": 1, "tid": tid, "args": args}


def busy(parsed: ParsedTrace) -> BusyTime:
    """Busy and idle time of a trace, as analysis computes them on load."""
    return busy_time(ModeRun(mode="trace", kernels=parsed.kernel_rows, summary=parsed.summary))


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
    parsed = parse_trace(gpu_trace())
    s = parsed.summary
    assert s.iterations == 2
    assert s.kernels_per_iteration == 5 / 2
    assert s.launches_per_iteration == (2 + 2) / 2
    # iteration 0: kernels cover 10 + 20 µs of a 100 µs span; iteration 1: 10 + 10 + 15 µs of 110 µs
    # (its last kernel ends 10 µs after the step).
    b = busy(parsed)
    assert b.kernel_time_us == pytest.approx((30 + 35) / 2)
    assert b.span_us == pytest.approx((100 + 110) / 2)
    assert b.busy_fraction == pytest.approx(32.5 / 105)
    assert b.largest_gap_us == 95 - 50  # iteration 1: from graph_kernel_b's end to late_kernel's start


def test_idle_gaps() -> None:
    assert busy(parse_trace(gpu_trace())).gaps[0] == ((0, 30), (40, 20))


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
    assert busy(parsed).busy_fraction == pytest.approx((20 + 10) / 100)
    assert parsed.summary.launches_per_iteration is None
    regions = parsed.cpu_ops[parsed.cpu_ops.category == "region"]
    assert list(regions.name) == ["Torch-Compiled Region: 0/0", "## Call CompiledFxGraph abc ##"]


def test_a_cpp_kernel_without_a_descriptive_name_is_a_kernel() -> None:
    """With Inductor's descriptive names off the C++ kernel is `cpp__0` (`graph_0_cpp__0` in the profiler)."""
    trace = cpu_trace()
    trace["traceEvents"][6] = ev("graph_0_cpp__0", "cpu_op", 50, 10)
    k = parse_trace(trace).kernels
    assert list(k.name) == ["aten::addmm", "cpp__0"] and list(k.kernel_class) == ["gemm", "cpp_fused"]
    assert k.iloc[1].fused_ops == []


def test_a_frozen_convolution_of_onednn_is_a_cpu_kernel() -> None:
    """Under freezing Inductor calls oneDNN's convolution (`mkldnn::_convolution_pointwise`) in place of ATen's:
    it is a compute call, its own allocations inside it are not (default+freezing on conv_block had lost its
    convolution: 3 kernels, 178 µs, against default's 3 in 820 µs)."""
    trace = cpu_trace()
    trace["traceEvents"][3] = ev("mkldnn::_convolution_pointwise", "cpu_op", 20, 20)
    k = parse_trace(trace).kernels
    assert list(k.name) == ["mkldnn::_convolution_pointwise", "cpp_fused_relu_0"]
    assert k.iloc[0].fused_ops == ["convolution_pointwise"] and k.iloc[0].dur_us == 20


def test_trace_without_steps_is_one_iteration() -> None:
    events = [e for e in gpu_trace()["traceEvents"] if not e["name"].startswith("ProfilerStep")]
    s = parse_trace({"traceEvents": events}).summary
    assert (s.iterations, s.kernels_per_iteration) == (1, 5)


@pytest.mark.parametrize("data", [{"foo": 1}, [], {"traceEvents": [ev("x", "python_thing", 0, 1)]}, "text"])
def test_not_a_trace(data: Any) -> None:
    with pytest.raises(TraceError):
        parse_trace(data)


def test_trace_without_steps_says_it_is_the_whole_trace() -> None:
    events = [e for e in gpu_trace()["traceEvents"] if not e["name"].startswith("ProfilerStep")]
    s = parse_trace({"traceEvents": events}).summary
    assert (s.iterations_from, s.region_calls) == ("trace", 0)


def replay_trace() -> dict[str, Any]:
    """reduce-overhead, three steps: each copies its input (one kernel), then replays a CUDA graph of two
    kernels. A replay launched before the steps (by the profiler's warm-up step, whose CPU events the trace
    drops) is still running when step 1 starts; an eager kernel is launched after the last step."""
    events = [
        ev("graph_kernel_a", "kernel", 2, 10, tid=7, correlation=1, stream=7),  # its cudaGraphLaunch: not here
        ev("graph_kernel_b", "kernel", 14, 10, tid=7, correlation=1, stream=7),
        ev("cudaLaunchKernel", "cuda_runtime", 305, 2, correlation=300),
        ev("late_kernel", "kernel", 310, 5, tid=7, correlation=300, stream=7),
    ]
    for step in range(3):
        t0 = 100 * step
        events += [
            ev(f"ProfilerStep#{step + 1}", "user_annotation", t0, 100),
            ev("aten::_foreach_copy_", "cpu_op", t0 + 5, 10, **{"External id": 10 + step}),
            ev("cudaLaunchKernel", "cuda_runtime", t0 + 6, 2, correlation=100 + step, **{"External id": 10 + step}),
            ev("void at::native::multi_tensor_apply_kernel<>()", "kernel", t0 + 30, 5, tid=7,
               correlation=100 + step, stream=7, **{"External id": 10 + step}),
            ev("cudaGraphLaunch", "cuda_runtime", t0 + 20, 5, correlation=200 + step),
            ev("graph_kernel_a", "kernel", t0 + 40, 10, tid=7, correlation=200 + step, stream=7),
            ev("graph_kernel_b", "kernel", t0 + 55, 10, tid=7, correlation=200 + step, stream=7),
        ]
    return {"traceEvents": events}


def test_kernels_launched_outside_every_step_belong_to_none() -> None:
    parsed = parse_trace(replay_trace())
    s = parsed.summary
    # 1 input copy + 2 replayed kernels per step; by timestamps it would be (3 * 3 + 2) / 3.
    assert s.kernels_per_iteration == 1 + 2
    assert parsed.kernels.groupby("iteration").size().tolist() == [3, 3, 3]
    assert (s.excluded_kernels, s.excluded_memory_ops, s.placed_by_time) == (2 + 1, 0, False)
    first = parsed.kernels[parsed.kernels.iteration == 0]
    assert list(first.name) == ["void at::native::multi_tensor_apply_kernel<>()", "graph_kernel_a", "graph_kernel_b"]
    assert list(first.kernel_class) == ["copy", "other", "other"]
    assert busy(parsed).busy_fraction == pytest.approx((5 + 10 + 10) / 100)


def memory_trace() -> dict[str, Any]:
    """One step: a host-to-device copy and a memset (device memory operations), then one GEMM."""
    return {"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("aten::copy_", "cpu_op", 5, 10, **{"External id": 1}),
        ev("cudaMemcpyAsync", "cuda_runtime", 6, 3, correlation=11, **{"External id": 1}),
        ev("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 20, 10, tid=7, correlation=11, stream=7),
        ev("aten::zero_", "cpu_op", 16, 5, **{"External id": 2}),
        ev("cudaMemsetAsync", "cuda_runtime", 17, 2, correlation=12, **{"External id": 2}),
        ev("Memset (Device)", "gpu_memset", 32, 4, tid=7, correlation=12, stream=7),
        ev("aten::mm", "cpu_op", 22, 10, **{"External id": 3}),
        ev("cudaLaunchKernel", "cuda_runtime", 23, 3, correlation=13, **{"External id": 3}),
        ev("nvjet_tst_128x64_64x8_2x1_v_bz_coopA_NTN", "kernel", 40, 20, tid=7, correlation=13, stream=7),
    ]}


def test_memory_operations_are_counted_apart_from_kernels() -> None:
    parsed = parse_trace(memory_trace())
    s = parsed.summary
    assert list(parsed.kernels.kernel_class) == ["memory", "memory", "gemm"]
    assert (s.kernels_per_iteration, s.memory_ops_per_iteration) == (1, 2)
    assert s.launches_per_iteration == 3  # the copy and the memset are launched too
    assert busy(parsed).busy_fraction == pytest.approx(20 / 100)  # kernel time only
    assert busy(parsed).gaps[0] == ((0, 40),)  # a Memcpy alone leaves the GPU's compute idle
    assert parsed.kernels.fused_ops.tolist()[:2] == [[], []]


def calls_trace() -> dict[str, Any]:
    """No ProfilerStep: three calls of one compiled region (a graph call, a GEMM and a Triton kernel each), with
    an eager host-to-device copy between the first two."""
    events = [ev("cudaMemcpyAsync", "cuda_runtime", 105, 2, correlation=99),
              ev("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy", 108, 5, tid=7, correlation=99, stream=7)]
    for call in range(3):
        t0 = 200 * call
        events += [
            ev("Torch-Compiled Region: 0/0", "cpu_op", t0, 100),
            ev("## Call CompiledFxGraph abc ##", "user_annotation", t0 + 10, 80),
            ev("aten::mm", "cpu_op", t0 + 20, 10, **{"External id": 10 + call}),
            ev("cudaLaunchKernel", "cuda_runtime", t0 + 21, 2, correlation=10 + call, **{"External id": 10 + call}),
            ev("nvjet_tst_128x64_64x8_2x1_v_bz_coopA_NTN", "kernel", t0 + 30, 20, tid=7, correlation=10 + call,
               stream=7),
            ev("triton_poi_fused_relu_0", "cpu_op", t0 + 40, 10, **{"External id": 20 + call}),
            ev("cuLaunchKernel", "cuda_driver", t0 + 41, 2, correlation=20 + call, **{"External id": 20 + call}),
            ev("triton_poi_fused_relu_0", "kernel", t0 + 55, 10, tid=7, correlation=20 + call, stream=7),
        ]
    return {"traceEvents": events}


def test_repeated_calls_without_steps_are_one_window_that_offers_calls() -> None:
    s = parse_trace(calls_trace()).summary
    assert (s.iterations, s.iterations_from, s.region_calls) == (1, "trace", 3)
    assert (s.kernels_per_iteration, s.memory_ops_per_iteration) == (3 * 2, 1)


def test_each_call_as_an_iteration() -> None:
    parsed = parse_trace(calls_trace(), iterations="calls")
    s = parsed.summary
    assert (s.iterations, s.iterations_from, s.kernels_per_iteration) == (3, "calls", 2)
    assert parsed.kernels.groupby("iteration").size().tolist() == [2, 2, 2]
    assert list(parsed.kernels.start_us[parsed.kernels.iteration == 1]) == [30, 55]  # from the call's start
    assert (s.excluded_kernels, s.excluded_memory_ops) == (0, 1)  # the copy between the calls


def test_per_call_iterations_need_a_trace_without_steps_and_with_calls() -> None:
    with pytest.raises(ConfigError, match="ProfilerSteps"):
        parse_trace(gpu_trace(), iterations="calls")
    events = [e for e in gpu_trace()["traceEvents"] if not e["name"].startswith("ProfilerStep")]
    with pytest.raises(ConfigError, match="no call of a compiled region"):
        parse_trace({"traceEvents": events}, iterations="calls")


def test_without_correlation_data_device_events_are_placed_by_time() -> None:
    parsed = parse_trace({"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("ProfilerStep#2", "user_annotation", 100, 100),
        ev("aten::relu", "cpu_op", 10, 10),
        ev("void at::native::vectorized_elementwise_kernel<4>()", "kernel", 50, 5, tid=7, stream=7),
        ev("void at::native::vectorized_elementwise_kernel<4>()", "kernel", 150, 5, tid=7, stream=7),
    ]})
    assert list(parsed.kernels.iteration) == [0, 1]
    assert parsed.summary.placed_by_time and parsed.summary.excluded_kernels == 0


def test_stream_zero_is_a_stream() -> None:
    parsed = parse_trace({"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("cudaLaunchKernel", "cuda_runtime", 5, 2, correlation=1),
        ev("Cijk_Ailk_Bljk_SB_MT64x64x16_SN", "kernel", 10, 5, tid=0, correlation=1, stream=0),
    ]})
    assert parsed.kernels.stream.tolist() == [0]


# A ROCm 6.2 Kineto trace writes stream ids as hex text, on runtime calls (`hipMemcpyWithStream`) and device
# events alike; read as their integers, counted in a note, never a refusal of the file.
def test_rocm_hex_streams_are_read_as_integers() -> None:
    parsed = parse_trace(encoded({"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("aten::copy_", "cpu_op", 5, 30, **{"External id": 3}),
        ev("hipMemcpyWithStream", "cuda_runtime", 10, 8, correlation=1, stream="0x0", **{"External id": 3}),
        ev("Memcpy HtoD (Host -> Device)", "gpu_memcpy", 20, 4, tid=2, correlation=1, stream="0x0"),
        ev("hipLaunchKernel", "cuda_runtime", 40, 5, correlation=2),
        ev("Cijk_Ailk_Bljk_SB_MT64x64x16_SN", "kernel", 50, 10, tid=2, correlation=2, stream="0x1f"),
    ]}))
    assert parsed.kernels.stream.tolist() == [0, 31]
    assert list(parsed.kernels.kernel_class) == ["memory", "gemm"]
    assert parsed.summary.display_as_given == {"stream": 2}
    assert any("2 stream" in note for note in trace_notes(parsed.summary))


# Triton's own profiler writes the launch grid as text (`"grid": "grid(100,)"`): shown as given, and counted.
def test_a_triton_grid_given_as_text_is_shown_as_given() -> None:
    parsed = parse_trace(encoded({"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("triton_poi_fused_add_0", "cpu_op", 5, 10, **{"External id": 4, "Input Dims": "[100]"}),
        ev("cuLaunchKernel", "cuda_driver", 6, 3, correlation=9, **{"External id": 4}),
        ev("triton_poi_fused_add_0", "kernel", 20, 5, tid=7, correlation=9, stream=7, grid="grid(100,)",
           block=[128, 1, 1], **{"External id": 4}),
    ]}, gz=False))
    (row,) = parsed.kernel_rows
    assert (row.grid, row.block, row.input_shapes) == ("grid(100,)", "128,1,1", "[100]")
    assert parsed.summary.display_as_given == {"grid": 1, "Input Dims": 1}
    assert any("1 grid, 1 Input Dims" in note for note in trace_notes(parsed.summary))


def test_numbers_the_analysis_computes_with_stay_strict() -> None:
    for field, value in (("ts", "12"), ("dur", [1]), ("correlation", "0x1")):
        event = ev("k", "kernel", 20, 5, tid=7, correlation=9, stream=7)
        (event["args"] if field == "correlation" else event)[field] = value
        with pytest.raises(TraceError, match=f"event 1 \\(k\\) has .*{field}"):
            parse_trace(encoded({"traceEvents": [ev("ProfilerStep#1", "user_annotation", 0, 100), event]}))


# A torch 1.x trace (2020–2022): capitalised categories, `external id`, the kernel's stream in its thread name,
# no schemaVersion. Shape and names from the TensorBoard plugin's test_all_categories
# (pytorch/kineto, tb_plugin/test/test_profiler.py).
LEGACY_TRACE = [
    ev("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "Operator", 100, 180, tid="123",
       **{"Input Dims": [], "External id": 2}),
    ev("aten::to", "Operator", 200, 60, tid="123", **{"Input Dims": [[2, 8, 5]], "External id": 3}),
    ev("aten::nll_loss_backward", "Operator", 340, 70, tid="456", **{"Input Dims": [[], [32, 1000]], "External id": 4}),
    ev("ProfilerStep#1", "Operator", 50, 400, tid="123", **{"External id": 1}),
    ev("Memcpy HtoD (Pageable -> Device)", "Memcpy", 405, 10, tid="stream 7",
       stream=7, correlation=334, **{"external id": 4}),
    ev("cudaMemcpyAsync", "Runtime", 360, 20, tid="456", correlation=334, **{"external id": 4}),
    ev("Memset (Device)", "Memset", 420, 5, tid="stream 7", stream=7, correlation=40344, **{"external id": 4}),
    ev("cudaMemsetAsync", "Runtime", 390, 10, tid="456", correlation=40344, **{"external id": 4}),
    ev("void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", "Kernel", 430, 15, tid="stream 7",
       correlation=40348, device=0, **{"external id": 4}),
    ev("cudaLaunchKernel", "Runtime", 405, 5, tid="456", correlation=40348, **{"external id": 4}),
]


def test_a_torch_1_trace_reads_like_todays() -> None:
    parsed = parse_trace(LEGACY_TRACE)
    s = parsed.summary
    assert parsed.device_kind == "cuda"
    assert (s.iterations, s.kernels_per_iteration, s.memory_ops_per_iteration, s.launches_per_iteration) == (
        1, 1, 2, 3)
    kernel = parsed.kernels[parsed.kernels.kernel_class != "memory"].iloc[0]
    assert (kernel.kernel_class, kernel.launch_op, kernel.stream, kernel.start_us) == (
        "aten", "aten::nll_loss_backward", 7, 430 - 50)
    assert kernel.fused_ops == ["nll_loss_backward"]


def test_a_range_profiler_capture_says_what_it_holds() -> None:
    # HTA's tests/data/cupti_profiler trace: `cuda_profiler_range` events named by kernel (`fft2d_r2c_32x32`),
    # linked to their op by External id, and no `kernel` events.
    parsed = parse_trace({"traceEvents": [
        ev("ProfilerStep#1", "user_annotation", 0, 100),
        ev("aten::conv2d", "cpu_op", 10, 50, **{"External id": 5}),
        ev("void fft2d_r2c_32x32<float, false, 1u, true>(float2*, float const*)", "cuda_profiler_range", 20, 0,
           **{"External id": 5, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 86114304}),
        ev("void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*)", "cuda_profiler_range", 30, 0,
           **{"External id": 5}),
    ]})
    assert parsed.device_kind == "cpu"
    assert list(parsed.kernels.name) == ["aten::conv2d"]
    note = parsed.summary.device_note
    assert note.startswith("This file is a CUPTI range-profiler capture: its 2 `cuda_profiler_range` events")
    assert "CPU side only" in note


def test_another_accelerators_device_events_are_named() -> None:
    # An MTIA trace (HTA's tests/data/mtia_trace_single_rank): device kernels are `mtia_ccp_events`.
    parsed = parse_trace({"traceEvents": [
        ev("aten::mul", "cpu_op", 0, 50, **{"External id": 5}),
        ev("customized_fba_mul_const-dtype_Float", "mtia_ccp_events", 20, 10, **{"External id": 5}),
    ]})
    assert parsed.device_kind == "cpu"
    assert "recorded as 1 `mtia_ccp_events` events, which fusionviz does not read" in parsed.summary.device_note
    assert parse_trace(cpu_trace()).summary.device_note == ""


def test_what_a_non_trace_holds_is_named() -> None:
    with pytest.raises(TraceError, match="its categories: python_thing"):
        parse_trace({"traceEvents": [ev("x", "python_thing", 0, 1)]})


@pytest.mark.parametrize("indent", [None, 2])
def test_a_trace_read_in_batches_as_it_inflates_reads_as_its_values(indent: int | None) -> None:
    # 2.6 MB of JSON: several batches cut between events, compact and indented as Kineto writes it; a flow
    # event and a metadata event among them, and keys after the events
    trace = gpu_trace_of(1500)
    trace["traceEvents"][3:3] = [{"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 3, "cat": "ac2g", "name": "ac2g"},
                                 {"name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": 1,
                                  "args": {"name": "python"}}]
    trace["traceName"] = "/tmp/t.json"
    raw = gzip.compress(json.dumps(trace, indent=indent).encode(), mtime=0)
    assert len(gzip.decompress(raw)) > 2 << 20
    streamed, loaded = parse_trace(raw), parse_trace(trace)
    assert streamed.kernel_rows == loaded.kernel_rows and len(streamed.kernel_rows) == 1500 * 3
    assert (streamed.cpu_op_rows, streamed.summary) == (loaded.cpu_op_rows, loaded.summary)


@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gzipped"])
def test_a_string_that_is_not_utf8_is_refused_as_not_json(zipped: bool) -> None:
    """msgspec raises UnicodeDecodeError, not its DecodeError, for such bytes (found by the fuzz suite)."""
    from fusionviz.errors import SessionFileError
    from fusionviz.records.files import open_file

    raw = b'{"traceEvents": [], "kind": "\xff\xfe"}'
    with pytest.raises(SessionFileError, match="not JSON"):
        open_file(gzip.compress(raw) if zipped else raw, "odd.json")


def test_a_streamed_trace_with_bytes_that_are_not_utf8_is_refused_as_not_json() -> None:
    from fusionviz.errors import SessionFileError
    from fusionviz.records.files import open_file

    raw = b'{"traceEvents": [{"ph": "X", "name": "\xff", "ts": 1, "dur": 1}, {"ph": "X"}], "kind": 1}'
    with pytest.raises(SessionFileError, match="not UTF-8"):
        open_file(gzip.compress(raw), "odd.json.gz")
