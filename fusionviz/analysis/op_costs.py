"""Bytes and FLOPs of one eager op call, from its input shapes and dtypes as the profiler records them
(`record_shapes`: "Input Dims", "Input type", "Concrete Inputs"), with one rule per kind of op.

The figures are what the op must move at least: each input tensor read once at its own size (a broadcast bias
counts its own elements, which the caches keep), each output written once. FLOPs are counted where they mean
something for a roofline: 2 per multiply-add of GEMMs, convolutions and attention (as torch's FLOP counter
does); elementwise, reduction and norm kernels are bounded by memory, and their FLOPs are left as None.
No torch: this runs wherever a session opens.
"""

from __future__ import annotations

import math
import re
from typing import Any

import msgspec

# Bytes per element of the profiler's type names ("Input type"); "Scalar", "ScalarList", "" are not tensors.
ITEMSIZE: dict[str, int] = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1,
    "long int": 8, "int": 4, "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
    "c10::complex<float>": 8, "c10::complex<double>": 16,
}
DTYPE_ITEMSIZE: dict[str, int] = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8,
                                  "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1}

ELEMENTWISE: frozenset[str] = frozenset({
    "add", "sub", "rsub", "mul", "div", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "tanh", "sigmoid",
    "relu", "gelu", "silu", "mish", "hardswish", "hardsigmoid", "leaky_relu", "elu", "softplus", "clamp",
    "clamp_min", "clamp_max", "clip", "pow", "sqrt", "rsqrt", "abs", "sign", "where", "maximum", "minimum",
    "sin", "cos", "erf", "erfc", "reciprocal", "square", "floor", "ceil", "round", "trunc", "masked_fill",
    "threshold", "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not", "bitwise_and", "lerp",
    "addcmul", "addcdiv", "fill", "zero", "native_dropout", "dropout",
})
COMPARISONS: frozenset[str] = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                                         "logical_not"})
REDUCTIONS: frozenset[str] = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std",
                                        "argmax", "argmin", "norm", "linalg_vector_norm", "logsumexp", "any", "all"})
NORMS: frozenset[str] = frozenset({"layer_norm", "native_layer_norm", "group_norm", "native_group_norm",
                                   "batch_norm", "native_batch_norm", "_native_batch_norm_legit_no_training",
                                   "cudnn_batch_norm", "rms_norm", "_fused_rms_norm", "softmax", "_softmax",
                                   "log_softmax", "_log_softmax", "instance_norm"})
COPIES: frozenset[str] = frozenset({"copy_", "clone", "_to_copy", "contiguous", "to", "_foreach_copy_"})
GEMMS: frozenset[str] = frozenset({"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_addmm_activation"})
# Where each convolution op keeps stride, padding, dilation, groups and `transposed` among its inputs.
CONVOLUTIONS: dict[str, tuple[int, int, int, int, int | None]] = {
    "conv1d": (3, 4, 5, 6, None), "conv2d": (3, 4, 5, 6, None), "conv3d": (3, 4, 5, 6, None),
    "convolution": (3, 4, 5, 8, 6), "_convolution": (3, 4, 5, 8, 6), "cudnn_convolution": (3, 2, 4, 5, None),
    "mkldnn_convolution": (4, 3, 5, 6, None)}
ATTENTION: frozenset[str] = frozenset({"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
                                       "_scaled_dot_product_efficient_attention",
                                       "_scaled_dot_product_cudnn_attention",
                                       "_scaled_dot_product_flash_attention_for_cpu"})


class Cost(msgspec.Struct, frozen=True):
    """What one op call or kernel moves and computes: bytes read and written (None where only the total is
    known, as Inductor's `kernel_num_gb` gives it), their `total`, and FLOPs (None where not counted)."""

    read: int | None
    written: int | None
    total: int
    flop: int | None
    source: str  # "inductor" (its estimate, or its kernel's buffers), "shapes" (the launching op's inputs)


class Tensor(msgspec.Struct, frozen=True):
    shape: tuple[int, ...]
    itemsize: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.itemsize


