"""One iteration of a zoo model in one mode, for Nsight Compute to count its DRAM bytes (GPU only):

    ncu --profile-from-start off --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \\
        python3 scripts/dram_bytes.py --model mlp --dim 512 --batch 256 --dtype float32 --mode default > out.csv

The model is built, compiled and warmed up as fusionviz's capture does (`harness.prepare`, `mode_step`,
`warm_until_steady`) with the profiler range closed; then exactly one iteration runs between cudaProfilerStart and
cudaProfilerStop, so the CSV holds that iteration's kernels and nothing of the compile or the warm-up.
`scripts/accounting_summary.py --ncu` sums it beside the session's estimate."""

from __future__ import annotations

import argparse

import torch

from fusionviz.measure.harness import grad_mode, mode_step, prepare, reset_dynamo, sync, warm_until_steady
from fusionviz.records.config import DTYPES, MODES, RunConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--dim", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--dtype", choices=DTYPES, default="float32")
    parser.add_argument("--mode", choices=MODES, default="eager")
    parser.add_argument("--device", default="cuda:0")
    args = parser.parse_args()
    config = RunConfig(model=args.model, dim=args.dim, batch=args.batch, dtype=args.dtype, device=args.device,
                       modes=("eager", args.mode))
    reset_dynamo()
    model, inputs, device = prepare(config)
    with grad_mode(config):
        step = mode_step(config, args.mode, model, inputs, device)
        step()
        warm_until_steady(step, device, config.warmup_calls)
        sync(device)
        torch.cuda.profiler.start()
        step()
        sync(device)
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
