"""Bytes each Inductor kernel reads and writes, from the generated wrapper: the buffers of each kernel call.

The wrapper (`output_code`) allocates every buffer with its shape and dtype (`empty_strided_cuda(...)`),
checks each graph input's shape (`assert_size_stride`, dtypes in `get_args`), renames reused buffers and views
(`buf4 = buf0; del buf0  # reuse`, `reinterpret_tensor(buf, shape, ...)`), and calls each kernel with its
buffers in the order of the kernel's parameters. A parameter's name says the direction, as Inductor's own
estimate (`kernel_num_gb`) reads it: `in_ptr*` and a template's `arg_A`/`arg_B` are read, `out_ptr*` written,
`in_out_ptr*` written, and read too where the kernel's source loads it (Inductor counts it twice always; a
buffer reused in place that the kernel only stores into moves once). A template's FLOPs follow from its
operands: 2 · M · N · K with K the shared dimension of `arg_B` and the output.
"""

from __future__ import annotations

import math
import re

import msgspec

from fusionviz.analysis.op_costs import DTYPE_ITEMSIZE, Cost
from fusionviz.records.derived import derived
from fusionviz.records.session import ModeRun

_SHAPE = r"\(([^()]*)\)"
_ALLOC = re.compile(rf"^\s*(\w+) = empty_strided_\w+\({_SHAPE}, {_SHAPE}, torch\.(\w+)\)", re.MULTILINE)
_RAND = re.compile(rf"^\s*(\w+) = rand_strided\({_SHAPE}, {_SHAPE}, device=[^,]+, dtype=torch\.(\w+)\)",
                   re.MULTILINE)
_ASSERT = re.compile(rf"assert_size_stride\((\w+), {_SHAPE}")
_ALIAS = re.compile(r"^\s*(\w+) = (\w+); del \w+\s+# reuse", re.MULTILINE)
_VIEW = re.compile(rf"^\s*(\w+) = reinterpret_tensor\((\w+), {_SHAPE}", re.MULTILINE)
_CALL = re.compile(r"^\s*((?:triton|cpp)_\w+?)(?:\.run)?\((.*)\)\s*$", re.MULTILINE)
_REINTERPRET = re.compile(rf"^reinterpret_tensor\((\w+), {_SHAPE}")
_TRITON_PARAMS = r"^def {name}\(([^)]*)\)"
_CPP_PARAMS = re.compile(r"void\s+kernel\(([^)]*)\)")
_CPP_ALIAS = re.compile(r"auto (\w+) = (\w+);")


class Buffer(msgspec.Struct, frozen=True):
    shape: tuple[int, ...] | None  # None where a size is symbolic (dynamic shapes)
    itemsize: int

    @property
    def nbytes(self) -> int | None:
        return None if self.shape is None else math.prod(self.shape) * self.itemsize


@derived
def run_kernel_calls(run: ModeRun) -> dict[str, list[Cost | None]]:
    """`kernel_calls` of a run's wrapper modules and kernel sources, read once per run."""
    return kernel_calls(run.output_code, run.kernel_sources)


def kernel_calls(output_code: list[str], kernel_sources: dict[str, str]) -> dict[str, list[Cost | None]]:
    """Each kernel's cost at each of its calls, in the order the wrappers call them (modules in order): None
    for a call whose buffers are not all known (a symbolic size, a parameter list not found)."""
    calls: dict[str, list[Cost | None]] = {}
    for module in output_code:
        buffers = _buffers(module)
        for name, args in _CALL.findall(module):
            params = _params(kernel_sources.get(name, ""), name)
            calls.setdefault(name, []).append(_call_cost(args, params, buffers, kernel_sources.get(name, ""))
                                              if params else None)
    return calls


def _dims(text: str) -> tuple[int, ...] | None:
    words = [w.strip() for w in text.split(",") if w.strip()]
    return tuple(int(w) for w in words) if all(w.isdigit() for w in words) else None


