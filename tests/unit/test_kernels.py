"""Kernel identity rules on names seen in real traces: the H200 (torch 2.11), the CPU (torch 2.13), and other
machines and eras (public profiling projects' test data and profiles; each name says where it came from)."""

import pytest

from fusionviz.records.kernels import (
    CLASS_DESCRIPTIONS,
    KERNEL_CLASSES,
    classify,
    fused_ops_from_name,
    normalise_name,
    op_family,
    short_name,
)


@pytest.mark.parametrize(
    ("name", "launch_op", "expected"),
    [
        ("triton_per_fused_gelu_native_layer_norm_0", "triton_per_fused_gelu_native_layer_norm_0", "triton_reduction"),
        ("triton_red_fused__softmax_1", "", "triton_reduction"),
        ("triton_poi_fused_addmm_relu_0", "", "triton_pointwise"),
        ("triton_tem_fused_addmm_relu_0", "", "triton_template"),
        ("cpp_fused_gelu_native_layer_norm_0", "", "cpp_fused"),
        ("graph_3_cpp_fused_gelu_native_layer_norm_0", "", "cpp_fused"),
        ("cpp__0", "", "cpp_fused"),  # descriptive kernel names off
        ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1", "aten::addmm", "gemm"),
        ("nvjet_tst_128x64_64x8_2x1_v_bz_coopA_NTN", "aten::addmm", "gemm"),
        ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>(Params)", "aten::mm", "gemm"),
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, ...)",
         "aten::native_layer_norm", "aten"),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(...)>(int, ...)",
         "aten::gelu", "aten"),
        ("void at::native::multi_tensor_apply_kernel<...>(...)", "aten::_foreach_copy_", "copy"),
        ("aten::addmm", "aten::addmm", "gemm"),
        ("aten::layer_norm", "aten::layer_norm", "aten"),
        ("aten::copy_", "aten::copy_", "copy"),
        ("something_else", "", "other"),
    ],
)
def test_classify(name: str, launch_op: str, expected: str) -> None:
    assert classify(name, launch_op) == expected


