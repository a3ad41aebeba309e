"""The device's ceilings, measured once per device and torch version and cached under the user's cache folder.

A roofline needs what the device reaches, not what its datasheet promises: a large copy from one buffer to
another for bandwidth (bytes read plus bytes written), and a large matmul per dtype for FLOP/s. On the CPU the
same with memcpy (`copy_`) and a matmul on torch's threads. The best of a few timed blocks counts: a ceiling is
what the device can do. Runs in the worker (imports torch).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import torch

from fusionviz.measure.environment import environment
from fusionviz.measure.harness import TORCH_DTYPES, sync, time_calls, use_threads
from fusionviz.records.ceilings import Ceilings
from fusionviz.records.config import RunConfig
from fusionviz.records.decode import DecodeError, decode

# (bytes copied, n of the n × n matmul): large enough to leave the caches and fill the device, short enough for a
# calibration of a few seconds (on the H200: 1 GiB copied in about 0.5 ms, 8192³ bf16 in about 1.5 ms)
SIZES: dict[str, tuple[int, int]] = {"cuda": (1 << 30, 8192), "cpu": (1 << 27, 1024)}
BLOCKS = 5  # timed blocks per figure, the best one kept
MAX_CALL_S = 0.05
# Datasheet figures, for reference beside the measured ones only (NVIDIA H200 SXM: 4.8 TB/s HBM3e; dense
# tensor-core FLOP/s without sparsity, fp32 without TF32).
VENDOR: dict[str, dict[str, float]] = {
    "NVIDIA H200": {"copy_gbps": 4800.0, "matmul_tflops.float32": 67.0, "matmul_tflops.bfloat16": 989.0,
                    "matmul_tflops.float16": 989.0},
}


def cache_folder() -> Path:
    """Where calibrations are kept: `$XDG_CACHE_HOME/fusionviz` (else `~/.cache/fusionviz`)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "fusionviz"


def cache_path(folder: Path, device_name: str, torch_version: str, threads: int) -> Path:
    """The file of one calibration: named by device, torch version and (on the CPU) thread count."""
    key = f"{device_name}-torch{torch_version}" + (f"-{threads}threads" if threads else "")
    return folder / ("ceilings-" + re.sub(r"[^A-Za-z0-9.+-]+", "_", key) + ".json")


def of_config(config: RunConfig, *, redo: bool = False) -> Ceilings:
    """The ceilings of a configuration's device, at its thread count on the CPU (cached, or calibrated now)."""
    use_threads(config.threads)
    device = torch.device(config.device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    return ceilings(device, environment(config.device).device_name, redo=redo)


def ceilings(device: torch.device, device_name: str, *, redo: bool = False, folder: Path | None = None,
             sizes: tuple[int, int] | None = None, dtypes: tuple[str, ...] = tuple(TORCH_DTYPES)) -> Ceilings:
    """This device's ceilings: read from the cache when an earlier calibration of this device and torch
    version left them there (and `redo` is false), else measured now and written there."""
    threads = torch.get_num_threads() if device.type == "cpu" else 0
    path = cache_path(folder or cache_folder(), device_name, torch.__version__, threads)
    if not redo and path.exists():
        try:
            return decode(Ceilings, json.loads(path.read_text()))
        except (OSError, ValueError, DecodeError):
            pass  # a damaged or older file is measured again
    found = calibrate(device, device_name, sizes or SIZES[device.type], dtypes)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(dataclasses.asdict(found)))
    temporary.replace(path)  # whole or not at all: a second worker may read it at the same time
    return found


def calibrate(device: torch.device, device_name: str, sizes: tuple[int, int], dtypes: tuple[str, ...]) -> Ceilings:
    """Measure the copy bandwidth and each dtype's matmul rate (random data, as the vendors measure)."""
    copy_bytes, n = sizes
    source = torch.rand(copy_bytes // 4, device=device)
    target = torch.empty_like(source)

    def copy() -> None:
        target.copy_(source)
    copy_s = _best_seconds(copy, device)
    rates, used = {}, {}
    for name in dtypes:
        rates[name], used[name] = _matmul_tflops(TORCH_DTYPES[name], n, device)
    vendor = next((figures for prefix, figures in VENDOR.items() if device_name.startswith(prefix)), {})
    return Ceilings(device_name=device_name, torch_version=torch.__version__,
                    copy_gbps=2 * (copy_bytes // 4) * 4 / copy_s / 1e9, matmul_tflops=rates, copy_bytes=copy_bytes,
                    matmul_sizes=used, threads=torch.get_num_threads() if device.type == "cpu" else 0,
                    measured_at=datetime.now(UTC).isoformat(timespec="seconds"), vendor=dict(vendor))


def _matmul_tflops(dtype: torch.dtype, n: int, device: torch.device) -> tuple[float, int]:
    """TFLOP/s of an n × n × n matmul in `dtype`, and the n used: halved while one call takes longer than
    MAX_CALL_S (float16 on a CPU runs at a few GFLOP/s, where 1024³ would take seconds a call)."""
    while True:
        a, b = (torch.randn(n, n, device=device).to(dtype) for _ in range(2))

        def product(a: torch.Tensor = a, b: torch.Tensor = b) -> None:
            torch.mm(a, b)
        product()
        sync(device)
        if n <= 128 or time_calls(product, device, 1) <= MAX_CALL_S * 1e3:
            return 2 * n**3 / _best_seconds(product, device) / 1e12, n
        n //= 2


def _best_seconds(work: Callable[[], None], device: torch.device) -> float:
    """Seconds per call of `work` in the fastest of BLOCKS blocks, after one untimed call (the first call
    allocates and picks the kernel)."""
    work()
    sync(device)
    per_call = time_calls(work, device, 1) / 1e3
    calls = max(1, min(50, int(0.02 / max(per_call, 1e-6))))
    return min(time_calls(work, device, calls) for _ in range(BLOCKS)) / 1e3