def op_kind(name: str) -> str | None:
    """The rule an op falls under: "gemm", "conv", "attention", "norm", "reduction", "copy", "cat",
    "elementwise", or None (unknown: no figure is made up for it)."""
    op = name.removeprefix("aten::")
    base = op.rstrip("_") if op not in COPIES else op
    for kind, names in (("gemm", GEMMS), ("conv", CONVOLUTIONS), ("attention", ATTENTION), ("norm", NORMS),
                        ("reduction", REDUCTIONS), ("copy", COPIES)):
        if op in names or base in names:
            return kind
    if base == "cat":
        return "cat"
    return "elementwise" if base in ELEMENTWISE else None


def tensors(dims: list[Any], types: list[str]) -> list[Tensor | None]:
    """The op's inputs, position by position: a Tensor for each tensor input of a known dtype, else None."""
    found: list[Tensor | None] = []
    for i, shape in enumerate(dims):
        kind = types[i] if i < len(types) else ""
        size = ITEMSIZE.get(kind)
        is_shape = isinstance(shape, list) and all(isinstance(d, int) for d in shape)
        found.append(Tensor(tuple(shape), size) if size is not None and is_shape else None)
    return found


def op_cost(name: str, dims: list[Any], types: list[str], concrete: list[Any]) -> Cost | None:
    """The bytes and FLOPs of one call of `name` with these inputs, or None where no rule applies or the
    inputs are not what the rule reads."""
    kind = op_kind(name)
    if kind is None:
        return None
    inputs = tensors(dims, types)
    present = [t for t in inputs if t is not None]
    if not present:
        return None
    try:
        rule = _RULES[kind]
        read, written, flop = rule(name.removeprefix("aten::"), inputs, present, concrete)
    except (IndexError, ValueError, AttributeError, ZeroDivisionError):
        return None  # inputs of another form than the rule expects (an overload it does not know)
    return Cost(read, written, read + written, flop, "shapes")


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    return tuple(max(dims) if min(dims) != 0 else 0 for dims in zip(*padded, strict=True))


def _elementwise(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
                 ) -> tuple[int, int, int | None]:
    """Every tensor input read once; the broadcast result written once (in place: into the first input)."""
    out_shape = present[0].shape if op.endswith("_") else _broadcast([t.shape for t in present])
    # a 0-dim tensor (a wrapped Python number, recorded as a double) does not promote a tensor's dtype
    promoting = [t for t in present if t.shape] or present
    itemsize = 1 if op.rstrip("_") in COMPARISONS else max(t.itemsize for t in promoting)
    reads = 0 if op.rstrip("_") in ("fill", "zero") else sum(t.nbytes for t in present)
    return reads, math.prod(out_shape) * itemsize, None


def _reduction(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
               ) -> tuple[int, int, int | None]:
    """The input read once; the output is the input with the reduced dims gone (all of them when none are
    given); an arg-reduction writes int64 indices."""
    x = present[0]
    dims = _int_list(concrete[1]) if len(concrete) > 1 else []
    if dims:
        rank = len(x.shape)
        gone = {d % rank for d in dims} if rank else set()
        out = math.prod(n for i, n in enumerate(x.shape) if i not in gone)
    else:
        out = 1
    itemsize = 8 if op.startswith("arg") else x.itemsize
    return x.nbytes, out * itemsize, None


def _norm(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
          ) -> tuple[int, int, int | None]:
    """The input, weight and bias (and running statistics) read once; one output of the input's size."""
    return sum(t.nbytes for t in present), present[0].nbytes, None


def _copy(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
          ) -> tuple[int, int, int | None]:
    """`copy_(dst, src)`: the source read, the destination written; a clone or conversion: its input read and
    a tensor of its size written."""
    if op in ("copy_", "_foreach_copy_") and len(present) >= 2:
        dst, src = present[0], present[1]
        return src.nbytes, dst.nbytes, None
    return present[0].nbytes, present[0].nbytes, None


def _cat(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
         ) -> tuple[int, int, int | None]:
    total = sum(t.nbytes for t in present)
    return total, total, None


