"""Does fusionviz's timing agree with the plain CUDA-event loop of check_latency.py at the same moment?

On a shared machine, launch-bound latencies drift between processes (the reference disagrees with itself
by up to 2x from one process to the next), so the two methods are compared in one process on the same
compiled function, alternating ROUNDS times (3 unless given), and each side reports the median of its results.
Run on a GPU machine from the repo root: PYTHONPATH=. python benchmarks/agreement.py [ROUNDS] > agreement.jsonl
"""
import json
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from check_latency import reference_ms

from fusionviz.measure.harness import interleaved_rounds, make_step, prepare, reset_dynamo, warm_until_steady
from fusionviz.records.config import RunConfig

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
MODES = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

for model_name in ("mlp", "linear_ln_gelu"):
    for dtype in ("float32", "bfloat16"):
        for mode in MODES:
            reset_dynamo()
            config = RunConfig(model=model_name, dim=512, batch=256, dtype=dtype, device="cuda:0")
            model, inputs, device = prepare(config)
            fn = model if mode == "eager" else torch.compile(model, mode=mode, dynamic=False)
            with torch.no_grad():
                step = make_step(config, model, fn, inputs)
                warm_until_steady(step, device, config.warmup_calls)
                ours, theirs = [], []
                for _ in range(ROUNDS):
                    rounds = interleaved_rounds({mode: step}, device, config.rounds)[1]
                    ours.append(statistics.median(r[mode] for r in rounds))
                    theirs.append(reference_ms(fn, inputs[0]))
            a, b = statistics.median(ours), statistics.median(theirs)
            print(json.dumps({"model": model_name, "dtype": dtype, "mode": mode, "fusionviz_ms": a,
                              "reference_ms": b, "ratio": a / b, "fusionviz_runs": ours, "reference_runs": theirs}),
                  flush=True)
