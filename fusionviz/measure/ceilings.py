"""The device's ceilings, measured once per device and torch version and cached under the user's cache folder.

A roofline needs what the device reaches, not what its datasheet promises: a large copy from one buffer to
another for bandwidth (bytes read plus bytes written), and a large matmul per dtype for FLOP/s. On the CPU the
same with memcpy (`copy_`) and a matmul on torch's threads. The best of a few timed blocks counts: a ceiling is
what the device can do. Runs in the worker (imports torch).

A kernel whose working set fits in a cache is not held back by the memory: on the CPU an eager `aten::add` of
64 KB tensors ran at 2.7 times a copy that left the caches. So each level of cache the device reports (a GPU's
L2; a CPU's L2 and L3) gets a copy of its own, source and target together half its capacity, with torch's
`copy_`: on the CPU as the kernels pay it (per-call overhead included), on a GPU replayed from a CUDA graph, as
kernels that run back to back meet it. L1 is left out: a copy that fits in it is timed by the call's overhead,
not by the cache.
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
from fusionviz.records.ceilings import CacheCeiling, Ceilings
from fusionviz.records.config import RunConfig
from fusionviz.records.decode import DecodeError, decode

# (bytes copied, n of the n × n matmul): large enough to leave the caches and fill the device, short enough for a
# calibration of a few seconds (on the H200: 1 GiB copied in about 0.5 ms, 8192³ bf16 in about 1.5 ms)
SIZES: dict[str, tuple[int, int]] = {"cuda": (1 << 30, 8192), "cpu": (1 << 27, 1024)}
BLOCKS = 5  # timed blocks per figure, the best one kept
MAX_CALL_S = 0.05
BLOCK_S = 0.02  # a timed block's length
MAX_CALLS = 5000  # calls in a block at most (a copy that fits in a cache takes a few µs)
GRAPH_COPIES = 20  # copies per CUDA-graph replay on a GPU
CACHE_SHARE = 4  # a cache's copy moves buffers of a quarter of its capacity each: source and target fill half
SMALLEST_CACHE_COPY = 16 << 10  # bytes: below this a copy times torch's per-call overhead, not the cache
CPU_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
CALIBRATION = 2  # the calibration's version, in its file's name: a file of an older one is measured again
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
    key = f"v{CALIBRATION}-{device_name}-torch{torch_version}" + (f"-{threads}threads" if threads else "")
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


def calibrate(device: torch.device, device_name: str, sizes: tuple[int, int], dtypes: tuple[str, ...],
              caches: list[tuple[str, int]] | None = None) -> Ceilings:
    """Measure the copy bandwidth out of the caches and within each of `caches` (level, bytes; default: those
    the device reports, `cache_sizes`), and each dtype's matmul rate (random data, as the vendors measure). The
    copy that is to leave the caches moves at least twice the largest cache."""
    levels = cache_sizes(device) if caches is None else caches
    copy_bytes, n = sizes
    copy_bytes = max(copy_bytes, 2 * max((size for _, size in levels), default=0))
    within = [CacheCeiling(level, size, _copy_gbps(size // CACHE_SHARE, device, graphed=True),
                           size // CACHE_SHARE // 4 * 4)
              for level, size in levels if size // CACHE_SHARE >= SMALLEST_CACHE_COPY]
    copy_gbps = _copy_gbps(copy_bytes, device)
    rates, used = {}, {}
    for name in dtypes:
        rates[name], used[name] = _matmul_tflops(TORCH_DTYPES[name], n, device)
    vendor = next((figures for prefix, figures in VENDOR.items() if device_name.startswith(prefix)), {})
    return Ceilings(device_name=device_name, torch_version=torch.__version__, copy_gbps=copy_gbps,
                    matmul_tflops=rates, copy_bytes=copy_bytes, matmul_sizes=used,
                    threads=torch.get_num_threads() if device.type == "cpu" else 0,
                    measured_at=datetime.now(UTC).isoformat(timespec="seconds"), vendor=dict(vendor), caches=within)


def cache_sizes(device: torch.device) -> list[tuple[str, int]]:
    """The levels of cache that get a copy of their own, smallest first, as (name, bytes): a GPU's L2 (its
    properties' `L2_cache_size`); a CPU's unified or data caches from level 2 up, as Linux reports its first
    core's (none where it does not)."""
    if device.type == "cuda":
        size = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0)
        return [("L2", size)] if size > 0 else []
    return cpu_caches(CPU_CACHES)


def cpu_caches(folder: Path) -> list[tuple[str, int]]:
    """The caches under a Linux `cpu0/cache` folder (one `index*` folder per cache, with `level`, `type` and
    `size` such as "512K"), from level 2 up, instruction caches left out; [] where the folder cannot be read."""
    found: dict[int, int] = {}
    for index in sorted(folder.glob("index*")):
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        match = re.fullmatch(r"(\d+)([KMG]?)", size)
        if kind in ("Data", "Unified") and level.isdigit() and int(level) >= 2 and match:
            found[int(level)] = int(match[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[match[2]]
    return [(f"L{level}", size) for level, size in sorted(found.items())]


def _copy_gbps(nbytes: int, device: torch.device, graphed: bool = False) -> float:
    """Bytes read plus written per second (GB/s) of `copy_` between two float32 buffers of `nbytes` each; on a
    GPU and `graphed`, GRAPH_COPIES of them replayed as one CUDA graph (for copies short enough that launches
    would be timed; the large copy is timed launched, as it always was)."""
    source = torch.rand(max(1, nbytes // 4), device=device)
    target = torch.empty_like(source)

    def copy() -> None:
        target.copy_(source)
    if device.type != "cuda" or not graphed:
        return 2 * source.numel() * 4 / _best_seconds(copy, device) / 1e9
    return 2 * source.numel() * 4 * GRAPH_COPIES / _best_seconds(_graphed(copy, device, GRAPH_COPIES), device) / 1e9


def _graphed(work: Callable[[], None], device: torch.device, times: int) -> Callable[[], None]:
    """`times` calls of `work` captured as one CUDA graph, its replay returned: a copy that fits in L2 takes a few
    µs, about what a launch from Python takes, so launched one by one the launches would be timed (on an H100, a
    13 MB copy measured 3.1 TB/s launched in a loop and 5.3 TB/s replayed)."""
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        work()  # once on a side stream before the capture, as CUDA graphs ask
    torch.cuda.current_stream(device).wait_stream(side)
    with torch.cuda.graph(graph):
        for _ in range(times):
            work()
    return graph.replay


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
    calls = max(1, min(MAX_CALLS, int(BLOCK_S / max(per_call, 1e-7))))
    return min(time_calls(work, device, calls) for _ in range(BLOCKS)) / 1e3
