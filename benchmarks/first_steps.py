"""The first N profiled steps of a recorded trace, as a trace of their own: bench_parse.py's medium size, cut
from the recorded big trace (benchmarks/data/transformer_train.trace.json.gz), reproducibly (the same bytes
every time).

Kept: every host event (CPU ops, runtime and driver calls, annotations, flow starts) that begins before step
N + 1 does; the kernels, memory operations and flow ends linked by correlation to a launch kept; the GPU's step
annotations that begin before the last kept GPU event ends; metadata and the trace's own span. Its first three
steps are 81,507 events.

    .venv/bin/python benchmarks/first_steps.py OUT [--steps 3] [--trace TRACE]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "benchmarks" / "data" / "transformer_train.trace.json.gz"
GPU_WORK = ("kernel", "gpu_memset", "gpu_memcpy")
LAUNCHES = ("cuda_runtime", "cuda_driver")


def first_steps(source: Path, steps: int, out: Path) -> int:
    """Write `source`'s first `steps` profiled steps to `out` (gzipped); returns the number of events kept."""
    trace = json.loads(gzip.decompress(source.read_bytes()))
    events: list[dict[str, Any]] = trace["traceEvents"]
    starts = sorted(e["ts"] for e in events
                    if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    if len(starts) <= steps:
        raise SystemExit(f"{source} has {len(starts)} profiled steps: nothing to cut after step {steps}")
    cut = starts[steps]
    launched = {e["args"]["correlation"] for e in events
                if e.get("cat") in LAUNCHES and e["ts"] < cut and "correlation" in e.get("args", {})}
    gpu_end = max(e["ts"] + e["dur"] for e in events
                  if e.get("cat") in GPU_WORK and e["args"].get("correlation") in launched)

    def kept(e: dict[str, Any]) -> bool:
        cat, ph = e.get("cat"), e.get("ph")
        if ph in ("M", "i") or cat == "Trace":
            return True
        if cat in GPU_WORK:
            return e["args"].get("correlation") in launched
        if cat == "gpu_user_annotation":
            return bool(e["ts"] < gpu_end)
        if cat == "ac2g" and ph == "f":  # a flow's end on the GPU: its id is the launch's correlation
            return e["id"] in launched
        return bool(e["ts"] < cut)

    cut_events = [e for e in events if kept(e)]
    out.write_bytes(gzip.compress(json.dumps({**trace, "traceEvents": cut_events}).encode(), compresslevel=6,
                                  mtime=0))
    return len(cut_events)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--trace", type=Path, default=SOURCE)
    args = parser.parse_args()
    print(first_steps(args.trace, args.steps, args.out))


if __name__ == "__main__":
    main()
