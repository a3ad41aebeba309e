"""Inductor's precompiled C++ header, built beside the probe of the CPU's vector instruction set on a machine that
never compiled.

The first C++ kernel on a machine waits for Inductor to precompile the header every kernel includes
(`cpp_prefix.h`, 6.6 s of g++ on the development machine), and Inductor starts that only once it has probed the
vector instruction set (2-3 s of g++) and traced and lowered the graph (about 3 s in a fresh process): 17 s from
a fresh process to a first kernel, one core busy at a time (benchmarks/RESULTS.md). The header's flags are known
as soon as the set to be probed is: `build_ahead` starts building it then, with the command Inductor will ask
for, in a thread of its own, so that the header, the probe and the tracing share the machine's cores. Inductor's
own request for the header then finds it built (or waits on the lock the build holds) under the same name: the
name hashes the command line, so a header built with other flags than Inductor's would only be one it never uses.
Only where no header was ever built: elsewhere Inductor's check of it costs 0.2 s, which this would only repeat.
"""

from __future__ import annotations

import logging
import os
import threading

import torch._inductor.config
from torch._inductor import codecache
from torch._inductor.cpu_vec_isa import VecISA

log = logging.getLogger(__name__)


def header_dir() -> str:
    """Where Inductor keeps its precompiled headers (outside its cache folder, under the temporary folder)."""
    return codecache._HEADER_DIR


def never_built() -> bool:
    """Whether no C++ header was ever precompiled here (the first compile on this machine is yet to come)."""
    folder = header_dir()
    return not (os.path.isdir(folder) and any(name.endswith(".gch") for name in os.listdir(folder)))


def build_ahead(isa: VecISA) -> threading.Thread | None:
    """Start building the header Inductor's C++ kernels will include with `isa`'s flags (the set as its probe will
    leave it, `vec_isa.as_probed`: a set not yet probed lacks the flags of its optional features), where none was
    ever built and Inductor precompiles headers; returns the thread, which logs rather than raises (Inductor
    builds the header itself if this one is not the one it asks for)."""
    if not (torch._inductor.config.cpp_cache_precompile_headers and never_built()):
        return None
    thread = threading.Thread(target=_build, args=(isa,), name="fusionviz-cpp-header")  # a Python ending waits
    thread.start()
    return thread


def _build(isa: VecISA) -> None:
    """What `CppPythonBindingsCodeCache.load_async` asks `_precompile_header` for, for a kernel of the default
    wrapper (no separate kernel code, so built at -O3, no extra flags)."""
    try:
        from torch._inductor.cpp_builder import CppBuilder, CppTorchDeviceOptions

        cache = codecache.CppPythonBindingsCodeCache
        header = cache._get_uncompiled_header("cpu")
        if header is None:
            return
        command = {**cache.cpp_compile_command_flags, "device_type": "cpu", "extra_flags": (),
                   "use_relative_path": torch._inductor.config.is_fbcode(), "vec_isa": isa}
        option = CppTorchDeviceOptions(compile_only=False, min_optimize=False, **command)
        line = CppBuilder(name="o", sources="i", BuildOption=option).get_command_line()
        codecache._precompile_header(header, line, min_optimize=False, **command)
    except Exception:  # an internal API of Inductor's, which may change: Inductor then builds the header itself
        log.warning("could not build Inductor's C++ header ahead", exc_info=True)
