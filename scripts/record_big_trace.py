"""Record a large real torch.profiler trace for the parsing and timeline benchmarks (benchmarks/).

A deep pre-norm transformer encoder trained for a few steps in eager mode: thousands of kernels per step and
well over 100,000 trace events, as a real model gives. Run on a GPU machine from the repo root:

    python3 scripts/record_big_trace.py --out benchmarks/data/transformer24_train.trace.json.gz

Prints the event counts. Plain torch only (no fusionviz code), so the trace is what any user would have.
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
from collections import Counter
from pathlib import Path

import torch
from torch import nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--dim", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(args.dim, nhead=16, dim_feedforward=4 * args.dim, batch_first=True,
                                       norm_first=True, dropout=0.1)
    model = nn.TransformerEncoder(layer, args.layers, enable_nested_tensor=False).to(device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(args.batch, args.seq, args.dim, device=device)

    def step() -> None:
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        optimiser.step()

    for _ in range(2):
        step()
    activities = [torch.profiler.ProfilerActivity.CPU] + (
        [torch.profiler.ProfilerActivity.CUDA] if device == "cuda" else [])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        with torch.profiler.profile(activities=activities, record_shapes=True,
                                    schedule=torch.profiler.schedule(wait=0, warmup=1, active=args.steps),
                                    on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
            for _ in range(args.steps + 1):
                step()
                if device == "cuda":
                    torch.cuda.synchronize()
                prof.step()
        raw = path.read_bytes()
    events = json.loads(raw)["traceEvents"]
    Path(args.out).write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(json.dumps({"events": len(events), "by_category": Counter(e.get("cat", "") for e in events).most_common(8),
                      "json_mb": round(len(raw) / 2**20, 1), "gz_mb": round(Path(args.out).stat().st_size / 2**20, 1),
                      "torch": torch.__version__, "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
                      **vars(args)}))


if __name__ == "__main__":
    main()
