"""Kernel identity: the kernel table's row type, kernel classes, short names and the ops a kernel covers.

Rules live in tables here so that one place decides what a kernel is called and grouped as. No torch,
no plotly: this runs wherever a session is opened.
"""

from __future__ import annotations

import operator
import re
import typing
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import msgspec
from msgspec import Meta

from fusionviz.records.decode import Count, Finite, Int64

if TYPE_CHECKING:  # imported where a frame is built: reading a trace and `inspect` need no pandas
    import pandas as pd

KernelClass = Literal["gemm", "triton_pointwise", "triton_reduction", "triton_template", "triton", "cpp_fused",
                      "aten", "copy", "communication", "memory", "other"]
KERNEL_CLASSES: tuple[str, ...] = typing.get_args(KernelClass)
MEMORY_CLASS: KernelClass = "memory"  # Memcpy/Memset device operations: shown, but not counted as kernels

CLASS_DESCRIPTIONS: dict[str, str] = {
    "gemm": "matrix multiply or convolution from a library (cuBLAS, cuBLASLt/nvjet, CUTLASS, cuDNN convolutions, "
            "ROCm Tensile, oneDNN/MKL, extern mm)",
    "triton_pointwise": "Inductor-generated Triton elementwise kernel (triton_poi_*)",
    "triton_reduction": "Inductor-generated Triton reduction (triton_red_*, persistent triton_per_*)",
    "triton_template": "Triton GEMM template with its epilogue fused in (triton_tem_*, max-autotune)",
    "triton": "Triton kernel whose name does not say its kind (torch 2.0-era triton__0d1d2d…, combo triton_for_*)",
    "cpp_fused": "Inductor-generated C++ kernel on the CPU (cpp_fused_*; cpp__<n> with descriptive names off)",
    "aten": "another eager kernel: ATen's own (elementwise, norm, softmax...) or a library's norm (cuDNN batch norm)",
    "copy": "copy or fill kernel: copy kernels, fills, layout conversions (NCHW↔NHWC), CUDA-graph input copies",
    "communication": "collective or point-to-point communication between devices (NCCL, RCCL)",
    "memory": "Memcpy/Memset device operation (not a kernel: counted apart, as Nsight, HTA and TensorBoard do)",
    "other": "anything else (embedding lookups from fbgemm, sorts, custom kernels...)",
}

# Ordered rules on a kernel's own name (`_callee`: no `void `, no parameter list): the first match decides.
# Words are told apart by letters, not by `\b`, since kernel names join words with `_` and digits.
_CLASS_RULES: tuple[tuple[KernelClass, re.Pattern[str]], ...] = (
    ("triton_template", re.compile(r"^triton_tem_")),
    ("triton_pointwise", re.compile(r"^triton_poi_")),
    ("triton_reduction", re.compile(r"^triton_(red|per)_")),
    ("triton", re.compile(r"^triton_")),
    ("cpp_fused", re.compile(r"(^|_)cpp_(?:fused_|_\d+$)")),  # cpp__0 where descriptive names are off
    ("communication", re.compile(r"^(?:nccl|rccl|msccl)")),
    ("copy", re.compile(r"(?i)memcpy|memset|copy_?kernel|CatArrayBatchedCopy|fill_kernel|FillFunctor"
                        r"|nchwToNhwc|nhwcToNchw|nchw2nhwc|nhwc2nchw|convertTensor_kernel|rocclr_(?:copy|fill)")),
    # BLAS: gemm/gemv with an optional precision letter after a non-letter (sgemm, s1688gemm, gemv2T), so
    # fbgemm is not one; cuBLAS/cuBLASLt, CUTLASS, nvjet, xmma and their split-K reductions.
    ("gemm", re.compile(r"(?i)(?<![a-z])[sdhczi]?gem[mv]|cublas|cutlass|nvjet|xmma|splitKreduce"
                        r"|(?<![a-z])dot_kernel")),
    # Convolutions: passes (fprop, dgrad, wgrad), cuDNN's engines named by precision (scudnn, s884cudnn),
    # implicit GEMM, Winograd and FFT convolutions, and ATen's own.
    ("gemm", re.compile(r"(?i)(?<![a-z])(?:fprop|dgrad|wgrad)|(?<![a-z])conv(?:olve|olution|\dd)?(?![a-z])"
                        r"|winograd|(?<![a-z])[a-z]\d*cudnn_|(?<![a-z])fft2d_[rc]2[rc]")),
    ("gemm", re.compile(r"(?:^|_)C[a-z]{3}_A[a-z]{3}_B[a-z]{3}_")),  # ROCm Tensile / hipBLASLt: Cijk_Ailk_Bljk_…
    ("gemm", re.compile(r"^aten::(?:addmm|mm|bmm|baddbmm|linear|matmul|_addmm_activation|convolution|_convolution"
                        r"|mkldnn_convolution|conv\w*|_mkl_linear|mkldnn_\w*linear\w*)$|^mkldnn::|^mkl::")),
    ("copy", re.compile(r"^aten::(?:copy_|clone|_to_copy|fill_|zero_|cat)$")),
    ("aten", re.compile(r"^at::|at::native|^aten::|cunn_|elementwise_kernel|reduce_kernel|layer_norm|softmax"
                        r"|(?<![a-z])bn_(?:fw|bw)|batchnorm|batch_norm")),
)

