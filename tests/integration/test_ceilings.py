"""The calibration of the device's ceilings, on the CPU with small sizes: measured once, then read from its file;
its cache levels; and a real CPU run whose kernels are each held to the ceiling they can meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from fusionviz.analysis.kernel_costs import memory_roof
from fusionviz.analysis.report import analyse
from fusionviz.charts.roofline import ABOVE_COLOUR, above_note, roofline_dots
from fusionviz.charts.views import view_figure
from fusionviz.measure.ceilings import CACHE_SHARE, CPU_CACHES, cache_path, cache_sizes, ceilings, cpu_caches
from fusionviz.measure.client import run_session
from fusionviz.measure.worker import Worker
from fusionviz.records.config import RunConfig
from fusionviz.records.session import Session

SMALL = (1 << 20, 64)  # 1 MiB copied, 64³ matmuls


def test_the_calibration_is_measured_once_and_read_back(tmp_path: Path) -> None:
    cpu = torch.device("cpu")
    first = ceilings(cpu, "CPU: test", folder=tmp_path, sizes=SMALL, dtypes=("float32", "bfloat16"))
    assert first.copy_gbps > 0 and set(first.matmul_tflops) == {"float32", "bfloat16"}
    assert all(rate > 0 for rate in first.matmul_tflops.values())
    # the copy that is to leave the caches moves at least twice the largest of them
    levels = cache_sizes(cpu)
    assert first.copy_bytes == max(SMALL[0], 2 * max((size for _, size in levels), default=0))
    assert first.matmul_sizes == {"float32": 64, "bfloat16": 64}
    assert [(c.level, c.size_bytes, c.copy_bytes) for c in first.caches] == [
        (level, size, size // CACHE_SHARE) for level, size in levels]
    assert all(c.copy_gbps > 0 for c in first.caches)
    path = cache_path(tmp_path, "CPU: test", torch.__version__, torch.get_num_threads())
    assert path.exists()
    # a figure no calibration measures: a second call that returns it read the file instead of measuring
    kept = json.loads(path.read_text()) | {"copy_gbps": 1234.5}
    path.write_text(json.dumps(kept))
    assert ceilings(cpu, "CPU: test", folder=tmp_path, sizes=SMALL).copy_gbps == 1234.5
    # another device name is another key: measured, not read
    assert ceilings(cpu, "CPU: other", folder=tmp_path, sizes=SMALL, dtypes=("float32",)).copy_gbps != 1234.5
    # asked to redo: measured again, and the file holds the new figure
    again = ceilings(cpu, "CPU: test", folder=tmp_path, sizes=SMALL, dtypes=("float32",), redo=True)
    assert again.copy_gbps != 1234.5
    assert json.loads(path.read_text())["copy_gbps"] == again.copy_gbps


def test_the_key_holds_the_torch_version_and_thread_count(tmp_path: Path) -> None:
    names = {cache_path(tmp_path, "NVIDIA H200", "2.11.0+cu130", 0),
             cache_path(tmp_path, "NVIDIA H200", "2.13.0", 0),
             cache_path(tmp_path, "CPU: x", "2.13.0", 1), cache_path(tmp_path, "CPU: x", "2.13.0", 2)}
    assert len(names) == 4
    assert all(p.parent == tmp_path and "/" not in p.name and " " not in p.name for p in names)


def test_the_caches_are_read_from_linux_s_folder(tmp_path: Path) -> None:
    for index, (level, kind, size) in enumerate([("1", "Data", "32K"), ("1", "Instruction", "32K"),
                                                 ("2", "Unified", "512K"), ("3", "Unified", "32768K")]):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size)):
            (folder / name).write_text(value + "\n")
    assert cpu_caches(tmp_path) == [("L2", 512 << 10), ("L3", 32 << 20)]  # L1 and instruction caches left out
    assert cpu_caches(tmp_path / "none") == []


def test_a_cpu_run_holds_each_kernel_to_the_ceiling_it_can_meet(worker: Worker) -> None:
    # the case: eager pointwise_chain at 256 × 64 fp32, whose aten::add moves three 64 KB tensors
    session = run_session(RunConfig(model="pointwise_chain", dim=64, batch=256, modes=("eager", "default"),
                                    rounds=3, processes=1, warmup_calls=3, memory=False), worker=worker,
                          recalibrate=True)
    found = session.ceilings
    assert found is not None and found.copy_gbps > 0
    assert [(c.level, c.size_bytes) for c in found.caches] == cpu_caches(CPU_CACHES)  # this machine's caches
    # kept in the session file and read back; a file without them (every session before) reads as none
    assert Session.from_bytes(session.to_json_bytes()).ceilings == found
    older = json.loads(session.to_json_bytes())
    del older["ceilings"]["caches"]
    assert Session.from_dict(older).ceilings.caches == []  # type: ignore[union-attr]
    report = analyse(session)
    dots = roofline_dots(report, "default")
    adds = [d for d in dots if d.mode == "eager" and d.name == "aten::add" and d.bytes == 3 * 256 * 64 * 4]
    assert adds, [(d.mode, d.name, d.bytes) for d in dots]
    for add in adds:
        roof = memory_roof(found, add.bytes)
        if found.caches and found.caches[0].size_bytes >= add.bytes:
            assert roof.level == found.caches[0].level and add.roof == f"{roof.level} copy"
        assert add.pct_of_ceiling == pytest.approx(100 * add.gbps / roof.gbps)
    # no dot above its roof without a word: ringed on the chart, and the note says how far
    fig = view_figure(report, "roofline", mode="default")
    assert fig.layout.title.text.startswith("Bandwidth")  # a pointwise chain: no counted FLOPs, no roofline
    ringed = [c == ABOVE_COLOUR for t in fig.data if t.mode == "markers" and t.x and t.x[0] is not None
              for c in t.marker.line.color]
    assert sum(ringed) == sum(d.above for d in dots)
    notes = " ".join((a.text or "").replace("<br>", " ") for a in fig.layout.annotations)
    assert (above_note(dots) in notes) if any(d.above for d in dots) else "above" not in notes
