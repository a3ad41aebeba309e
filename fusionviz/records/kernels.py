"""Kernel identity: the kernel table's columns, kernel classes, short names and the ops a kernel covers.

Rules live in tables here so that one place decides what a kernel is called and grouped as. No torch,
no plotly: this runs wherever a session is opened.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fusionviz.errors import SessionFileError
from fusionviz.records.decode import DecodeError, decode, shown

if TYPE_CHECKING:  # imported where a frame is built: reading a trace and `inspect` need no pandas
    import pandas as pd

# The kernel table: one row per device event per profiled iteration: each kernel, and each memory operation
# (Memcpy/Memset, `kernel_class` "memory", counted apart from kernels); on the CPU, each top-level compute call.
KERNEL_COLUMNS: dict[str, str] = {
    "iteration": "profiled iteration, 0-based in launch order",
    "name": "kernel name as the profiler reports it (CPU: the op or fused kernel, graph prefix removed)",
    "short_name": "a readable name: Triton/C++ kernel names as they are, library kernels shortened",
    "kernel_class": "one of KERNEL_CLASSES",
    "start_us": "start in µs from the iteration's start (the ProfilerStep's CPU start)",
    "dur_us": "duration in µs",
    "stream": "CUDA stream id (0 is the default stream); -1 on the CPU",
    "grid": "launch grid as 'x,y,z'; '' where unknown",
    "block": "thread block as 'x,y,z'; '' where unknown",
    "launch_op": "the CPU op that launched it (profiler correlation / External id); the op itself on the CPU",
    "op_id": "the launching op's External id: kernels of one op call share it; -1 where unknown (graph replays)",
    "input_shapes": "input shapes of the launching op, as text",
    "fused_ops": "the source ATen ops the kernel covers (from its Inductor name, or its launching op)",
    "source_file": "the generated source file of an Inductor kernel; '' otherwise",
    "graph": "the compiled graph it ran in ('## Call CompiledFxGraph' key); '' outside compiled code",
    "launch_us": "start of the runtime call that launched it, in µs from the iteration's start; None where the "
                 "trace does not link it to one (the CPU, traces without correlation data)",
}

# The CPU side: ops, launch calls and compiled-region markers, for the thin CPU lane under each timeline.
CPU_OP_COLUMNS: dict[str, str] = {
    "iteration": "profiled iteration, 0-based",
    "name": "op or call name",
    "category": "'op' (a top-level op), 'launch' (a CUDA runtime/driver launch call), 'region' (a compiled region), "
                "'collective' (a CPU backend's collective on its own thread: gloo)",
    "start_us": "start in µs from the iteration's start",
    "dur_us": "duration in µs",
}

KERNEL_CLASSES: tuple[str, ...] = (
    "gemm",
    "triton_pointwise",
    "triton_reduction",
    "triton_template",
    "triton",
    "cpp_fused",
    "aten",
    "copy",
    "communication",
    "memory",
    "other",
)
MEMORY_CLASS = "memory"  # Memcpy/Memset device operations: shown, but not counted as kernels

CLASS_DESCRIPTIONS: dict[str, str] = {
    "gemm": "matrix multiply or convolution from a library (cuBLAS, cuBLASLt/nvjet, CUTLASS, cuDNN convolutions, "
            "ROCm Tensile, oneDNN/MKL, extern mm)",
    "triton_pointwise": "Inductor-generated Triton elementwise kernel (triton_poi_*)",
    "triton_reduction": "Inductor-generated Triton reduction (triton_red_*, persistent triton_per_*)",
    "triton_template": "Triton GEMM template with its epilogue fused in (triton_tem_*, max-autotune)",
    "triton": "Triton kernel whose name does not say its kind (torch 2.0-era triton__0d1d2d…, combo triton_for_*)",
    "cpp_fused": "Inductor-generated C++ kernel on the CPU (cpp_fused_*)",
    "aten": "another eager kernel: ATen's own (elementwise, norm, softmax...) or a library's norm (cuDNN batch norm)",
    "copy": "copy or fill kernel: copy kernels, fills, layout conversions (NCHW↔NHWC), CUDA-graph input copies",
    "communication": "collective or point-to-point communication between devices (NCCL, RCCL)",
    "memory": "Memcpy/Memset device operation (not a kernel: counted apart, as Nsight, HTA and TensorBoard do)",
    "other": "anything else (embedding lookups from fbgemm, sorts, custom kernels...)",
}

# Ordered rules on a kernel's own name (`_callee`: no `void `, no parameter list): the first match decides.
# Words are told apart by letters, not by `\b`, since kernel names join words with `_` and digits.
_CLASS_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("triton_template", re.compile(r"^triton_tem_")),
    ("triton_pointwise", re.compile(r"^triton_poi_")),
    ("triton_reduction", re.compile(r"^triton_(red|per)_")),
    ("triton", re.compile(r"^triton_")),
    ("cpp_fused", re.compile(r"(^|_)cpp_fused_")),
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
def classify(name: str, launch_op: str = "", category: str = "kernel") -> str:
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


def kernel_row(*, iteration: int, name: str, kernel_class: str, start_us: float, dur_us: float, stream: int,
               grid: str, block: str, launch_op: str, op_id: int, input_shapes: str, fused_ops: list[str],
               source_file: str, graph: str, launch_us: float | None = None) -> dict[str, Any]:
    """One row of the kernel table; the only place rows are made, so every row has exactly KERNEL_COLUMNS."""
    return dict(zip(KERNEL_COLUMNS, kernel_tuple(
        iteration=iteration, name=name, kernel_class=kernel_class, start_us=start_us, dur_us=dur_us, stream=stream,
        grid=grid, block=block, launch_op=launch_op, op_id=op_id, input_shapes=input_shapes, fused_ops=fused_ops,
        source_file=source_file, graph=graph, launch_us=launch_us), strict=True))


def kernel_tuple(*, iteration: int, name: str, kernel_class: str, start_us: float, dur_us: float, stream: int,
                 grid: str, block: str, launch_op: str, op_id: int, input_shapes: str, fused_ops: list[str],
                 source_file: str, graph: str, launch_us: float | None) -> tuple[Any, ...]:
    """One row of the kernel table as a tuple in KERNEL_COLUMNS' order: the trace reader collects these and
    turns them into columns once (`columns_from_rows`), with no dict per row."""
    return (iteration, name, short_name(name), kernel_class, start_us, dur_us, stream, grid, block, launch_op,
            op_id, input_shapes, fused_ops, source_file, graph, launch_us)


def cpu_op_row(*, iteration: int, name: str, category: str, start_us: float, dur_us: float) -> dict[str, Any]:
    """One row of the CPU op table (CPU_OP_COLUMNS)."""
    return {"iteration": iteration, "name": name, "category": category, "start_us": start_us, "dur_us": dur_us}


Columns = dict[str, list[Any]]  # a table as one list per column, in its declared column order


def columns_from_rows(rows: list[tuple[Any, ...]], columns: dict[str, str]) -> Columns:
    """Row tuples (in `columns`' order) turned into one list per column, built once."""
    if rows and len(rows[0]) != len(columns):
        raise SessionFileError(f"a table row has {len(rows[0])} values for {len(columns)} columns")
    if not rows:
        return {c: [] for c in columns}
    return {c: list(values) for c, values in zip(columns, zip(*rows, strict=True), strict=True)}


def records_from_columns(table: Columns) -> list[dict[str, Any]]:
    """The table as JSON records (what a session keeps), one dict per row."""
    keys = list(table)
    return [dict(zip(keys, row, strict=True)) for row in zip(*table.values(), strict=True)]


def kernel_frame_from_columns(table: Columns) -> pd.DataFrame:
    """The kernel table as a DataFrame, from columns already checked by their builder."""
    import pandas as pd

    if list(table) != list(KERNEL_COLUMNS):
        raise SessionFileError(f"the kernel table's columns are {list(table)}, not {list(KERNEL_COLUMNS)}")
    if not table["name"]:  # no rows: object columns, as a frame built from no records has
        return _typed_kernels(pd.DataFrame(columns=list(KERNEL_COLUMNS)))
    return _typed_kernels(pd.DataFrame(table, columns=list(KERNEL_COLUMNS)))


def cpu_op_frame_from_columns(table: Columns) -> pd.DataFrame:
    """The CPU op table as a DataFrame, from columns already checked by their builder."""
    import pandas as pd

    if list(table) != list(CPU_OP_COLUMNS):
        raise SessionFileError(f"the CPU op table's columns are {list(table)}, not {list(CPU_OP_COLUMNS)}")
    if not table["name"]:
        return pd.DataFrame(columns=list(CPU_OP_COLUMNS))
    return pd.DataFrame(table, columns=list(CPU_OP_COLUMNS))


def _typed_kernels(frame: pd.DataFrame) -> pd.DataFrame:
    frame["op_id"] = frame["op_id"].astype(int)
    frame["launch_us"] = frame["launch_us"].astype(float)  # None (unknown) becomes NaN
    return frame


# Columns added after sessions were first recorded, with the value older files imply.
_KERNEL_DEFAULTS: dict[str, Any] = {"op_id": -1, "launch_us": None}


def kernel_frame(records: list[dict[str, Any]], what: str) -> pd.DataFrame:
    """The kernel table from its JSON records (a mode's or a sweep strategy's), keys checked against
    KERNEL_COLUMNS before the frame is built: a misspelt or missing key is an error, not a NaN column."""
    rows = [{**_KERNEL_DEFAULTS, **r} for r in records] if records and records[0].keys() != KERNEL_COLUMNS.keys() \
        else records
    _check_keys(rows, KERNEL_COLUMNS, what)
    return kernel_frame_from_columns({c: [r[c] for r in rows] for c in KERNEL_COLUMNS})


def cpu_op_frame(records: list[dict[str, Any]], what: str) -> pd.DataFrame:
    """The CPU op table from its records, keys checked against CPU_OP_COLUMNS."""
    _check_keys(records, CPU_OP_COLUMNS, what)
    return cpu_op_frame_from_columns({c: [r[c] for r in records] for c in CPU_OP_COLUMNS})


# The type of each column's values, as a session keeps them (JSON): what `check_rows` holds a file's rows to,
# by the same rules as every other value of a session (`decode`).
_COLUMN_TYPES: dict[str, Any] = {
    "iteration": int, "name": str, "short_name": str, "kernel_class": str, "start_us": float, "dur_us": float,
    "stream": int, "grid": str, "block": str, "launch_op": str, "op_id": int, "input_shapes": str,
    "fused_ops": list[str], "source_file": str, "graph": str, "launch_us": float | None, "category": str,
}


def check_rows(records: Any, columns: dict[str, str], what: str) -> None:
    """Rows of a table as a file gives them, held to the declared columns and their types before anything
    reads them: exactly the columns (older files' missing `op_id`/`launch_us` aside), numbers that are
    finite, iterations that are not negative, kernel classes that exist, fused ops that are strings.
    Raises SessionFileError naming the first bad value."""
    if type(records) is not list:
        raise SessionFileError(f"{what} is not a list of rows")
    defaults = _KERNEL_DEFAULTS if columns is KERNEL_COLUMNS else {}
    for i, record in enumerate(records):
        if type(record) is not dict:
            raise SessionFileError(f"{what} row {i} is not an object")
        if type(record.get("launch_us")) is float and math.isnan(record["launch_us"]):
            record["launch_us"] = None  # CPU sessions of 2026-11-30 wrote the unknown launch as NaN
        row = {**defaults, **record}
        _check_keys([row], columns, f"{what} row {i}")
        try:
            for column in columns:
                decode(_COLUMN_TYPES[column], row[column], f"{what} row {i}: {column}")
        except DecodeError as exc:
            raise SessionFileError(str(exc)) from None
        if row["iteration"] < 0:
            raise SessionFileError(f"{what} row {i}: iteration {row['iteration']} is negative")
        if "kernel_class" in row and row["kernel_class"] not in KERNEL_CLASSES:
            raise SessionFileError(f"{what} row {i}: kernel_class {shown(row['kernel_class'])} is not one of "
                                   f"{', '.join(KERNEL_CLASSES)}")


def _check_keys(records: list[dict[str, Any]], columns: dict[str, str], what: str) -> None:
    expected = columns.keys()
    for record in records:
        if record.keys() != expected:
            missing = [c for c in columns if c not in record]
            unknown = [k for k in record if k not in columns]
            raise SessionFileError(
                f"{what} has a malformed row: " + "; ".join(
                    part for part in (f"missing {', '.join(missing)}" if missing else "",
                                      f"unknown {', '.join(unknown)}" if unknown else "") if part))
