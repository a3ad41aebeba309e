"""The worker probes only the vector instruction set Inductor picks (`measure.vec_isa`), and Inductor still picks
the set it picks on its own: each case runs in a fresh Python, where Inductor's probes are not yet cached."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from torch._inductor import cpu_vec_isa
heavy = []
check_build = cpu_vec_isa.VecISA.check_build
def counted(self, code):
    if code == cpu_vec_isa.VecISA._avx_code:
        heavy.append(str(self))
    return check_build(self, code)
cpu_vec_isa.VecISA.check_build = counted
said = None
if sys.argv[1] == "fusionviz":
    from fusionviz.measure.vec_isa import probe_only_the_pick
    said = probe_only_the_pick()
print(json.dumps({"pick": str(cpu_vec_isa.pick_vec_isa()), "said": said, "heavy": heavy}))
"""


def _pick(how: str, tmp: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", PROBE, how], check=True, capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "TMPDIR": tmp, "PYTHONPATH": str(ROOT)}, timeout=600)
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "AMD64"), reason="the shortcut is for x86's sets")
def test_the_worker_probes_one_set_and_inductor_picks_the_same() -> None:
    with tempfile.TemporaryDirectory(prefix="fusionviz-vec-isa-") as tmp:
        inductor = _pick("inductor", tmp)
        ours = _pick("fusionviz", tmp)
    assert ours["pick"] == inductor["pick"]
    assert ours["said"] in (inductor["pick"], None)
    heavy_ours, heavy_inductor = ours["heavy"], inductor["heavy"]
    assert isinstance(heavy_ours, list) and isinstance(heavy_inductor, list)
    assert len(heavy_ours) <= 1 and heavy_ours == heavy_inductor[:len(heavy_ours)]
    if ours["said"] is not None:
        assert heavy_ours == [ours["said"]]


HEADER = """
import json, os, threading
import torch
from fusionviz.measure import cpp_header
from fusionviz.measure.vec_isa import probe_only_the_pick
def built():
    folder = cpp_header.header_dir()
    return sorted(n for n in os.listdir(folder) if n.endswith(".gch")) if os.path.isdir(folder) else []
before = built()
probe_only_the_pick()  # the worker's path: the header is built ahead while the set is probed
for thread in threading.enumerate():
    if thread.name == "fusionviz-cpp-header":
        thread.join()
ahead = built()
torch.compile(lambda x: torch.relu(x) + 1)(torch.ones(8))
print(json.dumps({"before": before, "ahead": ahead, "after": built(), "again": cpp_header.build_ahead(None) is None}))
"""


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "AMD64"), reason="the header's flags here are x86's")
def test_the_header_built_ahead_is_the_one_inductor_includes() -> None:
    """On a machine that never compiled (a fresh temporary folder), the header built ahead while the set is probed
    is the only one there after a first compile: Inductor asked for it under the same name, and built no other.
    On a CPU with AVX-512 BF16 a header built with the set's flags from before its probe was a second one
    (2026-12-04: Inductor added `-mavx512bf16` and built its own, 4.5 s later)."""
    with tempfile.TemporaryDirectory(prefix="fusionviz-cpp-header-") as tmp:
        out = subprocess.run([sys.executable, "-c", HEADER], check=True, capture_output=True, text=True, cwd=ROOT,
                             env={**os.environ, "TMPDIR": tmp, "PYTHONPATH": str(ROOT)}, timeout=600)
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["before"] == [] and len(result["ahead"]) == 1
    assert result["after"] == result["ahead"]
    assert result["again"]  # built once: not again where one is there
