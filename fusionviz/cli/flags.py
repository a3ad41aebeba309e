"""The flags `run`, `sweep` and `grid` share (a configuration of the fusion lab, and the file to write), their
choices and defaults read from `records.config`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fusionviz.errors import ConfigError
from fusionviz.measure.catalog import model_info
from fusionviz.records.config import DTYPES, PASSES, RunConfig, parse_dynamic


def add_config_flags(p: argparse.ArgumentParser, *, sizes: bool = True,
                     out: str = "session file to write (.json or .json.gz)") -> None:
    p.add_argument("--model", required=True,
                   help="a model of the zoo or a real one (hf:gpt2, timm:resnet50…; see `models`), or "
                        "package.module:factory")
    if sizes:
        p.add_argument("--dim", type=int, default=None,
                       help="hidden size (or a model's width; see `models`); a real model's default where left out")
        p.add_argument("--batch", type=int, default=None, help="batch size; a real model's default where left out")
    p.add_argument("--seq", type=int, default=None, help="sequence length / image side, for models that have one")
    p.add_argument("--layers", type=int, default=None,
                   help="transformer blocks, for the real models that have the knob (default: the published model's)")
    p.add_argument("--dtype", default=RunConfig.dtype, choices=DTYPES)
    p.add_argument("--device", default=None, help="cuda:N or cpu (default: the first GPU, else the CPU)")
    p.add_argument("--pass", dest="pass_", default=RunConfig.pass_, choices=PASSES)
    p.add_argument("--dynamic", default="false", help="true, false or none (torch's automatic default)")
    p.add_argument("--rounds", type=int, default=RunConfig.rounds,
                   help="interleaved timing rounds per process (each round times every mode once)")
    p.add_argument("--processes", type=int, default=RunConfig.processes,
                   help="fresh worker processes the timing is repeated in; the spread between them is reported")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads of every worker (default: half the cores this process may use)")
    p.add_argument("--timeout", type=float, default=RunConfig.timeout_s,
                   help="seconds per mode before the run is stopped")
    p.add_argument("--out", required=True, help=out)


def config_from(args: argparse.Namespace, modes: tuple[str, ...], *, dim: int | None = None,
                batch: int | None = None, cold_compile: bool = False, memory: bool = True) -> RunConfig:
    """The configuration the flags describe; a grid gives its first dim and batch (its cells set their own). A
    size left out takes the model's default where the catalogue has one (the real models' published sizes), and
    is refused otherwise."""
    info = model_info(args.model)
    seq = args.seq if args.seq is not None else (info.default_seq if info else None)
    dim = dim or getattr(args, "dim", None) or (info.default_dim if info else None)
    batch = batch or getattr(args, "batch", None) or (info.default_batch if info else None)
    if dim is None or batch is None:
        missing = " and ".join(flag for flag, value in (("--dim", dim), ("--batch", batch)) if value is None)
        raise ConfigError(f"{args.model} has no default size: give {missing}")
    return RunConfig(model=args.model, dim=dim, batch=batch, seq=seq, layers=args.layers, dtype=args.dtype,
                     device=args.device or default_device(), pass_=args.pass_, modes=modes,
                     dynamic=parse_dynamic(args.dynamic), rounds=args.rounds, processes=args.processes,
                     threads=args.threads, timeout_s=args.timeout, cold_compile=cold_compile,
                     memory=memory)


def add_memory_flag(parser: argparse.ArgumentParser) -> None:
    """`--no-memory`, for the commands whose runs measure each mode's memory (`run`, `grid`)."""
    parser.add_argument("--no-memory", action="store_true",
                        help="skip each mode's memory: no memory figures, and no process more than the timing ones "
                             "(a few seconds a mode on a CPU)")


def writable(out: str) -> Path:
    """The file a command will write, checked before any work: a measurement of minutes must not end in
    "cannot write" (a directory, a missing folder, a folder without write permission)."""
    path = Path(out)
    if path.is_dir():
        raise ConfigError(f"--out {out} is a directory: give a file name, e.g. {path / 'session.json.gz'}")
    folder = path.parent
    if not folder.is_dir():
        raise ConfigError(f"--out {out}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"--out {out}: the folder {folder} cannot be written to")
    return path


def default_device() -> str:
    """The first GPU, else the CPU; asked of nvidia-smi so that the caller need not import torch."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20, check=True)
            if out.stdout.strip().startswith("GPU 0"):
                return "cuda:0"
        except (OSError, subprocess.SubprocessError):
            pass
    return "cpu"
