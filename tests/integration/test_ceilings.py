"""The calibration of the device's ceilings, on the CPU with small sizes: measured once, then read from its file."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from fusionviz.measure.ceilings import cache_path, ceilings

SMALL = (1 << 20, 64)  # 1 MiB copied, 64³ matmuls


def test_the_calibration_is_measured_once_and_read_back(tmp_path: Path) -> None:
    cpu = torch.device("cpu")
    first = ceilings(cpu, "CPU: test", folder=tmp_path, sizes=SMALL, dtypes=("float32", "bfloat16"))
    assert first.copy_gbps > 0 and set(first.matmul_tflops) == {"float32", "bfloat16"}
    assert all(rate > 0 for rate in first.matmul_tflops.values())
    assert first.copy_bytes == SMALL[0] and first.matmul_sizes == {"float32": 64, "bfloat16": 64}
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
