"""`inspect`'s report of a session or trace, as plain JSON-ready values (the CLI's `--json` contract)."""

from __future__ import annotations

from typing import Any

from fusionviz.analysis.kernel_tables import iteration_kernels
from fusionviz.records.session import ModeRun, Session


def inspect_report(session: Session, name: str) -> dict[str, Any]:
    """`{"source", "runs": [{"label", "device", "iterations", "kernels_per_iteration",
    "gpu_busy_fraction", "kernels": [{"name", "class", "duration_us", "fused_ops"}]}]}`;
    `kernels` lists one iteration's kernels (the representative one) in launch order."""
    env = session.environment
    if session.source == "trace":
        source, device = f"torch.profiler trace {name}", env.device_kind
    else:
        c = session.config
        source = (f"fusionviz session: {c.model}, dim {c.dim}, batch {c.batch}, {c.dtype}, {c.pass_}, "
                  f"captured {env.captured_at} on {env.device_name} with torch {env.torch_version}")
        device = env.device_name or c.device
    return {"source": source, "runs": [_run_report(r, device, env.device_kind) for r in session.runs]}


def _run_report(run: ModeRun, device: str, device_kind: str) -> dict[str, Any]:
    summary = run.summary
    if summary is None:
        return {"label": run.mode, "device": device, "iterations": 0, "kernels_per_iteration": 0.0,
                "gpu_busy_fraction": None, "kernels": []}
    return {
        "label": run.mode, "device": device, "iterations": summary.iterations,
        "kernels_per_iteration": float(summary.kernels_per_iteration),
        "gpu_busy_fraction": summary.busy_fraction if device_kind == "cuda" else None,
        "kernels": [{"name": r.name, "class": r.kernel_class, "duration_us": float(r.dur_us),
                     "fused_ops": list(r.fused_ops)} for r in iteration_kernels(run).itertuples()],
    }
