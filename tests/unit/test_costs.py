"""Bytes and FLOPs per kernel on hand-made traces and wrappers, the expected values written as arithmetic."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import msgspec
import pytest

from fusionviz.analysis.inductor_buffers import kernel_calls
from fusionviz.analysis.kernel_costs import (
    Achieved,
    achieved,
    attainable_tflops,
    compute_dtype,
    intensity,
    memory_roof,
    memory_roofs,
    run_costs,
    session_costs,
)
from fusionviz.analysis.op_costs import Cost, op_cost, op_kind
from fusionviz.records.ceilings import CacheCeiling, Ceilings
from fusionviz.records.kernels import KernelRow
from fusionviz.records.session import ModeRun
from fusionviz.records.trace import parse_trace
from tests.unit.factories import k, session

M, K, N = 256, 512, 1024  # x [M, K] @ W [K, N] + b [N], fp32


def test_gemm_from_shapes() -> None:
    cost = op_cost("aten::addmm", [[N], [M, K], [K, N], [], []], ["float", "float", "float", "Scalar", "Scalar"],
                   ["", "", "", "1", "1"])
    assert cost == Cost(read=4 * (N + M * K + K * N), written=4 * M * N, total=4 * (N + M * K + K * N + M * N),
                        flop=2 * M * K * N, source="shapes")
    # the out= tensor Inductor passes to extern_kernels.addmm is not a read
    with_out = op_cost("aten::addmm", [[N], [M, K], [K, N], [], [], [M, N]],
                       ["float", "float", "float", "Scalar", "Scalar", "float"], [])
    assert with_out == cost
    linear = op_cost("aten::linear", [[8, M, K], [N, K], [N]], ["c10::BFloat16"] * 3, [])
    assert linear is not None and linear.flop == 2 * 8 * M * K * N and linear.written == 2 * 8 * M * N
    bmm = op_cost("aten::bmm", [[4, M, K], [4, K, N]], ["float", "float"], [])
    assert bmm is not None and bmm.flop == 2 * 4 * M * K * N and bmm.read == 4 * 4 * (M * K + K * N)


def test_elementwise_reduction_norm_copy() -> None:
    x = [M, K]
    assert op_cost("aten::add", [x, [K], []], ["float", "float", "Scalar"], []) == Cost(
        4 * (M * K + K), 4 * M * K, 4 * (2 * M * K + K), None, "shapes")
    # a Python number arrives as a 0-dim double: read, but it does not make the result a double
    half = op_cost("aten::mul", [x, []], ["c10::BFloat16", "double"], [])
    assert half is not None and half.read == 2 * M * K + 8 and half.written == 2 * M * K
    assert op_cost("aten::gt", [x, x], ["float", "float"], []).written == M * K  # type: ignore[union-attr]
    relu_ = op_cost("aten::relu_", [x], ["float"], [])
    assert relu_ is not None and (relu_.read, relu_.written) == (4 * M * K, 4 * M * K)
    assert op_cost("aten::sum", [x, [], [], []], ["float", "ScalarList", "Scalar", ""], ["", "[1]", "False", ""]
                   ) == Cost(4 * M * K, 4 * M, 4 * (M * K + M), None, "shapes")
    assert op_cost("aten::mean", [x], ["float"], [""]).written == 4  # type: ignore[union-attr]
    assert op_cost("aten::native_layer_norm", [x, [], [K], [K], []], ["float", "ScalarList", "float", "float",
                   "Scalar"], ["", f"[{K}]", "", "", "1e-05"]) == Cost(4 * (M * K + 2 * K), 4 * M * K,
                                                                       4 * (2 * M * K + 2 * K), None, "shapes")
    assert op_cost("aten::copy_", [x, x, []], ["float", "c10::BFloat16", "Scalar"], []) == Cost(
        2 * M * K, 4 * M * K, 6 * M * K, None, "shapes")
    assert op_cost("aten::cat", [[]], ["TensorList"], []) is None  # the list's tensors are not recorded
    assert op_cost("aten::nonzero", [x], ["float"], []) is None  # no rule: no figure
    assert op_kind("aten::_softmax") == "norm" and op_kind("aten::gelu_") == "elementwise"


def test_convolution_and_attention() -> None:
    # 8 × 16 × 28 × 28 input, 32 filters of 3 × 3, padding 1: the output is 8 × 32 × 28 × 28
    conv = op_cost("aten::convolution", [[8, 16, 28, 28], [32, 16, 3, 3], [32], [], [], [], [], [], []],
                   ["float"] * 3 + ["ScalarList"] * 3 + ["Scalar", "ScalarList", "Scalar"],
                   ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])
    out = 8 * 32 * 28 * 28
    assert conv is not None and conv.flop == 2 * out * 16 * 9 and conv.written == 4 * out
    assert conv.read == 4 * (8 * 16 * 28 * 28 + 32 * 16 * 9 + 32)
    sdpa = op_cost("aten::_scaled_dot_product_flash_attention", [[2, 8, 128, 64]] * 3,
                   ["c10::BFloat16"] * 3, [])
    assert sdpa is not None and sdpa.flop == 2 * 2 * 8 * 128 * 128 * (64 + 64) and sdpa.written == 2 * 2 * 8 * 128 * 64


WRAPPER = """
def call(args):
    arg0_1, arg1_1, arg2_1 = args
    assert_size_stride(arg0_1, (512, 256), (256, 1))
    assert_size_stride(arg1_1, (256, ), (1, ))
    assert_size_stride(arg2_1, (64, 256), (256, 1))
    buf0 = empty_strided_cuda((64, 512), (512, 1), torch.float32)
    extern_kernels.mm(arg2_1, reinterpret_tensor(arg0_1, (256, 512), (1, 256), 0), out=buf0)
    buf1 = buf0; del buf0  # reuse
    triton_poi_fused_addmm_relu_0.run(buf1, arg1_1, 32768, stream=stream0)
    buf2 = empty_strided_cuda((64, 512), (512, 1), torch.bfloat16)
    triton_poi_fused_cast_1.run(reinterpret_tensor(buf1, (64, 512), (512, 1), 0), buf2, 32768, stream=stream0)
    buf3 = empty_strided_cuda((64, 256), (256, 1), torch.float32)
    triton_tem_fused_mm_2.run(arg2_1, arg1_1, buf3, 64, 1, 1, stream=stream0)
    buf4 = empty_strided_cuda((s0, 256), (256, 1), torch.float32)
    triton_poi_fused_cast_1.run(buf3, buf4, 32768, stream=stream0)
    return (buf2, )

