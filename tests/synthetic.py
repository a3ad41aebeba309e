"""Synthetic torch.profiler traces of any size, shaped like a real GPU capture: ProfilerSteps, each with an
ATen op that launches kernels through the CUDA runtime, linked by correlation ids. For caps, fuzzing and
scale tests, where a recorded trace of the needed size would not fit in the repository."""

from __future__ import annotations

import gzip
import json
from typing import Any


def gpu_trace(steps: int, kernels_per_step: int = 3, name: str = "triton_poi_fused_add_mul_0",
              streams: int = 1) -> dict[str, Any]:
    """`steps` ProfilerSteps, each launching `kernels_per_step` kernels of 10 µs, one every 20 µs, in turn on
    `streams` CUDA streams (7, 8, ...); 2 + 2 × kernels events a step."""
    events: list[dict[str, Any]] = []
    corr = 0
    period = 20.0 * kernels_per_step + 20.0
    for s in range(steps):
        t0 = s * period
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "ts": t0,
                       "dur": period - 5, "pid": 1, "tid": 1})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": t0 + 1, "dur": period - 10, "pid": 1,
                       "tid": 1, "args": {"External id": s + 1, "Input Dims": [[8, 8], [8, 8]]}})
        for k in range(kernels_per_step):
            corr += 1
            launch = t0 + 2 + k * 20
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": launch, "dur": 5.0,
                           "pid": 1, "tid": 1, "args": {"correlation": corr, "External id": s + 1}})
            stream = 7 + k % streams
            events.append({"ph": "X", "cat": "kernel", "name": name, "ts": launch + 6, "dur": 10.0, "pid": 0,
                           "tid": stream, "args": {"correlation": corr, "External id": s + 1, "stream": stream,
                                              "grid": [1, 1, 1], "block": [128, 1, 1]}})
    return {"schemaVersion": 1, "traceEvents": events}


def encoded(trace: dict[str, Any], *, gz: bool = True) -> bytes:
    raw = json.dumps(trace).encode()
    return gzip.compress(raw, mtime=0) if gz else raw