def _buffers(module: str) -> dict[str, Buffer]:
    """Every named buffer of a wrapper with its shape and element size: allocations, graph inputs (their dtype
    from `get_args`), reuses and views, in the order the text defines them."""
    itemsize: dict[str, int] = {}
    found: dict[str, Buffer] = {}
    for name, shape, _, dtype in _RAND.findall(module):
        itemsize[name] = DTYPE_ITEMSIZE.get(dtype, 0)
        found[name] = Buffer(_dims(shape), itemsize[name])
    for name, shape in _ASSERT.findall(module):
        if name in itemsize:
            found[name] = Buffer(_dims(shape), itemsize[name])
    events = [(m.start(), "alloc", m.groups()) for m in _ALLOC.finditer(module)]
    events += [(m.start(), "alias", m.groups()) for m in _ALIAS.finditer(module)]
    events += [(m.start(), "view", m.groups()) for m in _VIEW.finditer(module)]
    for _, kind, groups in sorted(events):
        if kind == "alloc":
            name, shape, _, dtype = groups
            found[name] = Buffer(_dims(shape), DTYPE_ITEMSIZE.get(dtype, 0))
        elif groups[1] in found:
            base = found[groups[1]]
            found[groups[0]] = base if kind == "alias" else Buffer(_dims(groups[2]), base.itemsize)
    return found


def _params(source: str, name: str) -> list[str]:
    """A kernel's parameter names, in order: its Triton `def` (by its name: a scan's source defines its combine
    function first) or a C++ `kernel(...)` (types dropped)."""
    if match := re.search(_TRITON_PARAMS.format(name=re.escape(name)), source, re.MULTILINE):
        return [p.split(":")[0].strip() for p in match.group(1).split(",") if p.strip()]
    if match := _CPP_PARAMS.search(source):
        return [p.split()[-1].strip("*&") for p in match.group(1).split(",") if p.strip()]
    return []


def _split_args(text: str) -> list[str]:
    """Top-level comma-separated arguments of a call (views nest parentheses)."""
    args, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return [a for a in args if a and "=" not in a]  # `stream=stream0` is no buffer


def _argument(text: str, buffers: dict[str, Buffer]) -> Buffer | None:
    if match := _REINTERPRET.match(text):
        base = buffers.get(match.group(1))
        return Buffer(_dims(match.group(2)), base.itemsize) if base else None
    return buffers.get(text)


def _gathers(source: str, param: str) -> bool:
    """Whether the kernel indexes `param` by values it loaded (an embedding's rows by token ids: Triton's
    `tl.load(in_ptr1 + (r0_2 + 768*tmp4)`, C++'s `in_ptr1[x0 + 768L*tmp7]`), so that it touches some rows of the
    buffer, not all: its bytes are not the buffer's."""
    names = {param} | {alias for alias, target in _CPP_ALIAS.findall(source) if target == param}
    for name in names:
        for triton_index, cpp_index in re.findall(rf"tl\.load\(\s*{name}\s*\+\s*\((.*?)\),|\b{name}\[(.*?)\]",
                                                  source):
            if re.search(r"\btmp\d+", triton_index or cpp_index):
                return True
    return False


def _loads(source: str, param: str) -> bool:
    """Whether the kernel's source reads `param` (itself or a C++ alias of it: `auto in_ptr0 = in_out_ptr1;`)."""
    names = {param} | {alias for alias, target in _CPP_ALIAS.findall(source) if target == param}
    return any(re.search(rf"tl\.load\(\s*{n}\b|loadu\(\s*{n}\b|\b{n}\[[^\]]*\](?!\s*=[^=])", source)
               for n in names)


def _call_cost(args: str, params: list[str], buffers: dict[str, Buffer], source: str) -> Cost | None:
    read = written = 0
    operands: dict[str, Buffer] = {}
    for param, text in zip(params, _split_args(args), strict=False):
        if "ptr" not in param and param not in ("arg_A", "arg_B"):
            continue
        buffer = _argument(text, buffers)
        size = buffer.nbytes if buffer else None
        if buffer is None or size is None or _gathers(source, param):
            return None
        operands[param] = buffer
        if param.startswith("in_out_ptr"):
            written += size
            read += size if _loads(source, param) else 0
        elif param.startswith("out_ptr"):
            written += size
        else:
            read += size
    return Cost(read, written, read + written, _template_flop(operands), "inductor")


def _template_flop(operands: dict[str, Buffer]) -> int | None:
    """2 · M · N · K of a GEMM template (its operand `arg_B` holds K · N elements per batch; the output M · N)."""
    b = operands.get("arg_B")
    out = next((v for k, v in operands.items() if k.startswith("out_ptr")), None)
    if b is None or out is None or b.shape is None or out.shape is None or len(out.shape) < 2:
        return None
    out_numel, n = math.prod(out.shape), out.shape[-1]
    batch = math.prod(out.shape[:-2])
    k = math.prod(b.shape) // max(batch * n, 1)
    return 2 * out_numel * k