def get_args():
    arg0_1 = rand_strided((512, 256), (256, 1), device='cuda:0', dtype=torch.float32)
    arg1_1 = rand_strided((256, ), (1, ), device='cuda:0', dtype=torch.float32)
    arg2_1 = rand_strided((64, 256), (256, 1), device='cuda:0', dtype=torch.float32)
"""
SOURCES = {
    "triton_poi_fused_addmm_relu_0": "def triton_poi_fused_addmm_relu_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK : "
                                     "tl.constexpr):\n    tmp0 = tl.load(in_out_ptr0 + (x2), None)\n",
    "triton_poi_fused_cast_1": "def triton_poi_fused_cast_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n",
    "triton_tem_fused_mm_2": "def triton_tem_fused_mm_2(arg_A, arg_B, out_ptr0):\n",
}


def test_wrapper_buffers() -> None:
    calls = kernel_calls([WRAPPER], SOURCES)
    f32 = 64 * 512 * 4
    # in_out_ptr0 loaded: read and written; the bias read once
    assert calls["triton_poi_fused_addmm_relu_0"] == [Cost(f32 + 256 * 4, f32, 2 * f32 + 1024, None, "inductor")]
    # a view of buf1 read, a bf16 buffer written; the second call's output has a symbolic size: unknown
    assert calls["triton_poi_fused_cast_1"] == [Cost(f32, f32 // 2, f32 + f32 // 2, None, "inductor"), None]
    # a template: 2·M·N·K with K from arg_B (256 elements here, so K = 256 // 256 = 1)
    template = calls["triton_tem_fused_mm_2"][0]
    assert template is not None and template.flop == 2 * 64 * 256 * 1
    store_only = {**SOURCES, "triton_poi_fused_addmm_relu_0": SOURCES["triton_poi_fused_addmm_relu_0"].replace(
        "tl.load(in_out_ptr0", "tl.store(in_out_ptr0")}
    assert kernel_calls([WRAPPER], store_only)["triton_poi_fused_addmm_relu_0"][0] == Cost(
        1024, f32, f32 + 1024, None, "inductor")



SCAN = """
@triton.jit
def _triton_helper_fn_add0(arg0_0, arg1_0):
    tmp0 = arg0_0 + arg1_0
    return tmp0

