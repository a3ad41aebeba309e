"""fusion_links on hand-made kernel tables: which eager kernels each compiled kernel absorbed."""

from __future__ import annotations

import pandas as pd

from fusionviz.analysis.links import fusion_links
from fusionviz.records.kernels import kernel_frame
from tests.unit.factories import k


def links_of(eager: list[dict], compiled: list[dict]) -> set[tuple[int, int, str]]:
    found = fusion_links(kernel_frame(eager), kernel_frame(compiled))
    return {(int(r.eager_index), int(r.compiled_index), r.family) for r in found.itertuples()}


def test_layer_norm_and_gelu_meet_in_one_kernel_and_the_gemm_stays() -> None:
    eager = [k("sm90_xmma_gemm", 0, 10, ops=("addmm",), op_id=1, launch_op="aten::addmm"),
             k("vectorized_layer_norm_kernel", 10, 5, ops=("native_layer_norm",), op_id=2),
             k("GeluCUDAKernelImpl", 15, 5, ops=("gelu",), op_id=3)]
    compiled = [k("nvjet_tst_gemm", 0, 10, ops=("mm",), op_id=7, launch_op="aten::mm"),
                k("triton_per_fused_gelu_native_layer_norm_0", 10, 6, ops=("gelu", "native_layer_norm"), op_id=8)]
    assert links_of(eager, compiled) == {(0, 0, "matmul"), (1, 1, "layer_norm"), (2, 1, "gelu")}


def test_a_bias_epilogue_points_back_at_the_gemm_it_follows() -> None:
    """fp32 `default`: cuBLAS without the bias, then Triton `addmm_relu`: the epilogue names a matmul without
    being one, so it links to the GEMM before it, not to the next eager GEMM."""
    eager = [k("gemm_a", 0, 10, ops=("addmm",), op_id=1), k("relu_a", 10, 2, ops=("relu",), op_id=2),
             k("gemm_b", 12, 10, ops=("addmm",), op_id=3), k("relu_b", 22, 2, ops=("relu",), op_id=4)]
    compiled = [k("gemm_1", 0, 10, ops=("mm",), op_id=11, kernel_class="gemm"),
                k("triton_poi_fused_addmm_relu_0", 10, 2, ops=("addmm", "relu"), op_id=12),
                k("gemm_2", 12, 10, ops=("mm",), op_id=13, kernel_class="gemm"),
                k("triton_poi_fused_addmm_relu_1", 22, 2, ops=("addmm", "relu"), op_id=14)]
    assert links_of(eager, compiled) == {
        (0, 0, "matmul"), (0, 1, "matmul"), (1, 1, "relu"),
        (2, 2, "matmul"), (2, 3, "matmul"), (3, 3, "relu")}


def test_kernels_of_one_op_call_count_as_one_unit_on_both_sides() -> None:
    """A GEMM split into a main kernel and a split-K reduction (same External id) is one unit."""
    eager = [k("gemm_main", 0, 10, ops=("addmm",), op_id=1), k("splitKreduce", 10, 1, ops=("addmm",), op_id=1)]
    compiled = [k("gemm_main", 0, 10, ops=("mm",), op_id=5), k("splitKreduce", 10, 1, ops=("mm",), op_id=5)]
    assert links_of(eager, compiled) == {(0, 0, "matmul"), (1, 0, "matmul"), (0, 1, "matmul"), (1, 1, "matmul")}


def test_a_gemm_replayed_in_a_cuda_graph_is_still_a_matmul() -> None:
    eager = [k("gemm", 0, 10, ops=("addmm",), op_id=1)]
    compiled = [k("sm90_xmma_gemm_replayed", 0, 10, kernel_class="gemm")]  # no launching op: no fused_ops
    assert links_of(eager, compiled) == {(0, 0, "matmul")}


def test_ops_named_once_take_every_eager_kernel_of_their_family() -> None:
    """Inductor names each op once: `cpp_fused_add_mul_0` absorbs two adds and three muls."""
    ops = ["mul", "add", "mul", "add", "mul"]
    eager = [k(f"aten::{op}", 10 * i, 5, ops=(op,), op_id=i) for i, op in enumerate(ops)]
    compiled = [k("cpp_fused_add_mul_0", 0, 9, ops=("add", "mul"))]
    found = links_of(eager, compiled)
    assert {e for e, _, _ in found} == set(range(5)) and {c for _, c, _ in found} == {0}


def test_eager_kernels_without_a_counterpart_stay_unlinked() -> None:
    eager = [k("aten::sort", 0, 5, ops=("sort",), op_id=1), k("aten::relu", 5, 5, ops=("relu",), op_id=2)]
    compiled = [k("triton_poi_fused_relu_0", 0, 5, ops=("relu",))]
    found = fusion_links(kernel_frame(eager), kernel_frame(compiled))
    assert list(found.eager_index) == [1] and isinstance(found, pd.DataFrame)
