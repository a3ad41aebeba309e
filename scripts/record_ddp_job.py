"""Record a small DistributedDataParallel job: one torch.profiler Chrome trace per rank, eager and compiled.

The model is a stack of equal Linear + GELU blocks and DDP's buckets are made small (`--bucket-cap-mb`), so
that each bucket holds a block or two: under `torch.compile`, Dynamo's DDPOptimizer splits the compiled graph
at every bucket boundary (each split a graph break that limits fusion) and the gradients' all-reduces overlap
the rest of the backward pass. Plain torch only (no fusionviz code), so the traces are what any user would have.

On the CPU (gloo; what tests/data/ddp_gloo_* holds), from the repo root:

    python scripts/record_ddp_job.py --out tests/data

On a host with two GPUs (NCCL; one process per GPU; the environment's NCCL settings are left as they are):

    python scripts/record_ddp_job.py --backend nccl --device cuda --out sessions/ddp_nccl

On one GPU, gloo over CUDA tensors (the ranks share the GPU; gloo's collectives run on the CPU, each one copying
the gradients to the host and back): GPU kernels and real communication waits, without a second GPU.

    python scripts/record_ddp_job.py --backend gloo --device cuda --out sessions/ddp_gloo_cuda

Writes OUT/ddp_{backend}[_cuda]_{eager,compiled}/rank{N}.trace.json.gz, and recording.txt beside them (what each
rank recorded, and where: torch, the GPU, ranks per GPU), and prints the same.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder that receives ddp_{backend}_{eager,compiled}/")
    parser.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--world-size", type=int, default=2, help="processes (one per GPU with --device cuda)")
    parser.add_argument("--modes", default="eager,compiled", help="eager, compiled, or both")
    parser.add_argument("--compile-mode", default="default", help="torch.compile's mode for the compiled job")
    parser.add_argument("--blocks", type=int, default=4, help="Linear + GELU blocks")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--bucket-cap-mb", type=float, default=1.0,
                        help="DDP's bucket size: a block's weights are dim² × 4 bytes (1 MB at dim 512), so one "
                             "bucket a block; DDPOptimizer refuses a cap below DDP's first bucket (1 MB)")
    parser.add_argument("--warmup", type=int, default=3, help="untraced steps first (the compile happens here)")
    parser.add_argument("--steps", type=int, default=3, help="profiled steps")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per rank on the CPU")
    args = parser.parse_args()
    gpus = torch.cuda.device_count() if args.device == "cuda" else 0
    if args.device == "cuda" and (gpus == 0 or (args.backend == "nccl" and gpus < args.world_size)):
        parser.error(f"--device cuda with {args.backend} needs {args.world_size if args.backend == 'nccl' else 1} "
                     f"GPUs; {gpus} visible (gloo lets ranks share one)")
    # Inductor's C++ kernels appear in a CPU trace only when kernel profiling is on before they compile.
    os.environ.setdefault("TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE", "1")
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(_free_port())
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        folder = Path(args.out) / f"ddp_{args.backend}{'_cuda' if args.device == 'cuda' else ''}_{mode}"
        folder.mkdir(parents=True, exist_ok=True)
        where = {"device": torch.cuda.get_device_name(0), "gpus": gpus,
                 "ranks_per_gpu": -(-args.world_size // gpus)} if gpus else {"device": "cpu"}
        lines = []
        with tempfile.TemporaryDirectory() as tmp:
            mp.spawn(_rank, args=(args, mode, tmp), nprocs=args.world_size, join=True)
            for rank in range(args.world_size):
                raw = (Path(tmp) / f"rank{rank}.json").read_bytes()
                out = folder / f"rank{rank}.trace.json.gz"
                out.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
                lines.append(json.dumps({"file": out.name, **_described(raw), **where,
                                         "gz_kb": round(out.stat().st_size / 1024, 1)}))
        (folder / "recording.txt").write_text("\n".join(lines) + "\n")
        print(*lines, sep="\n")
        os.environ["MASTER_PORT"] = str(_free_port())


class Blocks(nn.Module):
    """Linear + GELU blocks. A module of the script's own: Dynamo starts tracing at user code, and would run an
    `nn.Sequential` (torch's own code) eagerly inside the compiled DDP wrapper."""

    def __init__(self, blocks: int, dim: int) -> None:
        super().__init__()
        self.linears = nn.ModuleList(nn.Linear(dim, dim) for _ in range(blocks))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for linear in self.linears:
            x = nn.functional.gelu(linear(x))
        return x


def _rank(rank: int, args: argparse.Namespace, mode: str, tmp: str) -> None:
    """One rank: join the group, wrap the model in DDP (and compile it), warm up, profile `args.steps` steps."""
    torch.set_num_threads(args.threads)
    # gloo lets ranks share a GPU (cuda:rank modulo the GPUs); NCCL has one GPU per rank (checked in main)
    device = torch.device(f"cuda:{rank % torch.cuda.device_count()}") if args.device == "cuda" else torch.device("cpu")
    if args.device == "cuda":
        torch.cuda.set_device(device)
    dist.init_process_group(args.backend, rank=rank, world_size=args.world_size)
    try:
        torch.manual_seed(0)
        model = DistributedDataParallel(Blocks(args.blocks, args.dim).to(device), bucket_cap_mb=args.bucket_cap_mb,
                                        device_ids=[device.index] if args.device == "cuda" else None)
        step_model: Any = torch.compile(model, mode=args.compile_mode) if mode == "compiled" else model
        optimiser = torch.optim.SGD(model.parameters(), lr=1e-3)
        torch.manual_seed(rank)  # each rank its own data, as a data-parallel job has
        x = torch.randn(args.batch, args.dim, device=device)

        def step() -> None:
            optimiser.zero_grad(set_to_none=True)
            step_model(x).pow(2).mean().backward()
            optimiser.step()
            if args.device == "cuda":
                torch.cuda.synchronize()

        for _ in range(args.warmup):
            step()
        activities = [torch.profiler.ProfilerActivity.CPU] + (
            [torch.profiler.ProfilerActivity.CUDA] if args.device == "cuda" else [])
        path = Path(tmp) / f"rank{rank}.json"
        with torch.profiler.profile(activities=activities, record_shapes=True,
                                    schedule=torch.profiler.schedule(wait=0, warmup=1, active=args.steps),
                                    on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
            for _ in range(args.steps + 1):
                step()
                prof.step()
        dist.barrier()
    finally:
        dist.destroy_process_group()


def _described(raw: bytes) -> dict[str, Any]:
    """What a rank's trace holds: its distributedInfo, event count, steps and compiled graphs."""
    trace = json.loads(raw)
    events = trace["traceEvents"]
    names = [e.get("name", "") for e in events if e.get("ph") == "X"]
    return {"distributedInfo": trace.get("distributedInfo"), "events": len(events),
            "steps": sum(n.startswith("ProfilerStep#") for n in names),
            "compiled_graphs": len({n for n in names if n.startswith("## Call CompiledFxGraph")}),
            "json_kb": round(len(raw) / 1024, 1), "torch": torch.__version__}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


if __name__ == "__main__":
    main()
