"""An independent latency check: plain torch, CUDA events, no fusionviz code. Compare with a session.

python benchmarks/check_latency.py --model mlp --dim 512 --batch 256 --dtype bfloat16 --modes eager,default
"""
import argparse
import json
import statistics

import torch


def reference_ms(fn, x, warmup=20, repeats=7, calls=200):
    """20 warm-up calls, then the median over 7 repeats of 200 calls timed with CUDA events."""
    with torch.no_grad():
        for _ in range(warmup):
            fn(x)
        times = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn(x)
            end.record(); end.synchronize()  # noqa: E702
            times.append(start.elapsed_time(end) / calls)
    return statistics.median(times)


if __name__ == "__main__":
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
        print(json.dumps({"model": a.model, "dtype": a.dtype, "mode": mode, "median_ms": reference_ms(fn, x)}))
