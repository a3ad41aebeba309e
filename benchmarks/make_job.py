"""Make the job benchmark's data: 8 ranks of a data-parallel job, about 200,000 events each, from the recorded
big trace (benchmarks/data/transformer_train.trace.json.gz), reproducibly (the same bytes every time).

Each rank is the trace with its first events (in time order) repeated after its end, shifted past it, up to
`--events` events (ids of the copy offset so that launches still link to their kernels, steps numbered on); in
each step an NCCL all-reduce kernel on a stream of its own over the step's last 40 % (its launch on the step's
thread), so that communication overlaps the backward pass's kernels as a DDP job's does; every time of rank r
stretched by 1 + r/100 (rank 3 by a further 8 %: a straggler), and its `distributedInfo` set to rank r of an
8-rank NCCL job.

    .venv/bin/python benchmarks/make_job.py [--out benchmarks/data/job8] [--ranks 8] [--events 200000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "benchmarks" / "data" / "transformer_train.trace.json.gz"
DEFAULT_OUT = ROOT / "benchmarks" / "data" / "job8"
ID_ARGS = ("External id", "correlation")
STEP = re.compile(r"^ProfilerStep#(\d+)$")
STRAGGLER, STRAGGLER_FACTOR = 3, 1.08


def make_job(out: Path = DEFAULT_OUT, ranks: int = 8, events: int = 200_000) -> list[Path]:
    """Write the ranks' traces into `out` (rank{r}.trace.json.gz); returns their paths."""
    trace = json.loads(gzip.decompress(SOURCE.read_bytes()))
    base = trace["traceEvents"]
    timed = sorted((e for e in base if e.get("ph") in ("X", "s", "f") and "ts" in e), key=lambda e: e["ts"])
    start, end = timed[0]["ts"], max(e["ts"] + e.get("dur", 0) for e in timed)
    last_step = max(int(m.group(1)) for e in base if (m := STEP.match(e.get("name", ""))))
    extra = [_copied(e, end - start + 1000.0, last_step) for e in timed[: max(0, events - len(base))]]
    extra += _all_reduces(base + extra)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        stretch = (1 + rank / 100) * (STRAGGLER_FACTOR if rank == STRAGGLER else 1.0)
        rank_events = [_stretched(e, start, stretch) for e in base + extra]
        rank_trace = {**trace, "traceEvents": rank_events,
                      "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks}}
        path = out / f"rank{rank}.trace.json.gz"
        path.write_bytes(gzip.compress(json.dumps(rank_trace).encode(), compresslevel=6, mtime=0))
        paths.append(path)
    return paths


def _copied(e: dict[str, Any], shift: float, last_step: int) -> dict[str, Any]:
    copy = {**e, "ts": e["ts"] + shift}
    if isinstance(e.get("args"), dict):
        copy["args"] = {k: v + 10_000_000 if k in ID_ARGS and isinstance(v, int) else v for k, v in e["args"].items()}
    if "id" in e and isinstance(e["id"], int):  # flow arrows between a launch and its kernel
        copy["id"] = e["id"] + 10_000_000
    if m := STEP.match(e.get("name", "")):
        copy["name"] = f"ProfilerStep#{int(m.group(1)) + last_step}"
    return copy


def _all_reduces(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An NCCL all-reduce per CPU-side step, over its last 40 %, launched by a cudaLaunchKernel as it begins."""
    gpu = next(e for e in events if e.get("cat") == "kernel")
    added = []
    for n, step in enumerate(e for e in events if e.get("cat") == "user_annotation" and STEP.match(e["name"])):
        corr, begin = 20_000_000 + n, step["ts"] + 0.6 * step["dur"]
        added.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": step["pid"],
                      "tid": step["tid"], "ts": begin, "dur": 4.0, "args": {"correlation": corr}})
        added.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*)",
                      "pid": gpu["pid"], "tid": 99, "ts": begin + 5.0, "dur": 0.4 * step["dur"] - 10.0,
                      "args": {"correlation": corr, "stream": 99, "device": gpu.get("args", {}).get("device", 0),
                               "grid": [8, 1, 1], "block": [512, 1, 1]}})
    return added


def _stretched(e: dict[str, Any], start: float, factor: float) -> dict[str, Any]:
    if "ts" not in e or factor == 1.0:
        return e
    stretched = {**e, "ts": start + (e["ts"] - start) * factor}
    if "dur" in e:
        stretched["dur"] = e["dur"] * factor
    return stretched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args()
    for path in make_job(args.out, args.ranks, args.events):
        print(f"{path} {path.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