# CUDA-graph input copies and other copy kernels that carry a generic name: decided by their launching op.
_COPY_LAUNCH_OPS = re.compile(r"^aten::(?:copy_|_foreach_copy_?|clone|_to_copy)$")

# Ops that are not kernels on the CPU themselves (metadata, views, allocation, no-op wrappers); the reader
# still looks inside them, since `aten::to` or `aten::contiguous` may call a real copy.
CPU_VIEW_OPS: frozenset[str] = frozenset(
    f"aten::{name}"
    for name in (
        "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand", "as_strided", "slice", "select",
        "unsqueeze", "squeeze", "detach", "alias", "empty", "empty_strided", "empty_like", "resolve_conj",
        "resolve_neg", "lift_fresh", "split", "unbind", "chunk", "narrow", "view_as", "expand_as", "flatten",
        "unflatten", "numpy_T", "_reshape_alias", "set_", "zeros_like_meta", "result_type", "dropout",
        "is_nonzero", "size", "stride", "to", "type_as", "lift", "_has_compatible_shallow_copy_type",
        "_local_scalar_dense", "item", "sym_size", "sym_stride", "sym_numel", "numel", "dim", "contiguous",
    )
)


@lru_cache(maxsize=1 << 16)
def classify(name: str, launch_op: str = "", category: str = "kernel") -> KernelClass:
    """The kernel class of a device event (GPU) or top-level compute call (CPU). Cached: a real trace holds
    thousands of kernels but a few hundred distinct (name, launching op, category) triples."""
    if category in ("gpu_memcpy", "gpu_memset"):
        return MEMORY_CLASS
    callee = _callee(name)
    if _COPY_LAUNCH_OPS.match(launch_op) and not callee.startswith(("triton_", "nccl", "rccl")):
        return "copy"
    for kernel_class, pattern in _CLASS_RULES:
        if pattern.search(callee):
            return kernel_class
    return "other"


def _callee(name: str) -> str:
    """A kernel's own name with its template arguments: `void ` and the parameter list dropped, so that
    argument types (`cudnnTensorStruct`, `fbgemm_gpu::FixedDivisor`) say nothing of what it does."""
    text = name.replace("(anonymous namespace)", "anonymous").removeprefix("void ")
    depth = 0
    for i, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth <= 0:
            return text[:i].rstrip()
    return text


_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_INDUCTOR_PREFIX = re.compile(r"^(?:triton_(?:poi|red|per|tem)|cpp)_fused_?")
_TRAILING_INDEX = re.compile(r"_\d+$")


@lru_cache(maxsize=1 << 16)
def normalise_name(name: str) -> str:
    """Drop the `graph_<n>_` prefix that CPU kernel profiling adds (it changes with cache hits)."""
    return _GRAPH_PREFIX.sub("", name)


@lru_cache(maxsize=1 << 16)
def short_name(name: str) -> str:
    """A readable name: Inductor names as they are; C++ library names without namespaces and arguments."""
    if name.startswith(("triton_", "cpp_")) or name.startswith("aten::"):
        return name
    text = re.sub(r"^void\s+", "", name).replace("(anonymous namespace)::", "")
    text = text.split("(", 1)[0]
    base, _, template = text.partition("<")
    base = base.split("::")[-1]
    functor = _functor(template)
    label = f"{base}<{functor}>" if functor else base
    return label if len(label) <= 60 else label[:57] + "..."


_WORD = re.compile(r"\w+")
_FUNCTOR_WORDS = ("Functor", "Kernel", "Impl", "Op")