@triton.jit
def triton_per_fused_arange_cumsum_0(out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    tl.store(out_ptr0 + (r0_1 + 128*x0), tmp3, xmask)
"""


def test_a_scan_kernel_is_read_by_its_own_parameters_not_its_combine_functions() -> None:
    """A cumsum's source defines its combine function before the kernel (GPT-2's position ids): the kernel's
    own `def` names its buffers, so its 4 KB output is counted (it was 0 bytes, read from the helper's)."""
    wrapper = """
        buf5 = empty_strided_cuda((4, 128), (128, 1), torch.int64)
        triton_per_fused_arange_cumsum_0.run(buf5, 4, 128, stream=stream0)
"""
    assert kernel_calls([wrapper], {"triton_per_fused_arange_cumsum_0": SCAN}) == {
        "triton_per_fused_arange_cumsum_0": [Cost(0, 4096, 4096, None, "inductor")]}



def test_a_kernel_that_gathers_rows_by_loaded_indices_has_no_bytes_from_its_buffers() -> None:
    """An embedding lookup reads the rows its token ids name, not the table: counting the whole table (GPT-2's
    77 MB for 512 rows) put a kernel at 891% of the copy bandwidth. Its bytes are unknown instead."""
    triton = """
@triton.jit
def triton_red_fused_embedding_0(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel):
    tmp0 = tl.load(in_ptr0 + (x0), xmask)
    tmp6 = tl.load(in_ptr1 + (r0_2 + 768*tmp4), r0_mask & xmask, other=0.0)
"""
    cpp = """
extern "C"  void kernel(const int64_t* in_ptr0, const float* in_ptr1, float* out_ptr0)
{
    auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
    auto tmp7 = in_ptr1[static_cast<int64_t>(x1 + 768L*tmp5)];
}
"""
    wrapper = """
        buf0 = empty_strided_cuda((512, 768), (768, 1), torch.float32)
        arg0_1 = rand_strided((512, ), (1, ), device='cuda:0', dtype=torch.int64)
        arg1_1 = rand_strided((50257, 768), (768, 1), device='cuda:0', dtype=torch.float32)
        triton_red_fused_embedding_0.run(arg0_1, arg1_1, buf0, 512, 768, stream=stream0)
        cpp_fused_embedding_1(arg0_1, arg1_1, buf0)
"""
    calls = kernel_calls([wrapper], {"triton_red_fused_embedding_0": triton, "cpp_fused_embedding_1": cpp})
    assert calls == {"triton_red_fused_embedding_0": [None], "cpp_fused_embedding_1": [None]}
    direct = {"triton_red_fused_embedding_0": triton.replace("768*tmp4", "768*x0"),
              "cpp_fused_embedding_1": cpp.replace("768L*tmp5", "768L*x0")}
    assert all(cost is not None for costs in kernel_calls([wrapper], direct).values() for cost in costs)


def _trace(extra_kernels: list[dict[str, Any]]) -> dict[str, Any]:
    """One ProfilerStep: an eager addmm launching a split-K pair of kernels (10 µs and 30 µs), a GELU kernel,
    and whatever `extra_kernels` adds (replays: no launch, no op)."""
    def op(name: str, ts: float, ext: int, dims: list[Any], types: list[str], **more: Any) -> dict[str, Any]:
        return {"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": 5, "pid": 1, "tid": 1,
                "args": {"External id": ext, "Input Dims": dims, "Input type": types, "Concrete Inputs": [], **more}}

    def kernel(name: str, ts: float, dur: float, corr: int, ext: int) -> list[dict[str, Any]]:
        return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts - 1, "dur": 1, "pid": 1,
                 "tid": 1, "args": {"correlation": corr, "External id": ext}},
                {"ph": "X", "cat": "kernel", "name": name, "ts": ts + 5, "dur": dur, "pid": 0, "tid": 7,
                 "args": {"correlation": corr, "External id": ext, "stream": 7}}]
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "ts": 0, "dur": 200, "pid": 1,
               "tid": 1},
              op("aten::addmm", 10, 1, [[N], [M, K], [K, N], [], []], ["float"] * 3 + ["Scalar"] * 2),
              *kernel("sm90_xmma_gemm_splitK", 11, 10, 1, 1), *kernel("splitKreduce_kernel", 13, 30, 2, 1),
              op("aten::gelu", 20, 2, [[M, N], []], ["float", ""]), *kernel("vectorized_elementwise_kernel", 21,
                                                                              4, 3, 2),
              op("triton_poi_fused_gelu_0", 30, 3, [[M, N], [], []], ["float", "Scalar", "Scalar"],
                 kernel_num_gb=0.002, kernel_flop=0), *kernel("triton_poi_fused_gelu_0", 31, 2, 4, 3)]
    return {"traceEvents": events + extra_kernels}