@pytest.mark.parametrize(
    ("name", "launch_op", "expected"),
    [
        # HolisticTraceAnalysis, tests/test_trace_analysis.py (a vision-transformer trace's kernel sequence)
        ("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_stages_32x1_tn", "aten::linear", "gemm"),
        # pytorch/kineto, tb_plugin/test/test_profiler.py (traces of torch 1.x, and its NCCL test)
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "nccl:all_reduce", "communication"),
        ("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)", "nccl:broadcast", "communication"),
        ("ncclBroadcastRingLLKernel_copy_i8(ncclColl)", "Broadcast", "communication"),
        ("volta_fp16_s884cudnn_fp16_128x128_ldg8_splitK_relu_f2f_exp_small_nhwc_tn_v1", "aten::cudnn_convolution",
         "gemm"),
        ("void gemmSN_TN_kernel_64addr", "aten::mm", "gemm"),
        ("void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", "aten::nll_loss_backward", "aten"),
        # TensorBoard kernel_stats of public training logs (the same cuDNN kernels PyTorch calls):
        # mholmeslinder/semi-supervised-cv, logs/scalars5/20201222-020845/.../a0ecb7033138.kernel_stats.pb
        ("void cudnn::detail::wgrad_alg0_engine<float, 512, 6, 5, 3, 3, 3, false, 512>(int, int, int, float const*, "
         "int, float*, float const*, kernel_grad_params, int, float, int, int, int, int)", "", "gemm"),
        ("volta_scudnn_128x64_stridedB_splitK_interior_nn_v1", "", "gemm"),
        ("void cudnn::detail::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, "
         "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, "
         "float*, float*, float const*, float const*, float)", "", "aten"),
        # shalinekoh/pneumonia_covid19_classification, InceptionResNetV2/logs_finetune/.../8a0547ef5ad4.kernel_stats.pb
        ("void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, true, false, true>(int, "
         "int, int, float const*, int, float*, float*, kernel_conv_params, int, float, float, int, float*, float*, "
         "int, int)", "", "gemm"),
        ("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, true>(int, int, int, float const*, int, "
         "float const*, int, float*, kernel_grad_params, int, int, float, int, int, int)", "", "gemm"),
        ("void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, int, int, int, int, "
         "int, int, int, int, float, float, cudnn::reduced_divisor, bool, float*, float*, int2, int, int)", "", "gemm"),
        ("sgemm_sm_heavy_nn_ldg", "", "gemm"),
        # aoberai/chess-engine, logs/fit/20210616-002954/.../aoberai.kernel_stats.pb
        ("void cudnn::cnn::wgrad_alg0_engine<float, 512, 6, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, "
         "float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)", "", "gemm"),
        ("turing_scudnn_128x32_stridedB_splitK_small_nn_v1", "", "gemm"),
        ("volta_sgemm_64x64_nt", "", "gemm"),
        # TensorFlow kernel_stats in public repositories (code search for bn_fw_tr_1C11_kernel_NCHW)
        ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*, "
         "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, "
         "float, float)", "aten::cudnn_batch_norm", "aten"),
        # an nvprof listing of a channels-first half-precision convolution (code search for nchwToNhwcKernel)
        ("void cudnn::ops::nchwToNhwcKernel<__half, __half, float, bool=0, bool=1, cudnnKernelDataType_t=0>("
         "cudnn::ops::nchw2nhwc_params_t<float>, __half const *, __half*)", "aten::cudnn_convolution", "copy"),
        # a public kernel-name table of PyTorch runs under gpgpu-sim (code search for FillFunctor<float>)
        ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
         "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)", "aten::fill_", "copy"),
        ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, true, false>("
         "cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, "
         "float const*, float const*, float*, void*, long, float*, int*)", "aten::addmm", "gemm"),
        ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>(float*, float const*, "
         "int, int, int, bool const*, int, bool)", "aten::_softmax", "aten"),
        # fbgemm_gpu kernels as profiled (code search; their sources: pytorch/FBGEMM, fbgemm_gpu/codegen/
        # embedding_forward_split_template.cu): embedding lookups, not GEMMs, whatever `fbgemm` says
        ("void fbgemm_gpu::permute_2D_data_kernel<false, int, int>(int, int, int const*)",
         "fbgemm::permute_2D_sparse_data", "other"),
        ("void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>("
         "at::GenericPackedTensorAccessor<float, 1ul>, fbgemm_gpu::FixedDivisor)", "", "other"),
        # NCCL 2.19+ names its kernels ncclDevKernel_* (NVIDIA/nccl's generated device kernel list); RCCL on ROCm
        # uses one generic kernel (both as profiled, from public trace-analysis scripts found by code search)
        ("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "nccl:send", "communication"),
        ("ncclDevKernel_Generic_1", "", "communication"),
        # ROCm: a hipBLASLt/Tensile GEMM and a runtime fill, from an MI355X kernel table (code search for Cijk_)
        ("Custom_Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_NTD_SK3_UserArgs_MT256x256x64_MI16x16x1_shortname0_gfx950",
         "aten::addmm", "gemm"),
        ("__amd_rocclr_fillBufferAligned", "", "copy"),
        # torch 2.0-era Inductor kernels, named by their signature (a profiler table of such a run, code search)
        ("triton__0d1d2d3d4d5d6d78d9d", "", "triton"),
        ("triton__0d1d2d", "", "triton"),
    ],
)
def test_classify_kernels_from_other_machines(name: str, launch_op: str, expected: str) -> None:
    assert classify(name, launch_op) == expected


@pytest.mark.parametrize("category", ["gpu_memcpy", "gpu_memset"])
def test_memory_operations_are_their_own_class(category: str) -> None:
    # HolisticTraceAnalysis, tests/test_trace_analysis.py: "Memcpy DtoD (Device -> Device)", "Memset (Device)"
    assert classify("Memcpy DtoD (Device -> Device)", "aten::copy_", category) == "memory"
    assert classify("Memset (Device)", "aten::zero_", category) == "memory"


def test_classification_is_cached_per_distinct_kernel() -> None:
    classify.cache_clear()
    for _ in range(1000):
        classify("triton_poi_fused_relu_0", "triton_poi_fused_relu_0", "kernel")
    info = classify.cache_info()
    assert (info.misses, info.hits) == (1, 999)


def test_every_class_is_described_and_coloured() -> None:
    from fusionviz.charts.style import CLASS_COLOURS

    assert set(KERNEL_CLASSES) == set(CLASS_DESCRIPTIONS) == set(CLASS_COLOURS)


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