def _functor(template: str) -> str:
    """The first functor-like name in template arguments (`CUDAFunctor_add`, `MulFunctor`): from a capital
    to the end of its word, where a later part of the word is one of _FUNCTOR_WORDS. One pass over the text:
    a regex with the same meaning backtracks quadratically on a long word with no such part."""
    for word in _WORD.finditer(template):
        text = word.group()
        if not any(w in text for w in _FUNCTOR_WORDS):  # most words of a long template: no part can match
            continue
        offset = 0
        for part in text.split("_"):
            last = max(part.rfind(w) for w in _FUNCTOR_WORDS)
            first_capital = next((i for i, c in enumerate(part) if "A" <= c <= "Z"), -1)
            if 0 <= first_capital < last:
                return text[offset + first_capital:]
            offset += len(part) + 1
    return ""


@lru_cache(maxsize=1)
def aten_vocabulary() -> frozenset[str]:
    """ATen op names (aten_ops.txt, generated from torch by scripts/make_aten_vocabulary.py)."""
    path = Path(__file__).parent / "aten_ops.txt"
    return frozenset(line.strip() for line in path.read_text().splitlines() if line.strip())


@lru_cache(maxsize=1)
def _longest_op_words() -> int:
    """The most `_`-separated words in one ATen op name: no candidate longer than this can match."""
    return max(len(op.split("_")) for op in aten_vocabulary())


@lru_cache(maxsize=4096)
def fused_ops_from_name(name: str) -> tuple[str, ...]:
    """The source ops an Inductor kernel covers, read off its descriptive name.

    `triton_per_fused_gelu_native_layer_norm_0` → (`gelu`, `native_layer_norm`): the words are matched
    greedily against ATen op names, longest first, so multi-word ops stay whole.
    """
    name = normalise_name(name)
    match = _INDUCTOR_PREFIX.match(name)
    if not match:
        return ()
    body = _TRAILING_INDEX.sub("", name[match.end():])
    vocabulary, longest = aten_vocabulary(), _longest_op_words()
    words = body.split("_")
    ops: list[str] = []
    i = 0
    while i < len(words):
        lead = "_" if words[i] == "" else ""
        start = i + 1 if lead else i
        # candidates of at most `longest` words: linear in the name's length, however long the name
        for j in range(min(len(words), start + longest), start, -1):
            candidate = lead + "_".join(words[start:j])
            if candidate in vocabulary:
                ops.append(candidate)
                i = j
                break
        else:
            if words[i]:
                ops.append(words[i])
            i += 1
    return tuple(ops)


# Op families: eager and Inductor name the same computation differently (eager's addmm, Inductor's mm).
_FAMILY_ALIASES: dict[str, str] = {
    **{op: "matmul" for op in ("addmm", "mm", "bmm", "baddbmm", "linear", "matmul", "_addmm_activation",
                               "_mkl_linear", "mkldnn_linear", "addmv", "mv")},
    **{op: "layer_norm" for op in ("native_layer_norm", "layer_norm")},
    **{op: "batch_norm" for op in ("native_batch_norm", "_native_batch_norm_legit_no_training",
                                   "_native_batch_norm_legit", "batch_norm", "cudnn_batch_norm",
                                   "_batch_norm_impl_index", "_native_batch_norm_legit_functional")},
    **{op: "convolution" for op in ("convolution", "_convolution", "cudnn_convolution", "mkldnn_convolution",
                                    "conv2d", "convolution_overrideable")},
    **{op: "softmax" for op in ("softmax", "_softmax", "_safe_softmax", "log_softmax", "_log_softmax")},
    **{op: "attention" for op in ("scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                                  "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
                                  "_scaled_dot_product_flash_attention_for_cpu", "_flash_attention_forward",
                                  "_efficient_attention_forward")},
    "clamp_min": "relu",
    "threshold": "relu",
}


def op_family(op: str) -> str:
    """The family an op belongs to, for linking eager kernels to the compiled kernels that absorbed them."""
    bare = op.removeprefix("aten::").split(".")[0]
    return _FAMILY_ALIASES.get(bare, bare.lstrip("_"))


