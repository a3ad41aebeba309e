"""Generated kernel sources: finding a kernel's code, its signature, its size arguments, and diffs.

Plain text work on the Triton / C++ code Inductor generated (kept in sessions), no torch, no plotly.
"""

from __future__ import annotations

import difflib
import re

from fusionviz.records.kernels import normalise_name

_SIGNATURE = re.compile(r"^(def \w+\(.*?\):|extern \"C\"[^{]*?\))", re.MULTILINE | re.DOTALL)
_SIZE_PARAM = re.compile(r"^(ks\d+|s\d+|\w*numel)$")


def find_source(kernel_sources: dict[str, str], name: str) -> str | None:
    """The generated source of a kernel (a mode's or a sweep strategy's `kernel_sources`): by its name, or
    with the CPU profiler's `graph_N_` prefix removed."""
    return kernel_sources.get(name) or kernel_sources.get(normalise_name(name))


def kernel_signature(source: str) -> str:
    """The kernel's signature: a Triton `def ...(...):` line or a C++ `extern "C" void kernel(...)`."""
    found = _SIGNATURE.search(source)
    return " ".join(found.group(1).split()) if found else ""


def size_arguments(source: str) -> list[str]:
    """Sizes the kernel takes as arguments at run time (ks0, xnumel...): what makes it shape-generic.

    A Triton kernel always lists `xnumel`, but a static one overwrites it with a constant in its body;
    only parameters the body does not pin to a number count.
    """
    pinned = {line.split("=")[0].strip() for line in pinned_sizes(source)}
    return [p for p in _parameters(source) if _SIZE_PARAM.match(p) and p not in pinned]


def pinned_sizes(source: str) -> list[str]:
    """The body's lines that set a size parameter to a constant (`xnumel = 4096`): where a static kernel
    differs from a dynamic one whose signature reads the same."""
    params = set(_parameters(source))
    return [line.strip() for line in re.findall(r"^\s+\w+ = -?\d+\s*$", source, re.MULTILINE)
            if line.split("=")[0].strip() in params and _SIZE_PARAM.match(line.split("=")[0].strip())]


def _parameters(source: str) -> list[str]:
    signature = kernel_signature(source)
    inner = signature[signature.find("(") + 1:signature.rfind(")")]
    return [p.split(":")[0].split()[-1].strip("*&") for p in inner.split(",") if p.strip()]


def source_diff(a: str, b: str, label_a: str, label_b: str) -> str:
    """The lines that differ between two kernel sources, as a unified diff."""
    return "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), label_a, label_b, n=0, lineterm=""))
