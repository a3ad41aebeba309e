"""Inductor's choice of the CPU's vector instruction set, made with one probe rather than one per set.

Before its first C++ kernel, Inductor probes every vector instruction set the CPU lists (AVX-512 with VNNI,
AVX-512, AVX2 on the development machine) by compiling a test library with each set's flags and loading it in a
child Python, and then uses the first that passed. On a machine that never compiled, that is about 2.7 s of g++
per set; after that, a child Python per set in every fresh process. Only the first set's probe can change what
Inductor picks: when it passes, the pick is that set whatever the others would say. So the first set is probed
with Inductor's own check, and the others are taken as passing (`config.cpp.vec_isa_ok`), which they are never
asked to prove because they are never picked. Anything that makes Inductor pick otherwise (`ATEN_CPU_CAPABILITY`,
`config.cpp.simdlen`, a setting of `vec_isa_ok` already made) leaves Inductor's own probing in place. The C++
header the kernels include is built while the set is probed (`cpp_header`)."""

from __future__ import annotations

import copy
import functools
import os
import platform

import torch._inductor.config
from torch._inductor import cpu_vec_isa

from fusionviz.measure import cpp_header


@functools.cache
def probe_only_the_pick() -> str | None:
    """Probe the vector instruction set Inductor will pick and skip the rest; returns its name, or None where
    Inductor's own probing is left in place (another architecture, a pick forced by the user, a failed probe)."""
    cpp = torch._inductor.config.cpp
    if (platform.machine() not in ("x86_64", "AMD64") or os.environ.get("ATEN_CPU_CAPABILITY")
            or cpp.simdlen is not None or cpp.vec_isa_ok is not None):
        return None
    listed = cpu_vec_isa.x86_isa_checker()
    candidates = [isa for isa in cpu_vec_isa.supported_vec_isa_list
                  if all(flag in listed for flag in str(isa).split())]
    if not candidates:
        return None
    cpp_header.build_ahead(copy.copy(candidates[0]))  # on another core, while the set is probed
    if not candidates[0]:  # bool() is Inductor's probe of that set, cached on it
        return None
    cpp.vec_isa_ok = True
    return str(candidates[0])