class KernelRow(msgspec.Struct, kw_only=True, gc=False):
    """One row of the kernel table: one device event of one profiled iteration: each kernel, and each memory
    operation (Memcpy/Memset, `kernel_class` "memory", counted apart from kernels); on the CPU, each top-level
    compute call. The one declaration of the table: a session's JSON rows are checked against it on the way
    in (`decode.decode`), and the descriptions below are the columns' documentation (KERNEL_COLUMNS)."""

    iteration: Annotated[Count, Meta(description="profiled iteration, 0-based in launch order")]
    name: Annotated[str, Meta(description="kernel name as the profiler reports it (CPU: the op or fused kernel, "
                                          "graph prefix removed)")]
    short_name: Annotated[str, Meta(description="a readable name: Triton/C++ kernel names as they are, library "
                                                "kernels shortened (filled from `name` when not given)")] = ""
    kernel_class: Annotated[KernelClass, Meta(description="one of KERNEL_CLASSES")]
    start_us: Annotated[Finite, Meta(description="start in µs from the iteration's start (the ProfilerStep's CPU "
                                                 "start)")]
    dur_us: Annotated[Finite, Meta(description="duration in µs")]
    stream: Annotated[Int64, Meta(description="CUDA stream id (0 is the default stream); -1 on the CPU")]
    grid: Annotated[str, Meta(description="launch grid as 'x,y,z'; '' where unknown; as the trace gives it "
                                          "where it is not a list of integers")]
    block: Annotated[str, Meta(description="thread block as 'x,y,z'; '' where unknown")]
    launch_op: Annotated[str, Meta(description="the CPU op that launched it (profiler correlation / External id); "
                                               "the op itself on the CPU")]
    # added after sessions were first recorded: older files' rows take the default
    op_id: Annotated[Int64, Meta(description="the launching op's External id: kernels of one op call share it; -1 "
                                             "where unknown (graph replays)")] = -1
    input_shapes: Annotated[str, Meta(description="input shapes of the launching op, as text")]
    fused_ops: Annotated[list[str], Meta(description="the source ATen ops the kernel covers (from its Inductor "
                                                     "name, or its launching op)")]
    source_file: Annotated[str, Meta(description="the generated source file of an Inductor kernel; '' otherwise")]
    graph: Annotated[str, Meta(description="the compiled graph it ran in ('## Call CompiledFxGraph' key); '' "
                                           "outside compiled code")]
    launch_us: Annotated[Finite | None, Meta(
        description="start of the runtime call that launched it, in µs from the iteration's start; None where the "
                    "trace does not link it to one (the CPU, traces without correlation data)")] = None
    source_lines: Annotated[list[str], Meta(
        description="the user's lines it came from as the trace's stack traces give them, 'file:line': a kernel's "
                    "`stack` (torch._inductor.profiler's trace handler), else its launching op's `stack_trace` "
                    "(FX's profiler metadata); [] where the trace has none")] = []

    def __post_init__(self) -> None:
        if not self.short_name:
            self.short_name = short_name(self.name)


class CpuOpRow(msgspec.Struct, kw_only=True, gc=False):
    """One row of the CPU op table: ops, launch calls and compiled-region markers, for the thin CPU lane under
    each timeline."""

    iteration: Annotated[Count, Meta(description="profiled iteration, 0-based")]
    name: Annotated[str, Meta(description="op or call name")]
    category: Annotated[str, Meta(description="'op' (a top-level op), 'launch' (a CUDA runtime/driver launch call), "
                                              "'region' (a compiled region), 'collective' (a CPU backend's "
                                              "collective on its own thread: gloo)")]
    start_us: Annotated[Finite, Meta(description="start in µs from the iteration's start")]
    dur_us: Annotated[Finite, Meta(description="duration in µs")]


def _descriptions(row: type[msgspec.Struct]) -> dict[str, str]:
    """A row type's columns, in order, with their descriptions (its fields' `Meta`)."""
    hints = typing.get_type_hints(row, include_extras=True)
    return {name: next(m.description for m in hints[name].__metadata__ if getattr(m, "description", None))
            for name in row.__struct_fields__}


KERNEL_COLUMNS: dict[str, str] = _descriptions(KernelRow)
CPU_OP_COLUMNS: dict[str, str] = _descriptions(CpuOpRow)
_KERNEL_VALUES = operator.attrgetter(*KERNEL_COLUMNS)
_CPU_OP_VALUES = operator.attrgetter(*CPU_OP_COLUMNS)


def kernel_frame(rows: list[KernelRow]) -> pd.DataFrame:
    """The kernel table as a DataFrame (KERNEL_COLUMNS), from rows already checked by their builder or decoder."""
    import pandas as pd

    if not rows:  # no rows: object columns, as a frame built from no records has
        frame = pd.DataFrame(columns=list(KERNEL_COLUMNS))
    else:
        frame = pd.DataFrame(list(map(_KERNEL_VALUES, rows)), columns=list(KERNEL_COLUMNS))
    frame["op_id"] = frame["op_id"].astype(int)
    frame["launch_us"] = frame["launch_us"].astype(float)  # None (unknown) becomes NaN
    return frame


def cpu_op_frame(rows: list[CpuOpRow]) -> pd.DataFrame:
    """The CPU op table as a DataFrame (CPU_OP_COLUMNS)."""
    import pandas as pd

    if not rows:
        return pd.DataFrame(columns=list(CPU_OP_COLUMNS))
    return pd.DataFrame(list(map(_CPU_OP_VALUES, rows)), columns=list(CPU_OP_COLUMNS))