def _gemm(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
          ) -> tuple[int, int, int | None]:
    """A, B and the bias read once, the M × N result written once; 2·M·K·N FLOPs (times the batch)."""
    if op in ("mm", "bmm", "matmul"):
        a, b, bias = inputs[0], inputs[1], None
    elif op == "linear":
        a, b, bias = inputs[0], inputs[1], inputs[2] if len(inputs) > 2 else None
    else:  # addmm, baddbmm, _addmm_activation: (bias, A, B, beta, alpha[, out])
        bias, a, b = inputs[0], inputs[1], inputs[2]
    if a is None or b is None:
        raise ValueError("a GEMM without its two matrices")
    k = a.shape[-1]
    if op == "linear":  # x [..., K] @ W[N, K]ᵀ
        n, batch, m = b.shape[0], 1, math.prod(a.shape[:-1])
    else:
        n = b.shape[-1]
        m = a.shape[-2] if len(a.shape) >= 2 else 1
        batch = math.prod(_broadcast([a.shape[:-2], b.shape[:-2]])) if max(len(a.shape), len(b.shape)) > 2 else 1
    read = a.nbytes + b.nbytes + (bias.nbytes if bias is not None else 0)
    return read, batch * m * n * a.itemsize, 2 * batch * m * n * k


def _conv(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
          ) -> tuple[int, int, int | None]:
    """Input, weight and bias read once, the output written once; 2 FLOPs per multiply-add of the output's
    elements with the kernel window (C/groups · kernel size each). Stride, padding, dilation and groups are
    the op's concrete inputs, where CONVOLUTIONS says; transposed convolutions are not counted."""
    x, w = inputs[0], inputs[1]
    if x is None or w is None:
        raise ValueError("a convolution without input and weight")
    at_stride, at_padding, at_dilation, at_groups, at_transposed = CONVOLUTIONS[op]
    if at_transposed is not None and str(concrete[at_transposed]).lower() == "true":
        raise ValueError("transposed convolutions are not counted")
    spatial = len(x.shape) - 2
    stride = _per_dim(_int_list(concrete[at_stride]) or [1], spatial)
    padding = _per_dim(_int_list(concrete[at_padding]) or [0], spatial)
    dilation = _per_dim(_int_list(concrete[at_dilation]) or [1], spatial)
    groups = (_int_list(concrete[at_groups]) or [1])[0]
    out_spatial = [(size + 2 * p - d * (k - 1) - 1) // s + 1
                   for size, k, s, p, d in zip(x.shape[2:], w.shape[2:], stride, padding, dilation, strict=True)]
    out_numel = x.shape[0] * w.shape[0] * math.prod(out_spatial)
    window = (x.shape[1] // groups) * math.prod(w.shape[2:])
    bias = inputs[2] if op not in ("cudnn_convolution",) and len(inputs) > 2 else None
    read = x.nbytes + w.nbytes + (bias.nbytes if bias is not None else 0)
    return read, out_numel * x.itemsize, 2 * out_numel * window


def _attention(op: str, inputs: list[Tensor | None], present: list[Tensor], concrete: list[Any]
               ) -> tuple[int, int, int | None]:
    """q, k, v read once, the output [B, H, L, Ev] written once; Q·Kᵀ and P·V, 2 FLOPs per multiply-add."""
    q, k, v = inputs[0], inputs[1], inputs[2]
    if q is None or k is None or v is None:
        raise ValueError("attention without q, k and v")
    *batch, length, e = q.shape
    s, ev = k.shape[-2], v.shape[-1]
    heads = math.prod(batch)
    return q.nbytes + k.nbytes + v.nbytes, heads * length * ev * q.itemsize, 2 * heads * length * s * (e + ev)


_RULES = {"elementwise": _elementwise, "reduction": _reduction, "norm": _norm, "copy": _copy, "cat": _cat,
          "gemm": _gemm, "conv": _conv, "attention": _attention}

_INTS = re.compile(r"-?\d+")


def _int_list(value: Any) -> list[int]:
    """A concrete input as a list of ints: "[1, 2]" → [1, 2], "3" → [3], "" → []."""
    if isinstance(value, list):
        return [int(v) for v in value]
    if isinstance(value, int):
        return [value]
    return [int(v) for v in _INTS.findall(str(value))] if value not in (None, "") else []


def _per_dim(values: list[int], spatial: int) -> list[int]:
    return values * spatial if len(values) == 1 else values
