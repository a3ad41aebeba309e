"""Check sessions of the real models against their own traces, for issue 46's closing note:

    python3 scripts/check_real_models.py [--modules hf:gpt2,timm:resnet50] SESSION.json.gz ...

For every mode of every session: its kernels per profiled step, counted again from the Chrome trace the session
keeps with a plain JSON read (each `cat == "kernel"` event, in the `ProfilerStep#N` whose span holds the runtime
call that launched it, by the call's `correlation`), against the kernel rows fusionviz read, step by step; and, for
the models named by --modules, the module table's kernel time (`analysis.modules.module_table`) against the kernel
µs per step of that same plain read, and the module names the table holds. Prints one line per mode and each
problem; exits 1 on any problem (or where a named model has no session), else 0.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

from fusionviz.analysis.modules import UNKNOWN, module_table
from fusionviz.records.files import open_path
from fusionviz.records.kernels import MEMORY_CLASS
from fusionviz.records.session import ModeRun, Session

RUNTIME = ("cuda_runtime", "cuda_driver")
# Module names each model's table must hold in every mode, eager and compiled, as its library names them in the
# releases tested (transformers 4 and 5 name these alike; its ViT's were renamed in 5, so it is checked as every
# model is, by a module of its second block).
EXPECTED_MODULES: dict[str, set[str]] = {
    "hf:gpt2": {"h.0.attn.c_attn", "h.0.mlp.act", "h.1.mlp.c_proj"},
    "hf:bert": {"encoder.layer.0.attention.self.query", "encoder.layer.1.output.dense"},
    "hf:llama": {"layers.0.self_attn.q_proj", "layers.0.mlp.down_proj", "layers.1.post_attention_layernorm"},
    "timm:resnet50": {"layer1.0.conv1", "layer3.1.conv2", "layer4.2.conv3"},
    "timm:convnext_tiny": {"stages.0.blocks.0.conv_dw", "stages.2.blocks.8.mlp.fc2"},
    "tv:resnet18": {"layer1.0.conv1", "layer4.1.conv2"},
}
SECOND_BLOCK = re.compile(r"\.1(?:\.|$)")


def raw_steps(trace: dict[str, Any]) -> list[tuple[int, float]]:
    """Per `ProfilerStep#N` of a Chrome trace, in time order: the kernels launched in it and their summed
    duration (µs), read with nothing but json: a kernel belongs to the step whose span holds its launching
    runtime call (same `correlation`); kernels launched outside every step are left out."""
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict) and e.get("ph") == "X"]
    steps = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in events
                   if str(e.get("name", "")).startswith("ProfilerStep#")
                   and e.get("cat") in ("user_annotation", "cpu_op"))
    launched = {e["args"]["correlation"]: float(e["ts"]) for e in events
                if e.get("cat") in RUNTIME and "correlation" in (e.get("args") or {})}
    counts = [[0, 0.0] for _ in steps]
    for e in events:
        if e.get("cat") != "kernel":
            continue
        at = launched.get((e.get("args") or {}).get("correlation"))
        step = next((i for i, (start, end) in enumerate(steps) if at is not None and start <= at <= end), None)
        if step is not None:
            counts[step][0] += 1
            counts[step][1] += max(float(e.get("dur", 0)), 0.0)
    return [(int(n), float(us)) for n, us in counts]


def trace_of(run: ModeRun) -> dict[str, Any]:
    """The Chrome trace a mode's session keeps (gzipped JSON, base64)."""
    if not run.trace_gz_b64:
        raise ValueError(f"{run.mode} kept no trace")
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(run.trace_gz_b64)))
    return data


def read_steps(run: ModeRun) -> list[int]:
    """Kernels per profiled iteration as fusionviz read them (memory operations are not kernels)."""
    iterations = run.summary.iterations if run.summary else 0
    counts = [0] * iterations
    for row in run.kernels:
        if row.kernel_class != MEMORY_CLASS:
            counts[row.iteration] += 1
    return counts


def check_run(session: Session, run: ModeRun, modules: bool) -> tuple[str, list[str]]:
    """One mode's line and its problems: kernel counts step by step against the plain read and, with `modules`,
    the module table's sum against the plain read's kernel µs per step and the model's module names."""
    name = f"{session.config.model} {run.mode}"
    if not run.ok:
        return f"{name}: {run.status}: {run.error}", [f"{name} did not run: {run.error}"]
    raw = raw_steps(trace_of(run))
    ours = read_steps(run)
    problems = []
    if [n for n, _ in raw] != ours:
        problems.append(f"{name}: kernels per step {ours} read, {[n for n, _ in raw]} in the trace")
    line = f"{name}: {ours} kernels per step (trace: {[n for n, _ in raw]})"
    if modules:
        table = module_table(session.runs)
        table = table[table["mode"] == run.mode]
        raw_us = sum(us for _, us in raw) / max(len(raw), 1)
        summed = float(table.kernel_us.sum())
        line += f"; modules add up to {summed:.2f} µs per step (trace: {raw_us:.2f} µs), {len(table)} modules"
        if abs(summed - raw_us) > 1e-6 * max(raw_us, 1.0):
            problems.append(f"{name}: the module table adds up to {summed:.4f} µs per step, the trace to "
                            f"{raw_us:.4f}")
        missing = EXPECTED_MODULES.get(session.config.model, set()) - set(table.module)
        if missing:
            problems.append(f"{name}: no kernel time for {sorted(missing)}")
        if not any(SECOND_BLOCK.search(m) for m in table.module):
            problems.append(f"{name}: no module of a second block among {sorted(table.module)[:12]}")
        if UNKNOWN in set(table.module):
            problems.append(f"{name}: {table[table.module == UNKNOWN].kernels.sum():g} kernels per step without "
                            "a record")
    return line, problems


def check(paths: list[Path], with_modules: set[str]) -> tuple[list[str], list[str]]:
    """Every mode's line and every problem of the sessions at `paths`; a model of `with_modules` without a
    session is a problem."""
    lines, problems = [], []
    seen = set()
    for path in paths:
        session = open_path(path)
        seen.add(session.config.model)
        env = session.environment
        lines.append(f"== {path.name}: {session.config.model} dim {session.config.dim}, batch {session.config.batch}, "
                     f"seq {session.config.seq}, layers {session.config.layers}, {session.config.dtype} on "
                     f"{env.device_name} (torch {env.torch_version}"
                     + "".join(f", {lib} {version}" for lib, version in env.libraries.items()) + ")")
        for run in session.runs:
            line, found = check_run(session, run, session.config.model in with_modules)
            lines.append(f"  {line}")
            problems += found
    problems += [f"{model}: no session" for model in sorted(with_modules - seen)]
    return lines, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    parser.add_argument("--modules", default="hf:gpt2,timm:resnet50",
                        help="models whose module tables are checked (comma-separated)")
    args = parser.parse_args(argv)
    lines, problems = check(args.sessions, {m for m in args.modules.split(",") if m})
    print("\n".join(lines))
    print("\n".join(f"PROBLEM: {p}" for p in problems) if problems else "every check passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