def _run(mode: str, trace: dict[str, Any]) -> ModeRun:
    parsed = parse_trace(trace)
    return ModeRun(mode=mode, summary=parsed.summary, kernels=parsed.kernel_rows,
                   trace_gz_b64=base64.b64encode(gzip.compress(json.dumps(trace).encode())).decode())


def test_kernels_take_their_launching_ops_figures() -> None:
    run = _run("eager", _trace([]))
    costs = {row.name: c for row, c in zip(run.kernels, run_costs(run), strict=True)}
    whole = op_cost("aten::addmm", [[N], [M, K], [K, N], [], []], ["float"] * 3 + ["Scalar"] * 2, [])
    assert whole is not None and whole.read is not None and whole.flop is not None
    split, reduce = costs["sm90_xmma_gemm_splitK"], costs["splitKreduce_kernel"]
    assert split is not None and reduce is not None
    # the op's figures over its two kernels by duration (10 : 30), summing back to the whole
    assert split.read == int(whole.read * 0.25) and split.read + (reduce.read or 0) == whole.read
    assert (split.flop or 0) + (reduce.flop or 0) == 2 * M * K * N
    assert costs["vectorized_elementwise_kernel"] == Cost(4 * M * N, 4 * M * N, 8 * M * N, None, "shapes")
    # Inductor's estimate from the trace: a total without a split, no wrapper to split it
    assert costs["triton_poi_fused_gelu_0"] == Cost(None, None, 2_000_000, None, "inductor")


def test_graph_replays_borrow_from_a_launched_run() -> None:
    replay = [{"ph": "X", "cat": "kernel", "name": n, "ts": ts, "dur": d, "pid": 0, "tid": 7, "args": {"stream": 7}}
              for n, ts, d in (("sm90_xmma_gemm_splitK", 100, 9), ("splitKreduce_kernel", 110, 1),
                               ("vectorized_elementwise_kernel", 120, 4))]
    eager = _run("eager", _trace([]))
    graphed = _run("eager_cuda_graph", {"traceEvents": [_trace([])["traceEvents"][0], *replay]})
    assert all(c is None for c in run_costs(graphed))
    lent = run_costs(graphed, [eager, graphed])
    assert lent == [c for row, c in zip(eager.kernels, run_costs(eager), strict=True)
                    if not row.name.startswith("triton_")]


def test_per_run_figures_and_ceilings() -> None:
    eager = _run("eager", _trace([]))
    ceilings = Ceilings("H200", "2.11", copy_gbps=4000.0, matmul_tflops={"float32": 50.0})
    figures = session_costs(session(eager), ceilings)["eager"]
    assert figures.gpu_time_us == pytest.approx(10 + 30 + 4 + 2)
    assert figures.bytes_per_iteration == 4 * (N + M * K + K * N + M * N) + 8 * M * N + 2_000_000
    assert figures.bytes_known_pct == 100
    # a GEMM above the ridge point is bounded by the matmul rate; a memory-bound kernel by the copy bandwidth
    gemm = achieved(Cost(10**6, 10**6, 2 * 10**6, 10**9, "shapes"), 40.0, ceilings, "float32")
    assert gemm is not None and gemm.bound == "compute" and gemm.tflops == pytest.approx(25.0)
    assert gemm.pct_of_ceiling == pytest.approx(50.0)
    stream = achieved(Cost(10**6, 10**6, 2 * 10**6, None, "shapes"), 1.0, ceilings, "float32")
    assert stream is not None and stream.gbps == pytest.approx(2000.0) and stream.pct_of_ceiling == pytest.approx(50)
    assert achieved(None, 1.0, ceilings, "float32") is None
    assert achieved(Cost(1, 1, 2, None, "shapes"), 1.0, None, "float32").pct_of_ceiling is None  # type: ignore


