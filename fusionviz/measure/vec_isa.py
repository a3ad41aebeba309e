"""Inductor's choice of the CPU's vector instruction set, made with one probe rather than one per set.

Before its first C++ kernel, Inductor probes every vector instruction set the CPU lists (AVX-512 with VNNI,
AVX-512, AVX2 on the development machine) by compiling a test library with each set's flags and loading it in a
child Python, and then uses the first that passed. On a machine that never compiled, that is about 2.7 s of g++
per set; after that, a child Python per set in every fresh process. Only the first set's probe can change what
Inductor picks: when it passes, the pick is that set whatever the others would say. So the first set is probed
with Inductor's own check, and the others are taken as passing (`config.cpp.vec_isa_ok`), which they are never
asked to prove because they are never picked. Anything that makes Inductor pick otherwise (`ATEN_CPU_CAPABILITY`,
`config.cpp.simdlen`, a setting of `vec_isa_ok` already made) leaves Inductor's own probing in place. The C++
header the kernels include is built while the set is probed (`cpp_header`), with the flags the probe will settle
on: the set's probe also compiles a check of each optional feature the CPU reports (AVX-512 BF16; AMX FP16) and adds
its flag where that builds, so a copy taken before the probe lacked `-mavx512bf16` on a CPU that has it, and
Inductor built a second header with its own flags after the first (4.5 s of g++ here, wasted, on 2026-12-04)."""

from __future__ import annotations

import copy
import functools
import logging
import os
import platform

import torch
import torch._inductor.config
from torch._inductor import cpu_vec_isa

from fusionviz.measure import cpp_header

log = logging.getLogger(__name__)
# The optional features a set's probe checks (off Windows) and, where their check builds, adds the flag of
# (`build_arch_flags`): each name is both the attribute the probe sets on the set and torch.cpu's report of the CPU.
OPTIONAL_FEATURES = ("_is_avx512_bf16_supported", "_is_amx_fp16_supported")


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
    expected = as_probed(candidates[0])
    ahead = cpp_header.build_ahead(expected)  # on another core, while the set is probed
    if not candidates[0]:  # bool() is Inductor's probe of that set, cached on it
        return None
    if ahead is not None and expected.build_arch_flags() != candidates[0].build_arch_flags():
        log.warning("the C++ header was built ahead with %r, the probe settled on %r: Inductor builds its own",
                    expected.build_arch_flags(), candidates[0].build_arch_flags())
    cpp.vec_isa_ok = True
    return str(candidates[0])


def as_probed(isa: cpu_vec_isa.VecISA) -> cpu_vec_isa.VecISA:
    """A copy of `isa` (the probe changes a set's flags while it checks a feature) with each optional feature set as
    its probe will find it, from the CPU's own report: the flags Inductor compiles with once the set is probed. A
    compiler that cannot build a feature's check (AMX FP16 needs g++ 13) makes the probe differ; then the header
    built with these flags is not the one Inductor asks for, and it builds its own, as without this module."""
    expected = copy.copy(isa)
    for name in OPTIONAL_FEATURES:
        if hasattr(type(isa), name) and hasattr(torch.cpu, name):
            setattr(expected, name, platform.system() != "Windows" and bool(getattr(torch.cpu, name)()))
    return expected
