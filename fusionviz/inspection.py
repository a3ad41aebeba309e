"""`inspect`: one report shape for a session file and for a plain torch.profiler Chrome trace.

No torch import: inspecting a trace costs reading JSON only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from fusionviz.session import SESSION_KIND, Session, SessionFileError, TraceSummary, read_json_bytes
from fusionviz.trace import TraceError, parse_trace


def inspect_file(path: Path) -> dict[str, Any]:
    """`{"source", "runs": [{"label", "device", "iterations", "kernels_per_iteration",
    "gpu_busy_fraction", "kernels": [{"name", "class", "duration_us", "fused_ops"}]}]}`;
    `kernels` lists one iteration's kernels (the representative one) in launch order."""
    data = read_json_bytes(path.read_bytes(), str(path))
    if isinstance(data, dict) and data.get("kind") == SESSION_KIND:
        session = Session.from_dict(data)
        env = session.environment
        runs = [
            _run_report(r.mode, env.device_name or session.config.device, env.device_kind, r.summary,
                        r.kernel_frame())
            for r in session.runs
        ]
        source = (f"fusionviz session: {session.config.model}, dim {session.config.dim}, batch "
                  f"{session.config.batch}, {session.config.dtype}, {session.config.pass_}, "
                  f"captured {env.captured_at} on {env.device_name} with torch {env.torch_version}")
        return {"source": source, "runs": runs}
    try:
        parsed = parse_trace(data)
    except TraceError as exc:
        raise SessionFileError(f"{path} is neither a fusionviz session nor a torch.profiler trace: {exc}") from exc
    device = "cuda" if parsed.device_kind == "cuda" else "cpu"
    return {"source": f"torch.profiler trace {path}",
            "runs": [_run_report(_label(path), device, parsed.device_kind, parsed.summary, parsed.kernels)]}


def _label(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".json"):
        name = name.removesuffix(suffix)
    return name


def _run_report(label: str, device: str, device_kind: str, summary: TraceSummary | None,
                kernels: pd.DataFrame) -> dict[str, Any]:
    if summary is None:
        return {"label": label, "device": device, "iterations": 0, "kernels_per_iteration": 0.0,
                "gpu_busy_fraction": None, "kernels": []}
    one = kernels[kernels.iteration == summary.representative_iteration].sort_values("start_us", kind="stable")
    return {
        "label": label, "device": device, "iterations": summary.iterations,
        "kernels_per_iteration": float(summary.kernels_per_iteration),
        "gpu_busy_fraction": summary.busy_fraction if device_kind == "cuda" else None,
        "kernels": [{"name": r.name, "class": r.kernel_class, "duration_us": float(r.dur_us),
                     "fused_ops": list(r.fused_ops)} for r in one.itertuples()],
    }