def test_a_float32_convolution_on_a_gpu_is_held_to_no_roof_its_tf32_was_not_measured() -> None:
    """cuDNN runs float32 convolutions in TF32: held to the float32 matmul rate, ResNet-50's conv kernel ran at
    229% of it. Without a measured TF32 rate its percentage is unknown and its roof says why."""
    def row(name: str, launch_op: str, stream: int = 7) -> KernelRow:
        return msgspec.structs.replace(k(name, 0.0, 1.0, launch_op=launch_op), stream=stream)
    assert compute_dtype(row("Kernel2", "aten::cudnn_convolution"), "float32") == "tf32"
    assert compute_dtype(row("sm90_xmma_gemm_f32f32_tf32f32_f32_tn", "aten::mm"), "float32") == "tf32"
    assert compute_dtype(row("sm90_xmma_gemm_f32f32_f32_tn", "aten::mm"), "float32") == "float32"
    assert compute_dtype(row("Kernel2", "aten::cudnn_convolution"), "bfloat16") == "bfloat16"
    assert compute_dtype(row("aten::mkldnn_convolution", "aten::mkldnn_convolution", -1), "float32") == "float32"
    ceilings = Ceilings("H100", "2.11", copy_gbps=3000.0, matmul_tflops={"float32": 50.0})
    conv = achieved(Cost(10**6, 10**6, 2 * 10**6, 10**9, "shapes"), 8.0, ceilings, "tf32")
    assert conv == Achieved(250.0, 125.0, None, None, "tf32 matmul: not measured")


# the CPU of the issue: a copy that leaves the caches at 5 GB/s, one that fits in a core's 512 KB L2 at 50 GB/s, one
# that fits in the 32 MB L3 at 20 GB/s
CPU = Ceilings("CPU", "2.13", copy_gbps=5.0, matmul_tflops={"float32": 0.05},
               caches=[CacheCeiling("L2", 512 << 10, 50.0, 128 << 10), CacheCeiling("L3", 32 << 20, 20.0, 8 << 20)])


def test_a_kernel_is_held_to_the_bandwidth_of_the_cache_its_working_set_fits_in() -> None:
    # eager aten::add of 256 × 64 fp32: two inputs and the output, 64 KB each, 192 KB in all: within L2. At 13.5
    # GB/s it ran at 270% of the copy out of the caches, and it is at 27% of the copy it can meet
    add = Cost(2 * 65536, 65536, 3 * 65536, None, "shapes")
    got = achieved(add, 3 * 65536 / 13.5e3, CPU, "float32")
    assert got is not None and got.gbps == pytest.approx(13.5)
    assert (got.roof, got.bound, got.pct_of_ceiling) == ("L2 copy", "memory", pytest.approx(100 * 13.5 / 50.0))
    assert memory_roof(CPU, 512 << 10).level == "L2" and memory_roof(CPU, (512 << 10) + 1).level == "L3"
    assert memory_roof(CPU, 64 << 20) == memory_roofs(CPU)[-1] and memory_roofs(CPU)[-1].holds_bytes is None
    assert [r.level for r in memory_roofs(CPU)] == ["L2", "L3", "DRAM"]
    # no cache measured (sessions recorded before caches were): DRAM for every working set, as before
    assert memory_roof(Ceilings("H200", "2.11", copy_gbps=4000.0), 1).level == "DRAM"


def test_a_cache_measured_slower_than_a_larger_level_never_lowers_a_roof() -> None:
    noisy = Ceilings("CPU", "2.13", copy_gbps=8.0, caches=[CacheCeiling("L2", 512 << 10, 30.0, 128 << 10),
                                                           CacheCeiling("L3", 32 << 20, 6.0, 8 << 20)])
    assert [r.gbps for r in memory_roofs(noisy)] == [30.0, 8.0, 8.0]


def test_the_roofline_bound_takes_the_level_the_working_set_fits_in() -> None:
    # 2 MB moved, 100 MFLOP: 50 FLOP per byte. Within L3 (20 GB/s): min(0.05 TFLOP/s, 50 × 20 GB/s = 1 TFLOP/s)
    gemm = Cost(1 << 20, 1 << 20, 2 << 20, 100 * 10**6, "shapes")
    assert intensity(gemm) == pytest.approx(100e6 / (2 << 20))
    assert attainable_tflops(CPU, "float32", 50.0, 2 << 20) == pytest.approx(0.05)
    # 0.1 FLOP per byte: below the ridge, bound by the bandwidth of L3 (0.1 × 20 GB/s = 2 GFLOP/s) or DRAM's
    assert attainable_tflops(CPU, "float32", 0.1, 2 << 20) == pytest.approx(0.1 * 20.0 / 1e3)
    assert attainable_tflops(CPU, "float32", 0.1, 64 << 20) == pytest.approx(0.1 * 5.0 / 1e3)
    assert attainable_tflops(CPU, "bfloat16", 0.1, 1) is None  # its matmul was not measured
    low = achieved(Cost(1 << 20, 1 << 20, 2 << 20, 200 * 10**3, "shapes"), 100.0, CPU, "float32")
    assert low is not None and low.bound == "memory" and low.roof == "L3 copy"
    assert intensity(Cost(1, 1, 2, None, "shapes")) is None
