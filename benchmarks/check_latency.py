"""An independent latency check: plain torch, CUDA events, no fusionviz code. Compare with a session.

python benchmarks/check_latency.py --model mlp --dim 512 --batch 256 --dtype bfloat16 --modes eager,default
"""
import argparse
import json
import statistics

import torch

p = argparse.ArgumentParser()
p.add_argument("--model", choices=["mlp", "linear_ln_gelu"]); p.add_argument("--dim", type=int)  # noqa: E702
p.add_argument("--batch", type=int); p.add_argument("--dtype"); p.add_argument("--modes")  # noqa: E702
a = p.parse_args()
torch.manual_seed(0)
d, nn = a.dim, torch.nn
layers = ([nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d)] if a.model == "mlp"
          else [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()])
model = nn.Sequential(*layers).cuda().to(getattr(torch, a.dtype)).eval()
x = torch.randn(a.batch, d, device="cuda", dtype=getattr(torch, a.dtype))
for mode in a.modes.split(","):
    fn = model if mode == "eager" else torch.compile(model, mode=mode, dynamic=False)
    with torch.no_grad():
        for _ in range(20):  # warm-up, compile included
            fn(x)
        times = []
        for _ in range(7):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(200):
                fn(x)
            end.record(); end.synchronize()  # noqa: E702
            times.append(start.elapsed_time(end) / 200)
    print(json.dumps({"model": a.model, "dtype": a.dtype, "mode": mode, "median_ms": statistics.median(times)}))
