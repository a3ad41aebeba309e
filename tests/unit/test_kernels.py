"""Kernel identity rules on names seen in real traces (H200 torch 2.11, CPU torch 2.13)."""

import pytest

from fusionviz.records.kernels import classify, fused_ops_from_name, normalise_name, op_family, short_name


@pytest.mark.parametrize(
    ("name", "launch_op", "expected"),
    [
        ("triton_per_fused_gelu_native_layer_norm_0", "triton_per_fused_gelu_native_layer_norm_0", "triton_reduction"),
        ("triton_red_fused__softmax_1", "", "triton_reduction"),
        ("triton_poi_fused_addmm_relu_0", "", "triton_pointwise"),
        ("triton_tem_fused_addmm_relu_0", "", "triton_template"),
        ("cpp_fused_gelu_native_layer_norm_0", "", "cpp_fused"),
        ("graph_3_cpp_fused_gelu_native_layer_norm_0", "", "cpp_fused"),
        ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1", "aten::addmm", "gemm"),
        ("nvjet_tst_128x64_64x8_2x1_v_bz_coopA_NTN", "aten::addmm", "gemm"),
        ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", "aten::mm", "gemm"),
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, ...)",
         "aten::native_layer_norm", "aten"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(...)>(int, ...)",
         "aten::gelu", "aten"),
        ("void at::native::multi_tensor_apply_kernel<...>(...)", "aten::_foreach_copy_", "copy"),
        ("Memcpy DtoD (Device -> Device)", "", "copy"),
        ("aten::addmm", "aten::addmm", "gemm"),
        ("aten::layer_norm", "aten::layer_norm", "aten"),
        ("aten::copy_", "aten::copy_", "copy"),
        ("something_else", "", "other"),
    ],
)
def test_classify(name: str, launch_op: str, expected: str) -> None:
    assert classify(name, launch_op) == expected


def test_memcpy_category_is_copy() -> None:
    assert classify("whatever", "", "gpu_memset") == "copy"


@pytest.mark.parametrize(
    ("name", "ops"),
    [
        ("triton_per_fused_gelu_native_layer_norm_0", ("gelu", "native_layer_norm")),
        ("triton_poi_fused_addmm_relu_0", ("addmm", "relu")),
        ("cpp_fused__native_batch_norm_legit_no_training_relu_3", ("_native_batch_norm_legit_no_training", "relu")),
        ("graph_0_cpp_fused_add_mul_sigmoid_tanh_12", ("add", "mul", "sigmoid", "tanh")),
        ("triton_red_fused__softmax_1", ("_softmax",)),
        ("aten::addmm", ()),
    ],
)
def test_fused_ops_split_against_aten_names(name: str, ops: tuple[str, ...]) -> None:
    assert fused_ops_from_name(name) == ops


def test_families_link_eager_and_inductor_names() -> None:
    assert op_family("aten::addmm") == op_family("mm") == op_family("linear") == "matmul"
    assert op_family("native_layer_norm") == op_family("aten::layer_norm") == "layer_norm"
    assert op_family("_softmax") == "softmax"
    assert op_family("gelu") == "gelu"


def test_names() -> None:
    assert normalise_name("graph_12_cpp_fused_relu_0") == "cpp_fused_relu_0"
    assert short_name("triton_poi_fused_relu_0") == "triton_poi_fused_relu_0"
    long = ("void at::native::vectorized_elementwise_kernel<4, "
            "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&)>(int)")
    assert short_name(long) == "vectorized_elementwise_kernel<GeluCUDAKernelImpl>"
