"""Where a capture ran: device, versions, CPU and host, recorded inside every session. Runs in the worker."""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import torch

from fusionviz import __version__
from fusionviz.measure.catalog import REAL_MODELS
from fusionviz.records.session import Environment


def environment(device: str, model: str = "") -> Environment:
    """What this capture ran on, recorded inside every session; for a real model, its library's version."""
    dev = torch.device(device)
    triton_version = None
    with contextlib.suppress(ImportError):
        import triton

        triton_version = triton.__version__
    env = Environment(
        device_kind=dev.type,
        torch_version=torch.__version__,
        triton_version=triton_version,
        cpu=_cpu_name(),
        cpu_count=os.cpu_count() or 0,
        python_version=platform.python_version(),
        hostname=socket.gethostname(),
        captured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        fusionviz_version=__version__,
        libraries=_library_version(model),
    )
    if dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        env.device_name = props.name
        env.cuda_version = torch.version.cuda
        env.driver_version = _driver_version()
        env.device_memory_gib = round(props.total_memory / 2**30, 1)
    else:
        env.device_name = f"CPU: {env.cpu} ({env.cpu_count} cores)"
        env.device_memory_gib = round(available_host_bytes() / 2**30, 1)
    return env


def _library_version(model: str) -> dict[str, str]:
    """{library: version} of the library a real model is built with, where it is installed; {} for the zoo and a
    user's own model."""
    info = REAL_MODELS.get(model)
    if info is None or info.library is None:
        return {}
    with contextlib.suppress(ImportError):
        return {info.library: str(getattr(importlib.import_module(info.library), "__version__", ""))}
    return {}


def _cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _driver_version() -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True)
        return out.stdout.strip().splitlines()[0]
    return None


def available_host_bytes() -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
